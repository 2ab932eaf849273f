#!/bin/bash
# Issue 18 on the H100 host, the Rodinia apps whose single runs were noisy, three runs per mode
# (medians; native and auto only), H100 first plus PoCL's CPU device (device tool, carry .gpu; bundle as
# gpu-balance-command.sh; build named in the output)
echo "build $BUILD on $(nvidia-smi -L | head -1)"
APPS="rd_gaussian rd_hotspot3D rd_srad rd_nw rd_backprop rd_pathfinder rd_particlefilter rd_lud" REPS=3 MODES="native auto" WARM_MODES="native auto" RUN_TIMEOUT=30 \
  BUDGET_S=540 bash results/session13-2026-11-24/gpu-rodinia-balance-command.sh 2>&1 | grep -v "^inputs"
