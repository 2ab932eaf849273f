#!/usr/bin/env bash
# Session 26, call c (nvidia-h200-x2): the pipeline's effect where it should change nothing
# or little: PolyBench gemm 16384³, 2mm and 3mm at 8192, BabelStream (1 GiB arrays, 100
# iterations) and clpeak --compute-sp, `auto` over both GPUs, natively once, then
# CLPRISM_BALANCE_PIPELINE=off and =on (one build, .gpu/libOpenCL-pipe.so, one round).
# usage (GPU host, repository root, `.gpu` carried): bash results/session26-2026-11-28/gpu-c.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
W=/tmp/s26c
source .gpu/gpu-env.sh > /dev/null 2>&1
export LIB=.gpu/libOpenCL-pipe.so GPUSETS=2 WARM=0 RUN_TIMEOUT=60 DEADLINE_S=200 SPLITS=auto
APPS="gemm 2mm 3mm stream clpeak_sp"
NATIVE=1 CLPRISM_BALANCE_PIPELINE=off timeout 230 bash bench/multi_gpu.sh $W/off $APPS > $W.off.progress 2>&1
NATIVE=0 CLPRISM_BALANCE_PIPELINE=on timeout 230 bash bench/multi_gpu.sh $W/on $APPS > $W.on.progress 2>&1
for d in $W/off $W/on; do mkdir -p "$d/x" && tar xzf "$d/logs.tgz" -C "$d/x" 2>/dev/null; done
{
  echo "run app kernel_s digest issued_ahead"
  for f in $W/*/x/logs/*.out; do
    j=${f%.out}.jsonl; n=$(basename "$(dirname "$(dirname "$(dirname "$f")")")")
    echo "$n $(basename "$f" .out) $(grep -A1 'GPU Time' "$f" | tail -1) $(grep -o 'digest: [0-9a-f]*' "$f" | cut -c9-) \
$( [ -f "$j" ] && grep -c '"issued_ahead":true' "$j")"
  done
  # clpeak: each width's GFLOPS; BabelStream: each kernel's MB/s
  for f in $W/*/x/logs/clpeak*.out $W/*/x/logs/stream*.out; do
    echo "== $f"; grep -E "float|Copy|Mul|Add|Triad|Dot" "$f" | head -12
  done
} > $W/summary.txt
for d in $W/off $W/on; do echo "== $(basename "$d")"; cat "$d/table.txt"; done > $W/tables.txt
cp $W/summary.txt $W/tables.txt "$OUT/"
cat "$OUT/summary.txt"
