#!/usr/bin/env bash
# The exit stress and hashcat's crack again with the release build of branch checks after
# merging main at 5c0dc45 (fastfwd: the kept-whole balance path reworked), commit 9064860:
# 200 + 200 quick_exit runs (always, auto) with the devices opening in the background, the
# same with CLPRISM_BALANCE_EARLY=off, busy loop per core, three PoCL devices; then hashcat
# natively and in balance always/auto (cold and warm kernel cache), two PoCL devices.
# Output: after-merge.txt.
cd "$(dirname "$0")/../.."
export LIB=${LIB:-/work/checks-lib/libOpenCL-9064860.so} CLPRISM=${CLPRISM:-/work/checks-lib/clprism-9064860}
POCL_DEVICES="pthread pthread basic" RUNS=200 SPLITS="always auto" bench/stress_exit.sh /tmp/stress_exit_m
POCL_DEVICES="pthread pthread basic" RUNS=200 SPLITS="always auto" EARLY=off bench/stress_exit.sh /tmp/stress_exit_m_off
POCL_DEVICES="pthread pthread" REPS=2 MODES="native always auto" bench/hashcat_check.sh /tmp/hashcat_check_m
