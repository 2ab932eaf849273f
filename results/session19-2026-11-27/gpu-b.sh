#!/usr/bin/env bash
# Session 19, second 4-GPU call: the buffer directory (CLPRISM_BALANCE_GATHER=lazy, the
# default) on runs long enough for the devices to open (ten times the steps), natively
# on one GPU and balanced over all 4 GPUs of one 4 x H200 host; then the same in `always` with
# CLPRISM_BALANCE_GATHER=eager (gathering every launch, as before the directory); then gemm in
# auto (the footprint's new samples must not cost it its gain).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="4" SPLITS="always auto" DEADLINE_S=300 RUN_TIMEOUT=80 \
  bash bench/multi_gpu.sh /tmp/r3 stream-long jacobi-long fdtd-long > /dev/null 2>&1
cp /tmp/r3/table.txt "$OUT/long-lazy.txt"
CLPRISM_BALANCE_GATHER=eager GPUSETS="4" SPLITS="always" DEADLINE_S=120 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/r4 stream-long jacobi-long > /dev/null 2>&1
cp /tmp/r4/table.txt "$OUT/long-eager.txt"
GPUSETS="4" SPLITS="auto" DEADLINE_S=60 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/r5 gemm > /dev/null 2>&1
cp /tmp/r5/table.txt "$OUT/gemm-auto.txt"
tar czf "$OUT/s19b.tgz" -C /tmp r3 r4 r5
