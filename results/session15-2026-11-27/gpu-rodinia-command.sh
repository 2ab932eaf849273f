#!/bin/bash
# Issue 18 on one H200 plus PoCL's CPU device (device tool, kind nvidia-h200, carry .gpu;
# results/session14-2026-11-27/gpu-rodinia-balance-command.sh carried as .gpu/rb.sh):
#   call 2 (f6727b1, before the straggler fix):  REPS=1 MODES="native auto always" WARM_MODES="native always" RUN_TIMEOUT=40 BUDGET_S=300
#   call 3 (403db9c, no toolchain carried):      REPS=2 ALWAYS_REPS=2 MODES="native auto always" WARM_MODES="native always" RUN_TIMEOUT=40 BUDGET_S=480
#   call 4 (f312d53, toolchain carried):         APPS="rd_streamcluster rd_bfs rd_hotspot rd_hotspot3D rd_pathfinder rd_srad rd_gaussian" REPS=3 ALWAYS_REPS=3 MODES="native auto always" WARM_MODES="native always" RUN_TIMEOUT=40 BUDGET_S=500
#   call 5 (f312d53 + times.tsv in bench/real_apps.sh): the same 7 apps, REPS=5 MODES="native auto" WARM_MODES="native auto" RUN_TIMEOUT=40 BUDGET_S=520
bash results/session14-2026-11-27/gpu-rodinia-balance-command.sh
