#!/usr/bin/env bash
# CLPRISM_BALANCE_ISSUE serial against parallel (exec::launch::issue) on a multi-GPU host:
# the iterative stencils (fdtd-2d 5,000 steps, jacobi-2d 2,000 steps at 16384²) under
# `always` over GPUSETS, natively once, then each issue mode ROUNDS times, alternating, each
# round's two runs back to back on the same warm machine; a short fdtd-2d under
# CLPRISM_DEBUG=1 in each mode (the halo batch and chunk enqueue timings).
#
# Progress lines go to stdout and OUTDIR/progress.txt as each run ends (a call cut short at
# its limit still has them); the CLPRISM_DEBUG runs use the largest set of GPUSETS only.
#   usage (GPU host, repository root, the bundle of bench/multi_gpu.sh in .gpu/):
#     GPUSETS="2 4" ROUNDS=2 bash bench/gpu_issue_ab.sh OUTDIR
# Writes OUTDIR/{native,serial-R,parallel-R,debug-serial,debug-parallel}/ (multi_gpu.sh's
# table.txt, env.txt, logs.tgz each) and OUTDIR/summary.txt (the rows of every table).
set -u
OUT=${1:?OUTDIR}
GPUSETS=${GPUSETS:-"2 4"}
ROUNDS=${ROUNDS:-2}
APPS=${APPS:-"fdtd-long jacobi-long"}
mkdir -p "$OUT"
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L > "$OUT/gpus.txt" 2>&1
# the warm-up run (WARM) only once: every later run finds the driver's caches warm
# and the native runs without the interposer (LIB names no file)
LIB=/nonexistent DEADLINE_S=${DEADLINE_S:-500} RUN_TIMEOUT=${RUN_TIMEOUT:-60} \
  bash bench/multi_gpu.sh "$OUT/native" $APPS 2>&1 | grep -E '^  ' | sed "s/^/native /" | tee -a "$OUT/progress.txt"
for r in $(seq 1 "$ROUNDS"); do
  for mode in serial parallel; do
    CLPRISM_BALANCE_ISSUE=$mode GPUSETS="$GPUSETS" SPLITS="always" NATIVE=0 \
      WARM=0 DEADLINE_S=${DEADLINE_S:-500} RUN_TIMEOUT=${RUN_TIMEOUT:-60} \
      bash bench/multi_gpu.sh "$OUT/$mode-$r" $APPS 2>&1 | grep -E '^  ' | sed "s/^/$mode-$r /" | tee -a "$OUT/progress.txt"
  done
done
for mode in serial parallel; do
  CLPRISM_BALANCE_ISSUE=$mode CLPRISM_DEBUG=1 GPUSETS="${GPUSETS##* }" SPLITS="always" NATIVE=0 \
    WARM=0 DEADLINE_S=60 RUN_TIMEOUT=40 bash bench/multi_gpu.sh "$OUT/debug-$mode" fdtd-2d > /dev/null 2>&1
done
for t in "$OUT"/*/table.txt; do echo "## $t"; cat "$t"; done > "$OUT/summary.txt"
cat "$OUT/summary.txt"
