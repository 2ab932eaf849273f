#!/usr/bin/env bash
# Issue 21 benchmark: what log mode costs a launch-heavy app, native against clprism timing
# every launch (CLPRISM_DEVICE_TIMING=all) and the default (adaptive), side by side in one
# run. The app is bench/launches.c (STEPS launches of a small 1-D stencil, no events, one
# clFinish); configurations run interleaved ROUNDS times; each prints one line with the
# median wall time of the launch loop, per launch, the ratio to native, the extra us per
# launch, and how many launches were timed (from the log).
# Target: the default within ~2 us per launch of native.
# Usage: bench/launch_overhead.sh [ROUNDS=5] [STEPS=20000] [ELEMS=65536]
#   CLPRISM_LIB (default target/release/libOpenCL.so), LAUNCHES_EXE (default
#   examples/build/launches), CLPRISM_EXAMPLE_DEVICE=P:D picks the device, CONFIGS the
#   configurations (default "native all adaptive"; any CLPRISM_DEVICE_TIMING value, e.g. off).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}; steps=${2:-20000}; elems=${3:-65536}
lib=${CLPRISM_LIB:-$PWD/target/release/libOpenCL.so}
exe=${LAUNCHES_EXE:-examples/build/launches}
[ -x "$exe" ] || make -s -C bench
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
names=(${CONFIGS:-native all adaptive})
for r in $(seq "$rounds"); do
  for n in "${names[@]}"; do
    if [ "$n" = native ]; then
      "$exe" "$steps" "$elems" 2>/dev/null | grep '^launches' >> "$tmp/$n"
    else
      CLPRISM_MODE=log CLPRISM_DEVICE_TIMING=$n CLPRISM_LOG="$tmp/$n.jsonl" CLPRISM_SUMMARY=off \
        LD_PRELOAD="$lib" "$exe" "$steps" "$elems" 2>/dev/null | grep '^launches' >> "$tmp/$n"
      echo "$(grep -c '"device_ns":[0-9]' "$tmp/$n.jsonl") $(wc -l < "$tmp/$n.jsonl")" >> "$tmp/$n.timed"
    fi
  done
done
median() { # file key
  sed -n "s/.*$2=\([0-9.e+-]*\).*/\1/p" "$1" | sort -g | awk '{a[NR]=$1} END {print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'
}
nat=$(median "$tmp/native" time_ms)
for n in "${names[@]}"; do
  ms=$(median "$tmp/$n" time_ms)
  timed="-"
  [ -f "$tmp/$n.timed" ] && timed=$(awk '{t+=$1; l+=$2} END {printf "%d of %d", t/NR, l/NR}' "$tmp/$n.timed")
  awk -v n="$n" -v ms="$ms" -v nat="$nat" -v s="$steps" -v timed="$timed" 'BEGIN {
    printf "%-9s time_ms=%9.1f us_per_launch=%7.2f ratio=%5.3f extra_us_per_launch=%+6.2f timed=%s\n",
      n, ms, ms * 1e3 / s, ms / nat, (ms - nat) * 1e3 / s, timed }'
done
echo "(median of $rounds interleaved rounds; $exe $steps $elems; device ${CLPRISM_EXAMPLE_DEVICE:-0:0}; lib $lib;"
echo " timed: launches with a device_ns, mean over the rounds, of the log's records)"
