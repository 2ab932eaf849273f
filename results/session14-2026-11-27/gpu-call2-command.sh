#!/bin/bash
# H100 call 2: clpeak / clFFT / CLBlast in project mode (gpu-project-command.sh PART=apps), then
# Rodinia's hotspot and bfs (the two apps above 1.05 last session) natively and in balance auto,
# 7 interleaved runs each, the H100 first plus PoCL's CPU device.
echo "build $BUILD on $(nvidia-smi -L | head -1)"
PART=apps DEADLINE_S=250 bash results/session14-2026-11-27/gpu-project-command.sh | tail -11
APPS="rd_hotspot rd_bfs rd_srad" REPS=7 MODES="native auto" WARM_MODES="native auto" RUN_TIMEOUT=40 BUDGET_S=250 \
  bash results/session14-2026-11-27/gpu-rodinia-balance-command.sh 2>&1 | grep -v "^inputs"
