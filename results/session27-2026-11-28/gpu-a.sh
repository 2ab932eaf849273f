#!/usr/bin/env bash
# Session 27, call a (nvidia-h200-x2): one build (.gpu/libOpenCL-s27a.so, main at a3f2a3f),
# the halo push switched: A = CLPRISM_BALANCE_PUSH=on (default), B = off; fdtd-long (5,000
# steps, 16384²) and jacobi-long (2,000 steps, 16384²) in `always` and `auto` over both GPUs,
# natively once, two rounds alternating; then bench/timeline.py on one fdtd-long and one
# jacobi-long `always` log of each (device idle time between launches, per kernel).
# usage (GPU host, repository root, `.gpu` carried): bash results/session27-2026-11-28/gpu-a.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL-s27a.so LIB_B=.gpu/libOpenCL-s27a.so ENV_B="CLPRISM_BALANCE_PUSH=off" \
  GPUSETS=2 ROUNDS=2 SPLITS="always auto" APPS="fdtd-long jacobi-long" DEBUG_RUNS=0 \
  DEADLINE_S=420 RUN_TIMEOUT=60 timeout 500 bash bench/gpu_lib_ab.sh /tmp/s27a > /tmp/s27a.progress 2>&1
cp /tmp/s27a/kernel-times.txt "$OUT/"
for v in a-1 b-1; do
  mkdir -p /tmp/s27a/x-$v && tar xzf /tmp/s27a/$v/logs.tgz -C /tmp/s27a/x-$v
  for app in fdtd-long jacobi-long; do
    echo "== $v $app always"
    python3 bench/timeline.py /tmp/s27a/x-$v/logs/$app.always.gpu2.jsonl --skip 50
  done
done > "$OUT/timeline.txt" 2>&1
grep -v "^    slabs" "$OUT/kernel-times.txt"; cat "$OUT/timeline.txt"
