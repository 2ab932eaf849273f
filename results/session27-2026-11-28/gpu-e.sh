#!/usr/bin/env bash
# Session 27, call e (nvidia-h200-x4): the corpus on 4 H200s with this session's build
# (.gpu/libOpenCL-s27c.so, 5680ae1): gemm 16384³, 2mm, 3mm 8192, fdtd-long (5,000 steps,
# 16384²), jacobi-long (2,000 steps, 16384²), natively on GPU 0 and in `always` and `auto`
# over the 4 GPUs; then bench/timeline.py on fdtd-long and jacobi-long `always`.
# usage (GPU host, repository root, `.gpu` carried): bash results/session27-2026-11-28/gpu-e.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
source .gpu/gpu-env.sh > /dev/null 2>&1
LIB=.gpu/libOpenCL-s27c.so GPUSETS=4 SPLITS="always auto" WARM=0 DEADLINE_S=400 RUN_TIMEOUT=90 \
  timeout 430 bash bench/multi_gpu.sh /tmp/s27e gemm 2mm 3mm fdtd-long jacobi-long > /tmp/s27e.progress 2>&1
cp /tmp/s27e/table.txt "$OUT/table.txt"; cp /tmp/s27e/reasons.txt "$OUT/reasons.txt" 2>/dev/null
mkdir -p /tmp/s27e/x && tar xzf /tmp/s27e/logs.tgz -C /tmp/s27e/x
for f in /tmp/s27e/x/logs/*.out; do
  printf '%-34s %-12s %s\n' "$(basename "$f" .out)" "$(grep -A1 'GPU Time' "$f" | tail -1)" \
    "$(grep -o 'digest: [0-9a-f]*' "$f" | cut -c9-)"
done > "$OUT/kernel-times.txt"
for app in fdtd-long jacobi-long; do
  echo "== $app always gpu4"; python3 bench/timeline.py /tmp/s27e/x/logs/$app.always.gpu4.jsonl --skip 50
done > "$OUT/timeline.txt" 2>&1
cat "$OUT/kernel-times.txt" "$OUT/timeline.txt"
