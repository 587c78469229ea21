#!/usr/bin/env bash
# Installs braid from the build tree into a temporary prefix and builds + runs a separate project
# that finds it with find_package(braid). Usage: check.sh <build-dir> <source-dir>
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$1" --prefix "$tmp/prefix" >/dev/null
cmake -S "$2/tests/package" -B "$tmp/build" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/build" >/dev/null
out=$("$tmp/build/c")
echo "$out"
[ "$out" = "2 sems under RowSync, 2 candidates" ]
