#!/usr/bin/env bash
# Session 28, call d (nvidia-h200-x4): the corpus measured again with the session's last build
# (.gpu/libOpenCL-s28d.so), natively and in `auto` and `always` over the 4 GPUs, one run each:
# fdtd-long, jacobi-long, BabelStream, clpeak --global-bandwidth, clpeak --compute-sp (the
# matrix products are call c's). bench/multi_gpu.sh's table, reasons and logs.
# usage (GPU host, repository root, `.gpu` carried): bash results/session28-2026-11-28/gpu-d.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
source .gpu/gpu-env.sh > /dev/null 2>&1
LIB=.gpu/libOpenCL-s28d.so GPUSETS=4 SPLITS="auto always" WARM=0 NATIVE=1 DEADLINE_S=400 RUN_TIMEOUT=90 \
  timeout 420 bash bench/multi_gpu.sh /tmp/s28d fdtd-long jacobi-long stream clpeak_bw clpeak_sp > /tmp/s28d.progress 2>&1
cp /tmp/s28d/table.txt /tmp/s28d/reasons.txt "$OUT/" 2>/dev/null
mkdir -p /tmp/s28d/x && tar xzf /tmp/s28d/logs.tgz -C /tmp/s28d/x 2>/dev/null
for f in /tmp/s28d/x/logs/*.out; do
  printf '%-32s %-12s %s\n' "$(basename "$f" .out)" "$(grep -A1 'GPU Time' "$f" | tail -1)" \
    "$(grep -o 'digest: [0-9a-f]*' "$f" | cut -c9-)"
done > "$OUT/kernel-times.txt" 2>&1
tail -3 /tmp/s28d.progress; cat "$OUT/table.txt"
