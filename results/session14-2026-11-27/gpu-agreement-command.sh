#!/bin/bash
# The agreement check (build 4b9f67d) on the GPU host: 1. Rodinia small, three PoCL 5.0 devices,
# natively and balance always ('same': each run's result digest against native's); 2. Rodinia
# large, the H100 first plus PoCL's CPU device, natively and balance always (a GPU + CPU split).
# Device tool, carry .gpu (bundle as gpu-pocl3-command.sh / gpu-rodinia-balance-command.sh).
echo "build $BUILD"
SET=apps REPS=1 MODES="native always" APPS="rd_gaussian rd_hotspot rd_hotspot3D rd_nw rd_srad" BUDGET_S=130 \
  bash results/session14-2026-11-27/gpu-pocl3-command.sh 2>&1 | tail -6 | cut -c1-330
APPS="rd_hotspot rd_lavaMD rd_pathfinder rd_particlefilter rd_lud" REPS=1 MODES="native always" WARM_MODES="native" \
  RUN_TIMEOUT=40 BUDGET_S=260 bash results/session14-2026-11-27/gpu-rodinia-balance-command.sh 2>&1 | grep -v "^inputs" | tail -7 | cut -c1-330
