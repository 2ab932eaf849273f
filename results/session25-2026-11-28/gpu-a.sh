#!/usr/bin/env bash
# Session 25, call a (nvidia-h200-x2): where the opening of the second GPU goes for the
# one-shot long launches (PolyBench-ACC gemm 16384^3, 2mm and 3mm at 8192), `auto` over
# both GPUs with CLPRISM_DEBUG=1, natively beside them; lib = .gpu/libOpenCL.so.
# usage (GPU host, repository root): bash results/session25-2026-11-28/gpu-a.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
source .gpu/gpu-env.sh > /dev/null 2>&1
mkdir -p "$OUT"
LIB=.gpu/libOpenCL.so GPUSETS=2 SPLITS=auto DEADLINE_S=400 RUN_TIMEOUT=60 CLPRISM_DEBUG=1 \
  timeout 420 bash bench/multi_gpu.sh /tmp/a gemm 2mm 3mm > "$OUT/progress.txt" 2>&1
cp /tmp/a/table.txt "$OUT/table.txt"
mkdir -p /tmp/a/x && tar xzf /tmp/a/logs.tgz -C /tmp/a/x
for f in /tmp/a/x/logs/*.out; do
  b=$(basename "$f" .out)
  grep -v 'chunk enqueue on' "$f" | head -400 > "$OUT/$b.txt"
done
ls -la "$OUT"
