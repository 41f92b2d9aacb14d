#!/bin/sh
# p2p.sh on tcp alone: make check runs the two transports' halves side by
# side instead of one after the other
P2P_TRANSPORTS=tcp exec bash "$(dirname "$0")/p2p.sh"
