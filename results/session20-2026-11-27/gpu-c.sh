#!/usr/bin/env bash
# Session 20, third 2-GPU call: does NVIDIA's driver block the enqueuing thread behind a
# user-event-gated barrier (.gpu/ue_block, source in results/session20-2026-11-27/ue_block.c),
# and where the app's thread spends its time per launch (jacobi-2d-imper, always, debug).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
mkdir -p /tmp/nvonly && cp /etc/OpenCL/vendors/nvidia.icd /tmp/nvonly/
OCL_ICD_VENDORS=/tmp/nvonly ./.gpu/ue_block > "$OUT/c-ue-block.txt" 2>&1
cat "$OUT/c-ue-block.txt"
cd .gpu/mgpu/jacobi-2d-imper && OCL_ICD_VENDORS=/tmp/nvonly CLPRISM_MODE=balance CLPRISM_DEVICES=gpu:2 CLPRISM_SPLIT=always CLPRISM_DEBUG=1 \
  LD_PRELOAD=$(readlink -f ../../libOpenCL.so) timeout 60 ./jacobi-2d-imper.exe > "$OUT/c-jacobi-debug.out" 2> /tmp/dbg.txt
grep -E "launch (3[0-9][0-9])|try_balance 3[0-9][0-9]|batch" /tmp/dbg.txt | head -150 > "$OUT/c-jacobi-debug-excerpt.txt"
wc -l /tmp/dbg.txt; gzip -c /tmp/dbg.txt > "$OUT/c-debug.txt.gz"
