#!/usr/bin/env bash
# piglit's whole OpenCL suite (every test of piglit's `cl` profile, tests/cl.xml.gz, and
# their subtests: scripts/peer_suites.sh without --quick) plus pyopencl's tests and
# examples, natively and in balance mode on two PoCL devices, under nice in the background
# on the 2-core machine shared with other jobs (2026-11-24). Writes peer-full/*.tsv and
# peer-full/table.md. LIB: release build of main at 6891596 (CARGO_TARGET_DIR=/work/tgt-checks
# cargo build --release), copied aside so that later rebuilds cannot touch it mid-run.
cd "$(dirname "$0")/../.."
LIB=${LIB:-/work/checks-lib/libOpenCL-6891596.so}
OUT=results/session13-2026-11-24/peer-full
# native runs first (the reference), then balance; a rerun of balance alone adds --reuse-native.
CLPRISM_TEST_LIB=$LIB POCL_DEVICES="pthread pthread" nice scripts/peer_suites.sh $REUSE --out "$OUT" balance
