#!/usr/bin/env bash
# The transposed epilogue's panel writes by stmatrix .trans (NEW) against the two-byte shared stores
# (OLD): gemm-ab.sh on the GEMMs the attention and MLP tuners give transposed tiles (shapes/transposed.txt).
# (Until the shapes moved to their own file the log was transposed-stsm-ab.log; now gemm-ab.log.)
#   OLD=/tmp/old NEW=/tmp/new OUT=dir BRAID_COMMIT=<hash> NEW_COMMIT=<hash> bash bench/device/transposed-stsm-ab.sh
SHAPES="$(dirname "$0")/shapes/transposed.txt" exec bash "$(dirname "$0")/gemm-ab.sh"
