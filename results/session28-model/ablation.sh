#!/usr/bin/env bash
# Session 28: every figure of README.md, offline. Run from the repository root after
# `cargo build --release && cargo test --release --test model_polybench_stats --no-run`:
#   bash results/session28-model/ablation.sh > results/session28-model/ablation.txt
# Three changes, each on and off: the statistics (stored = session 27b's tgz, main's front
# end; unroll = make-stats.sh), the profiles (main's, or with the measured L1/L2 latencies
# and L2 read throughput), the model (main's recommended = `recommended,-issue_partitions,
# -prune_other`, or this branch's recommended).
set -euo pipefail
here=results/session28-model
# session 28b added queued_floor to recommended; this script keeps session 28's figures
# (its "recommended" = recommended,-queued_floor); session 28b's: ablation-queued.sh
# "main's profiles": this branch's without the three measured fields (schedulers_per_cu,
# the spec figure of issue_partitions, stays); the byte-exact main profiles give the same
# figures with main's model, which does not read schedulers_per_cu
main_prof=$(mktemp -d)
for p in profiles/*.json; do
  python3 - "$p" "$main_prof/$(basename $p)" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for f in ("l1_latency_ns", "l2_latency_ns", "l2_read_bytes_per_ns"):
    p.pop(f, None); p["sources"].pop(f, None)
json.dump(p, open(sys.argv[2], "w"), indent=2, ensure_ascii=False)
PY
done
bash $here/make-stats.sh /tmp/s28-unroll > /dev/null
R=recommended,-queued_floor
old=$R,-issue_partitions,-prune_other
echo "## 2 x 2 x 2: statistics, profiles, model (pooled = 110 (kernel, GPU) pairs)"
for stats in stored unroll; do for prof in main measured; do
  env=(); [ $stats = unroll ] && env+=(STATS=/tmp/s28-unroll); [ $prof = main ] && env+=(PROFILES=$main_prof)
  echo "# statistics: $stats, profiles: $prof"
  env "${env[@]}" python3 $here/eval.py $old $R | tail -2
done; done
echo
echo "## this branch (unroll statistics, measured profiles): each option on and off"
STATS=/tmp/s28-unroll python3 $here/eval.py $R $R,-issue_partitions $R,-prune_other \
  $R,-issue_partitions,-prune_other $R,+load_waits $R,+load_waits,-bytes_in_flight \
  $R,+streaming_latency $R,+request_in_flight
echo
echo "## the measured profile fields one at a time (unroll statistics, this branch's recommended)"
for f in l1_latency_ns l2_latency_ns l2_read_bytes_per_ns; do
  d=$(mktemp -d)
  for n in h100-sxm h200; do
    python3 - "$main_prof/$n.json" profiles/$n.json "$d/$n.json" $f <<'PY'
import json, sys
base, new, out, f = sys.argv[1:5]
b = json.load(open(base)); n = json.load(open(new))
b[f] = n[f]; b["sources"][f] = n["sources"][f]
json.dump(b, open(out, "w"), indent=2, ensure_ascii=False)
PY
  done
  for p in $main_prof/*.json; do [ -e $d/$(basename $p) ] || cp $p $d/; done
  echo "# main's profiles + $f"
  STATS=/tmp/s28-unroll PROFILES=$d python3 $here/eval.py $R | tail -1
done
echo
echo "## per kernel, before (main at b30a5c8: stored statistics, its profiles and model) and after"
true_main=$(mktemp -d)
for p in profiles/*.json; do git show b30a5c8:$p > $true_main/$(basename $p); done
PROFILES=$true_main python3 $here/eval.py $old -v | sed -n '/## per kernel/,$p'
STATS=/tmp/s28-unroll python3 $here/eval.py $R -v | sed -n '/## per kernel/,$p'
