#!/usr/bin/env bash
# Session 28, call b (nvidia-h200-x2): the app's clFinish served by clprism
# (CLPRISM_BALANCE_EARLY_FINISH), .gpu/libOpenCL-s28b.so (058713f; the split floor's prior
# 0.5 ms, trusted after four later splits), A = off, B = on (the default); fdtd-long and
# jacobi-long in `always` and `auto` over both GPUs, natively once, two rounds alternating;
# bench/timeline.py on A's and B's first `always` round; then gemm, 2mm, 3mm in `auto` twice
# with clprism's cache shared (the second run finds the devices' program binaries cached).
# usage (GPU host, repository root, `.gpu` carried): bash results/session28-2026-11-28/gpu-b.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
L=.gpu/libOpenCL-s28b.so
LIB_A=$L LIB_B=$L ENV_A="CLPRISM_BALANCE_EARLY_FINISH=off" ENV_B="CLPRISM_BALANCE_EARLY_FINISH=on" \
  GPUSETS=2 ROUNDS=2 SPLITS="always auto" APPS="fdtd-long jacobi-long" DEBUG_RUNS=0 \
  DEADLINE_S=330 RUN_TIMEOUT=60 timeout 350 bash bench/gpu_lib_ab.sh /tmp/s28b > /tmp/s28b.progress 2>&1
cp /tmp/s28b/kernel-times.txt "$OUT/ab-kernel-times.txt"
for r in a-1 b-1; do
  mkdir -p /tmp/s28b/x-$r && tar xzf /tmp/s28b/$r/logs.tgz -C /tmp/s28b/x-$r
  for f in /tmp/s28b/x-$r/logs/*.always.*.jsonl; do
    echo "== $r $(basename "$f" .jsonl)"; python3 bench/timeline.py "$f" --skip 50
  done
  for f in /tmp/s28b/x-$r/logs/*.auto.*.jsonl; do
    echo "== $r $(basename "$f" .jsonl)"; python3 bench/balance_launches.py --examples "$f" | cut -c1-700
  done
done > "$OUT/timeline-reasons.txt" 2>&1
source .gpu/gpu-env.sh > /dev/null 2>&1
export CLPRISM_CACHE=/tmp/s28b/cache
for r in 1 2; do
  LIB=$L GPUSETS=2 SPLITS=auto WARM=0 NATIVE=1 CACHE=shared DEADLINE_S=120 RUN_TIMEOUT=60 \
    timeout 130 bash bench/multi_gpu.sh /tmp/s28b/mm-$r gemm 2mm 3mm > /tmp/s28b/mm-$r.progress 2>&1
  cp /tmp/s28b/mm-$r/table.txt "$OUT/mm-$r-table.txt"
done
grep -v "^    slabs" "$OUT/ab-kernel-times.txt"; grep -A3 "summary" "$OUT"/mm-*-table.txt
