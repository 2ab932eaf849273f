#!/usr/bin/env bash
# Session 28, call c (nvidia-h200-x4): the session on 4 GPUs. Builds in .gpu/libs-s28c.tar.xz:
# libOpenCL-s27c.so (session 27's last build, 5680ae1) and libOpenCL-s28c.so (3a5780e: the
# split floor's prior, clFinish served by clprism, the polling before sleeping).
#  1. A = s27c, B = s28c: fdtd-long and jacobi-long in `always` and `auto` over 4 GPUs,
#     natively once, two rounds alternating; bench/timeline.py on B's first `always` round.
#  2. s28c with CLPRISM_BALANCE_SPIN=off (A) and on (B, `auto`'s choice on GPUs), `always`,
#     one round.
#  3. gemm, 2mm, 3mm natively and in `auto` and `always` with s28c (fresh cache).
# usage (GPU host, repository root, `.gpu` carried): bash results/session28-2026-11-28/gpu-c.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
tar -C .gpu -xJf .gpu/libs-s28c.tar.xz
A=.gpu/libOpenCL-s27c.so B=.gpu/libOpenCL-s28c.so
LIB_A=$A LIB_B=$B GPUSETS=4 ROUNDS=2 SPLITS="always auto" APPS="fdtd-long jacobi-long" DEBUG_RUNS=0 \
  DEADLINE_S=220 RUN_TIMEOUT=60 timeout 240 bash bench/gpu_lib_ab.sh /tmp/s28c > /tmp/s28c.progress 2>&1
cp /tmp/s28c/kernel-times.txt "$OUT/ab-kernel-times.txt"
mkdir -p /tmp/s28c/x && tar xzf /tmp/s28c/b-1/logs.tgz -C /tmp/s28c/x
for f in /tmp/s28c/x/logs/*.always.*.jsonl; do
  echo "== b-1 $(basename "$f" .jsonl)"; python3 bench/timeline.py "$f" --skip 50
done > "$OUT/timeline.txt" 2>&1
for f in /tmp/s28c/x/logs/*.auto.*.jsonl; do
  echo "== b-1 $(basename "$f" .jsonl)"; python3 bench/balance_launches.py --examples "$f" | cut -c1-700
done > "$OUT/reasons.txt" 2>&1
LIB_A=$B LIB_B=$B ENV_A="CLPRISM_BALANCE_SPIN=off" ENV_B="CLPRISM_BALANCE_SPIN=on" GPUSETS=4 ROUNDS=1 \
  SPLITS=always APPS="fdtd-long jacobi-long" DEBUG_RUNS=0 \
  DEADLINE_S=110 RUN_TIMEOUT=60 timeout 120 bash bench/gpu_lib_ab.sh /tmp/s28c-spin > /tmp/s28c-spin.progress 2>&1
cp /tmp/s28c-spin/kernel-times.txt "$OUT/spin-kernel-times.txt"
source .gpu/gpu-env.sh > /dev/null 2>&1
LIB=$B GPUSETS=4 SPLITS="auto always" WARM=1 NATIVE=1 DEADLINE_S=110 RUN_TIMEOUT=60 \
  timeout 120 bash bench/multi_gpu.sh /tmp/s28c/mm gemm 2mm 3mm > /tmp/s28c/mm.progress 2>&1
cp /tmp/s28c/mm/table.txt "$OUT/mm-table.txt"
grep -v "^    slabs" "$OUT/ab-kernel-times.txt" "$OUT/spin-kernel-times.txt"; grep -A4 summary "$OUT/mm-table.txt"
