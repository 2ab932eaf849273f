#!/usr/bin/env bash
# Two interposer builds A/B on one multi-GPU host: natively once, then LIB_A and LIB_B
# ROUNDS times, alternating, each round's two runs back to back on the same warm machine,
# under SPLITS (default `always`) over GPUSETS; then one short fdtd-2d per build under
# CLPRISM_DEBUG=1 (the halo batch and chunk enqueue timings; DEBUG_RUNS=0 skips them). Prints each run's line as it
# ends and, at the end, every run's kernel time ("GPU Time") and output digest.
#
#   usage (GPU host, repository root, the bundle of bench/multi_gpu.sh in .gpu/):
#     LIB_A=.gpu/libOpenCL-prev.so LIB_B=.gpu/libOpenCL.so GPUSETS=4 ROUNDS=2 \
#       bash bench/gpu_lib_ab.sh OUTDIR
# ENV_A / ENV_B: extra VAR=VALUE words for A's and B's runs (the same build with a variable
# switched: LIB_A=LIB_B, ENV_B="CLPRISM_BALANCE_PUSH=off").
# Writes OUTDIR/{native,a-R,b-R,debug-a,debug-b}/ (multi_gpu.sh's table.txt, env.txt,
# logs.tgz) and OUTDIR/kernel-times.txt.
set -u
OUT=${1:?OUTDIR}
LIB_A=${LIB_A:?LIB_A} LIB_B=${LIB_B:?LIB_B}
GPUSETS=${GPUSETS:-4}
ROUNDS=${ROUNDS:-2}
SPLITS=${SPLITS:-always}
APPS=${APPS:-"fdtd-long jacobi-long"}
mkdir -p "$OUT"
source .gpu/gpu-env.sh > /dev/null 2>&1
runs() { # NAME LIB [env...]: one multi_gpu.sh invocation, its run lines as they end
  local name=$1 lib=$2; shift 2
  env "$@" LIB="$lib" GPUSETS="$GPUSETS" SPLITS="$SPLITS" DEADLINE_S=${DEADLINE_S:-500} \
    RUN_TIMEOUT=${RUN_TIMEOUT:-60} bash bench/multi_gpu.sh "$OUT/$name" $APPS 2>&1 |
    while IFS= read -r l; do case $l in "  "[a-z]*" rc "*) echo "$name $l" ;; esac; done
}
# the table of every run that finished, written again after each invocation so that a caller's
# `timeout` loses at most the runs in progress (it lost session 28 call c's whole table)
table() {
  for d in "$OUT"/*/; do
    mkdir -p /tmp/gpu_lib_ab.$$ && tar xzf "$d/logs.tgz" -C /tmp/gpu_lib_ab.$$ 2>/dev/null || continue
    for f in /tmp/gpu_lib_ab.$$/logs/*.out; do
      [ -f "$f" ] || continue
      printf '%-10s %-30s %-12s %s\n' "$(basename "$d")" "$(basename "$f" .out)" \
        "$(grep -A1 'GPU Time' "$f" | tail -1)" "$(grep -o 'digest: [0-9a-f]*' "$f" | cut -c9-)"
      # the owner-computes slabs the split launches used, and how many launches used each
      j=${f%.out}.jsonl
      [ -f "$j" ] && python3 bench/slab_shares.py "$j"
    done
    rm -rf /tmp/gpu_lib_ab.$$
  done | tee "$OUT/kernel-times.txt"
}
runs native /nonexistent
table > /dev/null
for r in $(seq 1 "$ROUNDS"); do
  runs "a-$r" "$LIB_A" WARM=0 NATIVE=0 ${ENV_A:-}
  table > /dev/null
  runs "b-$r" "$LIB_B" WARM=0 NATIVE=0 ${ENV_B:-}
  table > /dev/null
done
if [ "${DEBUG_RUNS:-1}" = 1 ]; then
  APPS=fdtd-2d GPUSETS=${GPUSETS##* } runs debug-a "$LIB_A" WARM=0 NATIVE=0 CLPRISM_DEBUG=1 ${ENV_A:-}
  APPS=fdtd-2d GPUSETS=${GPUSETS##* } runs debug-b "$LIB_B" WARM=0 NATIVE=0 CLPRISM_DEBUG=1 ${ENV_B:-}
fi
table
