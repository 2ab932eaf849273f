#!/usr/bin/env bash
# Session 29: the statistics tree the figures use (DIR, default /tmp/s29/st-whole): session
# 28's (results/session28-model/make-stats.sh: session 27b's stored statistics with the
# unrolling front end's instruction counts) with the five PolyBench-ACC kernels whose stored
# statistics were extrapolated replaced by their whole-work-group emulation
# (whole-stats.tgz, made by emulate-whole.sh; transplant-whole.py checks the method first).
# Offline, seconds. Run from the repository root.
set -euo pipefail
here=results/session29-model
dir=${1:-/tmp/s29/st-whole}
bash results/session28-model/make-stats.sh "$dir" > /dev/null
tar xzf $here/whole-stats.tgz -C "$dir"
python3 $here/transplant-whole.py "$dir" "$dir/whole"
