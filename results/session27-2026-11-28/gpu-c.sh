#!/usr/bin/env bash
# Session 27, call c (nvidia-h200-x2): where nothing should get slower. A = .gpu/libOpenCL-s26c.so
# (session 26's last build, f465a1c), B = .gpu/libOpenCL-s27b.so (this session: halo push,
# gate before record, bounded remote writes); gemm, 2mm, 3mm, BabelStream (100 iterations)
# in `always` and `auto` over both GPUs, natively once, one round.
# usage (GPU host, repository root, `.gpu` carried): bash results/session27-2026-11-28/gpu-c.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL-s26c.so LIB_B=.gpu/libOpenCL-s27b.so \
  GPUSETS=2 ROUNDS=1 SPLITS="always auto" APPS="gemm 2mm 3mm stream" DEBUG_RUNS=0 \
  DEADLINE_S=330 RUN_TIMEOUT=90 timeout 360 bash bench/gpu_lib_ab.sh /tmp/s27c > /tmp/s27c.progress 2>&1
cp /tmp/s27c/kernel-times.txt "$OUT/"
for d in /tmp/s27c/*/; do echo "== $d"; cat "$d/table.txt" 2>/dev/null; done > "$OUT/tables.txt"
grep -v "^    slabs" "$OUT/kernel-times.txt"
