#!/bin/sh
# coll_matrix.sh on tcp alone: make check runs the two transports' halves
# of the matrix side by side instead of one after the other
COLL_TRANSPORTS=tcp exec bash "$(dirname "$0")/coll_matrix.sh"
