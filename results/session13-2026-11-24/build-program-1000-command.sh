#!/usr/bin/env bash
# piglit's cl-api-build-program 1,000 times in balance mode (issue 18, Checks: it crashed
# once in CI's tests/peer.rs), with the environment scripts/peer_suites.sh gives it (the
# default CLPRISM_SPLIT and CLPRISM_DEVICES, a log file per run, one clprism cache), on
# three unequal PoCL devices as in CI, under a busy loop per core (2 cores, machine shared
# with other jobs). Then 200 runs with CLPRISM_SPLIT=always (the balance devices open
# and the programs are built on them in the background while the test builds and releases
# its programs). Output:
# build-program-1000.txt. LIB: release build of main at 6891596 (= branch checks' src).
cd "$(dirname "$0")/../.."
export LIB=${LIB:-/work/checks-lib/libOpenCL-6891596.so} POCL_DEVICES="pthread pthread basic"
RUNS=1000 MODE=balance bench/stress_piglit.sh /tmp/stress_build_program
RUNS=200 MODE=balance CLPRISM_SPLIT=always bench/stress_piglit.sh /tmp/stress_build_program_always
