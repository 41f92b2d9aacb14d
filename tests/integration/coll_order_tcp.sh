#!/bin/sh
# coll_order.sh on tcp alone: make check runs the two transports' halves
# side by side instead of one after the other
ORDER_TRANSPORTS=tcp exec bash "$(dirname "$0")/coll_order.sh"
