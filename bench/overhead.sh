#!/usr/bin/env bash
# Issue 2 benchmark: per-call overhead of clprism, measured side by side in one run.
# Runs examples/build/overhead natively and under clprism in several configurations, ROUNDS
# times interleaved, and prints the median ns per call of each and the extra ns per call
# against native.
# Configurations (columns): off; log (default: every launch timed); log with
# CLPRISM_DEVICE_TIMING=sample:100; log with CLPRISM_DEVICE_TIMING=off; and, with
# OVERHEAD_OLD_POLL=1, log with the writer polling events on every message
# (CLPRISM_LOG_POLL_US=0, the behaviour before rate limiting).
# Targets: <= 20 ns extra per forwarded call; <= 2 us extra per launch in log mode.
# Usage: bench/overhead.sh [ROUNDS=5] [SCALE=1.0]     (wall-clock figures count only on a GPU machine)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}; scale=${2:-1.0}
lib=${CLPRISM_LIB:-$PWD/target/release/libOpenCL.so}
exe=${OVERHEAD_EXE:-examples/build/overhead}
[ -x "$exe" ] || make -s -C examples bench
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
names=(off log sample100 untimed)
envs=("CLPRISM_MODE=off" "CLPRISM_MODE=log" "CLPRISM_MODE=log CLPRISM_DEVICE_TIMING=sample:100"
      "CLPRISM_MODE=log CLPRISM_DEVICE_TIMING=off")
if [ "${OVERHEAD_OLD_POLL:-0}" = 1 ]; then
  names+=(log_oldpoll); envs+=("CLPRISM_MODE=log CLPRISM_LOG_POLL_US=0")
fi
for r in $(seq "$rounds"); do
  "$exe" "$scale" | grep '^overhead' >> "$tmp/native"
  for i in "${!names[@]}"; do
    env ${envs[$i]} CLPRISM_LOG="$tmp/log.jsonl" CLPRISM_SUMMARY=off LD_PRELOAD="$lib" \
      "$exe" "$scale" | grep '^overhead' >> "$tmp/${names[$i]}"
  done
done
median() { # file key
  sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$1" | sort -g | awk '{a[NR]=$1} END {print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'
}
printf "%-28s %10s" "call (ns per call)" "native"
for n in "${names[@]}"; do printf " %12s" "$n"; done; echo
for key in getplatforminfo_ns setkernelarg_ns enqueue_ns enqueue_event_ns enqueue_profiled_ns enqueue_profiled_noevent_ns; do
  nat=$(median "$tmp/native" $key)
  printf "%-28s %10.1f" "$key" "$nat"
  for n in "${names[@]}"; do
    v=$(median "$tmp/$n" $key)
    awk -v v="$v" -v b="$nat" 'BEGIN {printf " %+12.1f", v-b}'
  done
  echo
done
echo "(columns after native: extra ns per call against native; median of $rounds interleaved rounds;"
echo " device: ${CLPRISM_EXAMPLE_DEVICE:-0:0}; lib: $lib)"
echo "enqueue_ns: empty kernel, app passes no event (the target row)"
echo "enqueue_event_ns: the app asks for an event per launch (what the driver charges for it)"
echo "enqueue_profiled_ns: the same on a queue the app created with profiling (driver's profiling cost)"
echo "enqueue_profiled_noevent_ns: that profiled queue, no event"
