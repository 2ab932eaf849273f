#!/usr/bin/env bash
# Session 28, call a (nvidia-h200-x2): the GPU's assumed split floor in `auto`
# (CLPRISM_BALANCE_SPLIT_FLOOR, .gpu/libOpenCL-s28a.so), A = 1000 us (the default) against
# B = 500 us and C = 300 us; fdtd-long (5,000 steps, 16384²) and jacobi-long (2,000 steps), natively once, two
# rounds alternating; then gemm, 2mm, 3mm in `auto` under CLPRISM_DEBUG=1 (where the first launch's
# time goes).
# usage (GPU host, repository root, `.gpu` carried): bash results/session28-2026-11-28/gpu-a.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
L=.gpu/libOpenCL-s28a.so
LIB_A=$L LIB_B=$L ENV_A="CLPRISM_BALANCE_SPLIT_FLOOR=1000" ENV_B="CLPRISM_BALANCE_SPLIT_FLOOR=500" \
  GPUSETS=2 ROUNDS=2 SPLITS=auto APPS="fdtd-long jacobi-long" DEBUG_RUNS=0 \
  DEADLINE_S=300 RUN_TIMEOUT=60 timeout 320 bash bench/gpu_lib_ab.sh /tmp/s28a > /tmp/s28a.progress 2>&1
cp /tmp/s28a/kernel-times.txt "$OUT/ab-kernel-times.txt"
# C: 300 us, two rounds (natively in the first call above)
source .gpu/gpu-env.sh > /dev/null 2>&1
for r in 1 2; do
  CLPRISM_BALANCE_SPLIT_FLOOR=300 LIB=$L GPUSETS=2 SPLITS=auto WARM=0 NATIVE=0 DEADLINE_S=100 RUN_TIMEOUT=60 \
    timeout 110 bash bench/multi_gpu.sh /tmp/s28a/c-$r fdtd-long jacobi-long > /tmp/s28a/c-$r.progress 2>&1
done
for d in /tmp/s28a/c-*/; do
  mkdir -p /tmp/x.$$ && tar xzf "$d/logs.tgz" -C /tmp/x.$$ 2>/dev/null || continue
  for f in /tmp/x.$$/logs/*.out; do
    printf '%-10s %-30s %-12s %s\n' "$(basename "$d")" "$(basename "$f" .out)" \
      "$(grep -A1 'GPU Time' "$f" | tail -1)" "$(grep -o 'digest: [0-9a-f]*' "$f" | cut -c9-)"
  done
  rm -rf /tmp/x.$$
done > "$OUT/c-kernel-times.txt"
# the reasons of A's, B's and C's first rounds
for d in /tmp/s28a/a-1 /tmp/s28a/b-1 /tmp/s28a/c-1; do
  mkdir -p /tmp/y && rm -rf /tmp/y/* && tar xzf $d/logs.tgz -C /tmp/y
  for f in /tmp/y/logs/*.jsonl; do echo "== $(basename $d) $(basename $f)"; python3 bench/balance_launches.py --examples "$f" 2>&1 | head -30; done
done > "$OUT/reasons.txt" 2>&1
# gemm, 2mm, 3mm under CLPRISM_DEBUG=1
CLPRISM_DEBUG=1 LIB=$L GPUSETS=2 SPLITS=auto WARM=1 NATIVE=1 DEADLINE_S=120 RUN_TIMEOUT=60 \
  timeout 130 bash bench/multi_gpu.sh /tmp/s28a/mm gemm 2mm 3mm > /tmp/s28a/mm.progress 2>&1
cp /tmp/s28a/mm/logs.tgz "$OUT/mm-logs.tgz"; cp /tmp/s28a/mm/table.txt "$OUT/mm-table.txt" 2>/dev/null
cat "$OUT/ab-kernel-times.txt" "$OUT/c-kernel-times.txt" "$OUT/mm-table.txt"; tail -5 /tmp/s28a.progress
