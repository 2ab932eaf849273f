#!/usr/bin/env bash
# As peer-full-command.sh, balance mode with CLPRISM_SPLIT=always and CLPRISM_BALANCE_EARLY=off
# (the devices open at the first launch, so every launch with >= 2
# work-groups is split; the default `auto` keeps piglit's short
# launches whole), against the native results of peer-full/ (copied here, --reuse-native).
# Writes peer-full-always/balance.tsv, table.md and balance.launches.txt (launch records,
# those with chunks on >= 2 devices, fallback reasons). LIB: release build of main at 6891596.
cd "$(dirname "$0")/../.."
LIB=${LIB:-/work/checks-lib/libOpenCL-6891596.so}
OUT=results/session13-2026-11-24/peer-full-always
[ -s "$OUT/native.tsv" ] || cp results/session13-2026-11-24/peer-full/native.tsv "$OUT/"
CLPRISM_TEST_LIB=$LIB POCL_DEVICES="pthread pthread" PEER_CLPRISM_ENV="CLPRISM_SPLIT=always CLPRISM_BALANCE_EARLY=off" \
  nice scripts/peer_suites.sh --reuse-native --out "$OUT" balance
