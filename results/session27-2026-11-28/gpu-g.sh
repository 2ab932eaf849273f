#!/usr/bin/env bash
# Session 27, call g (nvidia-h200-x4): on 4 GPUs the launch thread is busy for longer than
# the kernels (call f: four chunk enqueues ~200 µs per launch, a gated halo batch of 6 ranges
# 222 µs); does issuing from a thread per device help now? One build (.gpu/libOpenCL-s27c.so),
# A = CLPRISM_BALANCE_ISSUE=serial (default), B = parallel; fdtd-long `always`, natively once,
# two rounds alternating.
# usage (GPU host, repository root, `.gpu` carried): bash results/session27-2026-11-28/gpu-g.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL-s27c.so LIB_B=.gpu/libOpenCL-s27c.so ENV_B="CLPRISM_BALANCE_ISSUE=parallel" \
  GPUSETS=4 ROUNDS=2 SPLITS="always" APPS="fdtd-long" DEBUG_RUNS=0 \
  DEADLINE_S=200 RUN_TIMEOUT=60 timeout 230 bash bench/gpu_lib_ab.sh /tmp/s27g > /tmp/s27g.progress 2>&1
cp /tmp/s27g/kernel-times.txt "$OUT/"
grep -v "^    slabs" "$OUT/kernel-times.txt"
