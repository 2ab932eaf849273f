#!/bin/sh
# Run every example at its default size; exit non-zero if any fails.
#   examples/run_all.sh [PREFIX COMMAND...]
# The optional prefix is put in front of each program, e.g.
#   examples/run_all.sh env LD_PRELOAD=$PWD/target/debug/libOpenCL.so
#   examples/run_all.sh valgrind -q --error-exitcode=3
# Binaries are taken from $EXAMPLES_BUILD (default: examples/build next to
# this script); they are built with make if that directory is missing.
here=$(cd "$(dirname "$0")" && pwd)
build=${EXAMPLES_BUILD:-$here/build}
progs="matmul_global matmul_local blackscholes nbody transpose reduction fwt floyd_warshall kmeans dct8x8 mt_launch"
if [ ! -d "$build" ]; then
    make -C "$here" >/dev/null || exit 1
fi
failed=""
for p in $progs; do
    if "$@" "$build/$p"; then
        :
    else
        echo "run_all: $p FAILED (exit $?)" >&2
        failed="$failed $p"
    fi
done
if [ -n "$failed" ]; then
    echo "run_all: failed:$failed"
    exit 1
fi
echo "run_all: all passed"
