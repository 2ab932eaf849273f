#!/usr/bin/env bash
# Session 19, 4-GPU call: the buffer directory (CLPRISM_BALANCE_GATHER=lazy, the default)
# on the memory-bound and iterative apps of issue 31, natively on one GPU and balanced over
# all 4 GPUs of one 4 x H200 host, CLPRISM_SPLIT=always and auto; then BabelStream and
# jacobi with CLPRISM_BALANCE_GATHER=eager (the behaviour before the directory) in always.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="4" SPLITS="always auto" DEADLINE_S=330 RUN_TIMEOUT=80 \
  bash bench/multi_gpu.sh /tmp/r1 stream jacobi-2d-imper fdtd-2d > /dev/null 2>&1
cp /tmp/r1/table.txt "$OUT/lazy.txt"
CLPRISM_BALANCE_GATHER=eager GPUSETS="4" SPLITS="always" DEADLINE_S=150 RUN_TIMEOUT=70 \
  bash bench/multi_gpu.sh /tmp/r2 stream jacobi-2d-imper > /dev/null 2>&1
cp /tmp/r2/table.txt "$OUT/eager.txt"
tar czf "$OUT/s19.tgz" -C /tmp r1 r2
