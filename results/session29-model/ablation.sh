#!/usr/bin/env bash
# Session 29: every figure of README.md, offline (~1 min). Run from the repository root after
# `cargo build --release && cargo test --release --test model_polybench_stats --no-run`:
#   bash results/session29-model/ablation.sh > results/session29-model/ablation.txt
# Corpora: the 11 example apps (14 kernel shapes; H100 and H200, results/gpu-2026-11-22c) and
# PolyBench-ACC LARGE (41 kernels; session 12's H100 and H200 times), 55 kernels x 2 GPUs.
set -euo pipefail
here=results/session29-model
base=${BASE:-87c95ba}   # main when this branch was made
old=/tmp/s29-abl/st-unroll new=/tmp/s29-abl/st-whole mainprof=/tmp/s29-abl/main-profiles
mkdir -p /tmp/s29-abl
bash results/session28-model/make-stats.sh $old > /dev/null
bash $here/make-stats.sh $new > /dev/null
rm -rf $mainprof && mkdir -p $mainprof && cp profiles/*.json $mainprof/
for f in h100-sxm h200; do git show $base:profiles/$f.json > $mainprof/$f.json; done
M=recommended,-load_waits,-store_waits,-in_flight_measured   # main's recommended at $base
R=recommended                                                 # this branch's
ev() { python3 $here/eval.py "$@"; }

echo "## 1. before: main's profiles, session 28's statistics, main's model ($M)"
STATS=$old PROFILES=$mainprof ev $M | tail -1
echo
echo "## 2. + the profiles' kernel_floor_ns (median of every floor measured on each GPU, both tools)"
STATS=$old ev $M | tail -1
echo
echo "## 3. + the five extrapolated PolyBench statistics emulated whole (whole-stats.tgz)"
STATS=$new ev $M | tail -1
echo
echo "## 4. the model options on the final data (this branch's profiles, whole statistics)"
echo "## ($R = $M,+load_waits,+store_waits,+in_flight_measured)"
STATS=$new ev $M $R \
  $R,-load_waits $R,-store_waits $R,-in_flight_measured \
  $M,+store_waits $M,+load_waits $M,+in_flight_measured \
  $R,+streaming_latency $R,+request_in_flight $R,-bytes_in_flight $R,-departure_delay \
  $M,+streaming_latency
echo
echo "## 5. the model change on the other data (each step's effect without the others)"
echo "# session 28's statistics, this branch's profiles:"
STATS=$old ev $M $R | tail -2
echo "# whole statistics, main's profiles:"
STATS=$new PROFILES=$mainprof ev $M $R | tail -2
echo "# session 28's statistics, main's profiles:"
STATS=$old PROFILES=$mainprof ev $M $R | tail -2
echo
echo "## 6. every kernel that moves from 1 (before) to the final figures ($R on the final data)"
echo "## measured us, projected us, signed error; H100 | H200 | ratio H200/H100 measured, projected"
STATS=$old PROFILES=$mainprof ev $M -v > /tmp/s29-abl/before.txt
STATS=$new ev $R -v > /tmp/s29-abl/after.txt
python3 - /tmp/s29-abl/before.txt /tmp/s29-abl/after.txt <<'PY'
import sys
rows = lambda f: dict((l[:48], l) for l in open(f).read().split("## per kernel")[1].splitlines()[1:] if l.strip())
a, b = rows(sys.argv[1]), rows(sys.argv[2])
for k in a:
    if a[k] != b[k]:
        print("before " + a[k]); print("after  " + b[k])
PY
