#!/usr/bin/env bash
# Session 30: every figure of README.md, offline (~2 min, no GPU). Run from the repository
# root after `cargo build --release && cargo test --release --test model_polybench_stats --no-run`
# (the PolyBench half re-projects through that test binary: rebuild it after a model change):
#   bash results/session30-model/ablation.sh > results/session30-model/ablation.txt
# Corpus: session 29's (results/session29-model/make-stats.sh): the 11 example apps (14 kernel
# shapes; one H100 and one H200, results/gpu-2026-11-22c) and PolyBench-ACC LARGE (41 kernels;
# session 12's H100 and H200 times), 55 kernels x 2 GPUs.
# QUEUE=projected|measured: `clprism accuracy --queue-state` (whose queue state a device's
# re-projection uses; the examples only: PolyBench's statistics are PoCL records).
set -euo pipefail
here=results/session30-model
st=/tmp/s30-abl/st-whole
mkdir -p /tmp/s30-abl
bash results/session29-model/make-stats.sh $st > /dev/null
R=recommended                    # this branch's (streaming_latency on)
M=recommended,-streaming_latency # main's recommended at 4963189
ev() { STATS=$st python3 $here/eval.py "$@"; }

echo "## 1. before: main's model ($M), each device re-projected in the project-mode run's queue state"
QUEUE=projected ev $M | tail -1
echo
echo "## 2. + each device's measured queue state (clprism accuracy --queue-state measured, now the default)"
QUEUE=measured ev $M | tail -1
echo
echo "## 3. + streaming_latency (this branch's recommended): after"
QUEUE=measured ev $R | tail -1
echo
echo "## 4. each change alone, and the neighbouring options (measured queue states unless noted)"
QUEUE=projected ev $M $R | tail -2 | sed 's/^/queue=projected: /'
QUEUE=measured ev $M $R $R,-load_waits $R,-store_waits $R,-in_flight_measured \
  $R,+request_in_flight $R,-bytes_in_flight $R,-departure_delay $R,-queued_floor
echo
echo "## 5. every kernel that moves from 1 to 3; per kernel the anchored H200 error"
echo "## measured us, projected us, signed error; H100 | H200 | ratio H200/H100 measured, projected"
QUEUE=projected ev $M -v > /tmp/s30-abl/before.txt
QUEUE=measured ev $R -v > /tmp/s30-abl/after.txt
python3 - /tmp/s30-abl/before.txt /tmp/s30-abl/after.txt <<'PY'
import sys
def rows(f):
    out = {}
    for l in open(f).read().split("## per kernel")[1].splitlines()[1:]:
        if l.strip():
            r = l.split("|")[2].split()
            out[l[:48]] = (l, abs(float(r[1]) / float(r[0]) - 1) * 100)
    return out
a, b = rows(sys.argv[1]), rows(sys.argv[2])
for k in a:
    if a[k][0] != b[k][0]:
        print(f"before {a[k][0]} | anchored H200 {a[k][1]:.1f} %")
        print(f"after  {b[k][0]} | anchored H200 {b[k][1]:.1f} %")
print("\nanchored H200 error summed over the 55 kernels (points): before %.1f, after %.1f" %
      (sum(v[1] for v in a.values()), sum(v[1] for v in b.values())))
print("largest after:")
for k, v in sorted(b.items(), key=lambda kv: -kv[1][1])[:12]:
    print(f"  {k.strip():<46} {v[1]:6.1f}")
PY
