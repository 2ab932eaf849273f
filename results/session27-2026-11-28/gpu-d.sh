#!/usr/bin/env bash
# Session 27, call d (nvidia-h200-x2): the session's figures. A = .gpu/libOpenCL-s26c.so
# (session 26's last build, f465a1c), B = .gpu/libOpenCL-s27c.so (5680ae1: halo push capped,
# gate before record, bounded remote writes); fdtd-long (5,000 steps, 16384²) and jacobi-long
# (2,000 steps, 16384²) in `always` and `auto` over both GPUs, natively once, two rounds
# alternating; bench/timeline.py on B's first round.
# usage (GPU host, repository root, `.gpu` carried): bash results/session27-2026-11-28/gpu-d.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL-s26c.so LIB_B=.gpu/libOpenCL-s27c.so \
  GPUSETS=2 ROUNDS=2 SPLITS="always auto" APPS="fdtd-long jacobi-long" DEBUG_RUNS=0 \
  DEADLINE_S=420 RUN_TIMEOUT=60 timeout 450 bash bench/gpu_lib_ab.sh /tmp/s27d > /tmp/s27d.progress 2>&1
cp /tmp/s27d/kernel-times.txt "$OUT/"
mkdir -p /tmp/s27d/x && tar xzf /tmp/s27d/b-1/logs.tgz -C /tmp/s27d/x
for f in /tmp/s27d/x/logs/*.jsonl; do
  echo "== b-1 $(basename "$f" .jsonl)"; python3 bench/timeline.py "$f" --skip 50
done > "$OUT/timeline.txt" 2>&1
grep -v "^    slabs" "$OUT/kernel-times.txt"; cat "$OUT/timeline.txt"
