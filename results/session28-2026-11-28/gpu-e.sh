#!/usr/bin/env bash
# Session 28, call e (nvidia-h200-x4): call c's build (A = s28c, 3a5780e, from .gpu/s28c.tar.xz)
# against the last build (B = s28d, ad29506: no start barrier on a quiet queue, issue 32's
# emulator unrolling merged), fdtd-long and jacobi-long in `always` over 4 GPUs, natively once,
# two rounds alternating: whether call d's lower jacobi-2d figure (1.46x, c: 1.60x) is the
# build or the run.
# usage (GPU host, repository root, `.gpu` carried): bash results/session28-2026-11-28/gpu-e.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
tar -C .gpu -xJf .gpu/s28c.tar.xz
LIB_A=.gpu/libOpenCL-s28c.so LIB_B=.gpu/libOpenCL-s28d.so GPUSETS=4 ROUNDS=2 SPLITS=always \
  APPS="fdtd-long jacobi-long" DEBUG_RUNS=0 DEADLINE_S=230 RUN_TIMEOUT=60 \
  timeout 250 bash bench/gpu_lib_ab.sh /tmp/s28e > /tmp/s28e.progress 2>&1
cp /tmp/s28e/kernel-times.txt "$OUT/" 2>/dev/null || tail -20 /tmp/s28e.progress
grep -v "^    slabs" "$OUT/kernel-times.txt"
