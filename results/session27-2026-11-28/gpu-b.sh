#!/usr/bin/env bash
# Session 27, call b (nvidia-h200-x2): A = .gpu/libOpenCL-s27a.so (a3f2a3f: the halo push),
# B = .gpu/libOpenCL-s27b.so (the app's queue let go before the launch's record is written,
# a remote write bounded, schedule.issued_ns), both with the push on; fdtd-long and
# jacobi-long in `always` over both GPUs, natively once, two rounds alternating; then
# bench/timeline.py on B's logs, and one jacobi-2d-imper (200 steps) with B and
# CLPRISM_DEBUG=1 (the timeline of launches 200-203).
# usage (GPU host, repository root, `.gpu` carried): bash results/session27-2026-11-28/gpu-b.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL-s27a.so LIB_B=.gpu/libOpenCL-s27b.so \
  GPUSETS=2 ROUNDS=2 SPLITS="always" APPS="fdtd-long jacobi-long" DEBUG_RUNS=0 \
  DEADLINE_S=300 RUN_TIMEOUT=60 timeout 330 bash bench/gpu_lib_ab.sh /tmp/s27b > /tmp/s27b.progress 2>&1
cp /tmp/s27b/kernel-times.txt "$OUT/"
for v in b-1 b-2; do
  mkdir -p /tmp/s27b/x-$v && tar xzf /tmp/s27b/$v/logs.tgz -C /tmp/s27b/x-$v
  for app in fdtd-long jacobi-long; do
    echo "== $v $app always"
    python3 bench/timeline.py /tmp/s27b/x-$v/logs/$app.always.gpu2.jsonl --skip 50
  done
done > "$OUT/timeline.txt" 2>&1
source .gpu/gpu-env.sh > /dev/null 2>&1
LIB=.gpu/libOpenCL-s27b.so GPUSETS=2 WARM=0 NATIVE=0 SPLITS=always CLPRISM_DEBUG=1 RUN_TIMEOUT=60 \
  timeout 60 bash bench/multi_gpu.sh /tmp/s27b/debug jacobi-2d-imper > /tmp/s27b/debug.progress 2>&1
mkdir -p /tmp/s27b/debug/x && tar xzf /tmp/s27b/debug/logs.tgz -C /tmp/s27b/debug/x
sed -n '/launch 200: on/,/launch 204: on/p' /tmp/s27b/debug/x/logs/jacobi-2d-imper.always.gpu2.out | head -120 > "$OUT/debug-jacobi.txt"
grep -v "^    slabs" "$OUT/kernel-times.txt"; cat "$OUT/timeline.txt"
