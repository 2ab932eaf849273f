#!/usr/bin/env bash
# Exit stress (issue 18, Checks): quick_exit (build, one launch, exit at once) in balance
# mode on three unequal PoCL devices, under a busy loop per core (2 cores, machine shared
# with other jobs), each run killed after 60 s (a hang):
#   200 runs with CLPRISM_SPLIT=always and 200 with auto (devices opened in the background:
#   the app exits while they open), warm caches;
#   the same with CLPRISM_BALANCE_EARLY=off (devices opened at the launch: the launch takes
#   the balanced path, and the exit meets its abandoned chunks and the builds after it);
#   50 runs with always on empty PoCL and clprism caches (the app's build is the process's
#   first LLVM compile).
# Output: stress-exit.txt. LIB: release build of main at 6891596 (= branch checks' src).
cd "$(dirname "$0")/../.."
export LIB=${LIB:-/work/checks-lib/libOpenCL-6891596.so} POCL_DEVICES="pthread pthread basic"
RUNS=200 SPLITS="always auto" bench/stress_exit.sh /tmp/stress_exit
RUNS=200 SPLITS="always auto" EARLY=off bench/stress_exit.sh /tmp/stress_exit_early_off
RUNS=50 SPLITS="always" COLD=1 bench/stress_exit.sh /tmp/stress_exit_cold
