#!/usr/bin/env bash
# Issue 2 benchmark: per-call overhead of clprism, measured side by side in one run.
# Runs examples/build/overhead natively, under clprism in off mode and in log mode, ROUNDS
# times interleaved, and prints the median ns per call of each and the extra ns per call.
# Targets: <= 20 ns extra per forwarded call; <= 2 us extra per launch in log mode.
# Usage: bench/overhead.sh [ROUNDS=5] [SCALE=1.0]     (wall-clock figures count only on a GPU machine)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}; scale=${2:-1.0}
lib=${CLPRISM_LIB:-$PWD/target/release/libOpenCL.so}
exe=${OVERHEAD_EXE:-examples/build/overhead}
[ -x "$exe" ] || make -s -C examples bench
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
  "$exe" "$scale" | grep '^overhead' >> "$tmp/native"
  CLPRISM_MODE=off LD_PRELOAD="$lib" "$exe" "$scale" | grep '^overhead' >> "$tmp/off"
  CLPRISM_MODE=log CLPRISM_LOG="$tmp/log.jsonl" CLPRISM_SUMMARY=off LD_PRELOAD="$lib" "$exe" "$scale" | grep '^overhead' >> "$tmp/log"
done
median() { # file key
  sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$1" | sort -g | awk '{a[NR]=$1} END {print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'
}
printf "%-18s %10s %10s %10s %12s %12s\n" "call" "native ns" "off ns" "log ns" "off extra" "log extra"
for key in getplatforminfo_ns setkernelarg_ns enqueue_ns enqueue_event_ns enqueue_profiled_ns; do
  n=$(median "$tmp/native" $key); o=$(median "$tmp/off" $key); l=$(median "$tmp/log" $key)
  awk -v k="$key" -v n="$n" -v o="$o" -v l="$l" 'BEGIN {printf "%-18s %10.1f %10.1f %10.1f %+12.1f %+12.1f\n", k, n, o, l, o-n, l-n}'
done
echo "(median of $rounds interleaved rounds; device: ${CLPRISM_EXAMPLE_DEVICE:-0:0}; lib: $lib)"
echo "enqueue_event_ns: the app itself asks for an event per launch (what the driver charges for it)"
echo "enqueue_profiled_ns: the same on a queue the app created with profiling (what the driver charges for profiling)"
