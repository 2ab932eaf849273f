#!/bin/sh
# Run every example twice with --dump and check the two output files are
# byte-identical (determinism). Dumps are left in OUTDIR as NAME.1.bin and
# NAME.2.bin, so runs under different devices or with/without an interposer
# can be compared afterwards with cmp.
#   examples/dump_check.sh OUTDIR [PREFIX COMMAND...]
here=$(cd "$(dirname "$0")" && pwd)
build=${EXAMPLES_BUILD:-$here/build}
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [PREFIX...]" >&2; exit 1; }
out=$1
shift
mkdir -p "$out" || exit 1
progs="matmul_global matmul_local blackscholes nbody transpose reduction fwt floyd_warshall kmeans dct8x8 mt_launch"
status=0
for p in $progs; do
    for i in 1 2; do
        if ! "$@" "$build/$p" --dump "$out/$p.$i.bin" >"$out/$p.$i.log" 2>&1; then
            echo "dump_check: $p run $i FAILED (see $out/$p.$i.log)"
            status=1
        fi
    done
    if cmp -s "$out/$p.1.bin" "$out/$p.2.bin"; then
        echo "dump_check: $p identical ($(wc -c <"$out/$p.1.bin") bytes)"
    else
        echo "dump_check: $p DIFFERS between runs"
        status=1
    fi
done
exit $status
