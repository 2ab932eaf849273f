#!/usr/bin/env bash
# Session 30, call i (nvidia-h200-x4): issue 31's corpus with this session's last build
# (f07fff9: opening at the app's context by default behind the open gate, NDRange queries per
# kernel, clCreateContextFromType opening), natively on one GPU and in `auto` and `always` over
# GPUSETS (default "2 4"; run with GPUSETS=2 on nvidia-h200-x2 when no x4 was lent), every run a first run on the machine (NV_CACHE=fresh), one run per cell.
# usage (GPU host, repository root, `.gpu` carried): bash results/session30-2026-11-28/gpu-i.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
tar -C .gpu -xJf .gpu/lib-s30i.tar.xz
source .gpu/gpu-env.sh > /dev/null 2>&1
NV_CACHE=fresh WARM=0 GPUSETS="${GPUSETS:-2 4}" SPLITS="auto always" DEADLINE_S=545 RUN_TIMEOUT=60 \
  LIB=.gpu/libOpenCL-s30i.so timeout 570 bash bench/multi_gpu.sh /tmp/s30i \
  gemm 2mm 3mm stream clpeak_sp clpeak_bw jacobi-long fdtd-long > /tmp/s30i.progress 2>&1
cp /tmp/s30i/table.txt /tmp/s30i/reasons.txt /tmp/s30i/env.txt "$OUT/" 2>/dev/null
mkdir -p /tmp/s30i/x && tar xzf /tmp/s30i/logs.tgz -C /tmp/s30i/x 2>/dev/null
for f in /tmp/s30i/x/logs/*.out; do echo "-- $(basename $f)"; grep -E "^(Copy|Mul|Add|Triad|Dot) |float|digest" $f; grep -A1 "GPU Time" $f | tail -1; done > "$OUT/figures.txt" 2>&1
cat "$OUT/table.txt"
