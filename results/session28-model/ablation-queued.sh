#!/usr/bin/env bash
# Session 28b: the figures of README.md's "queued floor" section, offline (~15 s). Run from
# the repository root after
# `cargo build --release && cargo test --release --test model_polybench_stats --no-run`:
#   bash results/session28-model/ablation-queued.sh > results/session28-model/ablation-queued.txt
set -euo pipefail
here=results/session28-model
st=/tmp/s28b-unroll
bash $here/make-stats.sh $st > /dev/null
echo "## the two floors from the launches of examples/mt_launch's tag (queued-floor.py)"
python3 $here/queued-floor.py
echo
echo "## before (recommended,-queued_floor) and after (recommended): unroll statistics, this branch's profiles"
STATS=$st python3 $here/eval.py recommended,-queued_floor recommended recommended,-additive_floor,-queued_floor \
  recommended,-additive_floor recommended,+load_waits,-bytes_in_flight recommended,+streaming_latency \
  recommended,+request_in_flight
echo
echo "## the same on session 27b's stored statistics"
python3 $here/eval.py recommended,-queued_floor recommended | tail -2
echo
echo "## kernel_floor_queued_ns from one run of tag only (H100 / H200 ns)"
for pair in "3264 3088 gpu-profile-2026-11-22 (not the corpus run)" "4992 3264 gpu-2026-11-22c (the corpus run)"; do
  set -- $pair; d=$(mktemp -d); cp profiles/*.json $d/
  python3 - $d $1 $2 <<'PY'
import json, sys
d, a, b = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
for n, v in (("h100-sxm", a), ("h200", b)):
    p = json.load(open(f"{d}/{n}.json")); p["kernel_floor_queued_ns"] = v
    json.dump(p, open(f"{d}/{n}.json", "w"), indent=2, ensure_ascii=False)
PY
  echo "# $1 / $2 from ${*:3}"
  STATS=$st PROFILES=$d python3 $here/eval.py recommended | tail -1
done
echo
echo "## every kernel that queued_floor moves (before: recommended,-queued_floor; after: recommended)"
echo "## measured us, projected us, signed error; H100 | H200 | ratio H200/H100 measured, projected"
STATS=$st python3 $here/eval.py recommended,-queued_floor recommended -v > $st/v.txt
python3 - $st/v.txt <<'PY'
import sys
t = open(sys.argv[1]).read().split("## per kernel")
a = dict((l[:48], l) for l in t[1].splitlines()[1:] if l.strip())
b = dict((l[:48], l) for l in t[2].splitlines()[1:] if l.strip())
for k in a:
    if a[k] != b[k]:
        print("before " + a[k]); print("after  " + b[k])
PY
