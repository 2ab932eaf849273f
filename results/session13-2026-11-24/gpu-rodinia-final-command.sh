#!/bin/bash
# Issue 18, the final build on the H100 host: every Rodinia app natively and in balance auto,
# three runs each (medians), H100 first plus PoCL's CPU device, caches warmed by one native
# and one auto run (device tool, carry .gpu; bundle as gpu-balance-command.sh)
echo "build $BUILD on $(nvidia-smi -L | head -1)"
REPS=3 MODES="native auto" WARM_MODES="native auto" RUN_TIMEOUT=40 BUDGET_S=560 \
  bash results/session13-2026-11-24/gpu-rodinia-balance-command.sh 2>&1 | grep -v "^inputs"
