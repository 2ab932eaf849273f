#!/usr/bin/env bash
# As peer-full-always-command.sh (whole piglit cl profile + pyopencl, balance mode with
# CLPRISM_SPLIT=always CLPRISM_BALANCE_EARLY=off, two PoCL devices, against peer-full's
# native results), with the release build of branch checks after merging main (9064860).
cd "$(dirname "$0")/../.."
LIB=${LIB:-/work/checks-lib/libOpenCL-9064860.so}
OUT=results/session13-2026-11-24/peer-full-always-9064860
[ -s "$OUT/native.tsv" ] || cp results/session13-2026-11-24/peer-full/native.tsv "$OUT/"
CLPRISM_TEST_LIB=$LIB POCL_DEVICES="pthread pthread" PEER_CLPRISM_ENV="CLPRISM_SPLIT=always CLPRISM_BALANCE_EARLY=off" \
  nice scripts/peer_suites.sh --reuse-native --out "$OUT" balance
