#!/usr/bin/env bash
# Session 29, call c (nvidia-h200-x4): the corpus of bench/multi_gpu.sh with the session's last
# build (591b0db: the host rate once per model of device, the scout alone as the probe on
# ready devices), natively and in `auto` and `always` over 4 GPUs, then over 2 of them; every
# run a first run on the machine (NV_CACHE=fresh, CACHE=fresh), one run per cell.
# usage (GPU host, repository root, `.gpu` carried): bash results/session29-2026-11-28/gpu-c.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
tar -C .gpu -xJf .gpu/lib-s29c.tar.xz
source .gpu/gpu-env.sh > /dev/null 2>&1
NV_CACHE=fresh WARM=0 GPUSETS="4 2" SPLITS="auto always" DEADLINE_S=530 RUN_TIMEOUT=70 \
  LIB=.gpu/libOpenCL.so timeout 560 bash bench/multi_gpu.sh /tmp/s29c \
  gemm 2mm 3mm fdtd-long jacobi-long stream clpeak_sp clpeak_bw > /tmp/s29c.progress 2>&1
cp /tmp/s29c/table.txt /tmp/s29c/reasons.txt "$OUT/" 2>/dev/null
mkdir -p /tmp/s29c/x && tar xzf /tmp/s29c/logs.tgz -C /tmp/s29c/x 2>/dev/null
for f in /tmp/s29c/x/logs/*.out; do
  printf '%-34s %-12s %s\n' "$(basename $f .out)" "$(grep -A1 'GPU Time' $f | tail -1)" \
    "$(grep -o 'digest: [0-9a-f]*' $f | cut -c9-)"
done > "$OUT/kernel-times.txt"
cat "$OUT/table.txt" | head -150
cat "$OUT/kernel-times.txt"
