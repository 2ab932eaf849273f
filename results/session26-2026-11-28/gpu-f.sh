#!/usr/bin/env bash
# Session 26, call f (nvidia-h200-x2): A = .gpu/libOpenCL-s26.so (main at 82fbcb9) against
# B = .gpu/libOpenCL-s26b.so (the GPU split floor's prior 0.25 ms per device: 0.5 ms over
# 2 GPUs, was 1 ms), `auto` over both GPUs, one round, natively once: jacobi-2d (2,000 steps),
# fdtd-2d (5,000 steps), gemm, 2mm, 3mm, clpeak --compute-sp.
# usage (GPU host, repository root, `.gpu` carried): bash results/session26-2026-11-28/gpu-f.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL-s26.so LIB_B=.gpu/libOpenCL-s26b.so GPUSETS=2 ROUNDS=1 SPLITS=auto \
  APPS="jacobi-long fdtd-long gemm 2mm 3mm clpeak_sp" DEBUG_RUNS=0 DEADLINE_S=200 RUN_TIMEOUT=60 \
  timeout 480 bash bench/gpu_lib_ab.sh /tmp/s26f > /tmp/s26f.progress 2>&1
cp /tmp/s26f/kernel-times.txt "$OUT/"
for d in /tmp/s26f/*/; do echo "== $(basename "$d")"; cat "$d/table.txt"; done > "$OUT/tables.txt"
for d in /tmp/s26f/*/; do mkdir -p "$d/x" && tar xzf "$d/logs.tgz" -C "$d/x" 2>/dev/null
  for f in "$d"/x/logs/clpeak*.out; do echo "== $(basename "$d") $(basename "$f")"; grep -E "^ +float" "$f"; done
done > "$OUT/clpeak.txt"
cat "$OUT/kernel-times.txt" "$OUT/clpeak.txt"
