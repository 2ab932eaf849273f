#!/usr/bin/env bash
# Session 28: the statistics tree the figures use (DIR, default /tmp/s28/st-unroll): session
# 27b's stored statistics (results/session27-model-b/stats-load-waits.tgz) with the
# instruction counts and load_waits of the front end's unrolling (`frontend::UNROLL`),
# transplanted by transplant-instr.py from emu-logs.tgz: the 11 example apps run in project
# mode on PoCL without (ex-base, main's front end) and with it (ex-unroll), and PolyBench-ACC
# LARGE with it (pb-unroll; its stored counts are this emulator's, so the stored log is the
# base). Offline, seconds. Run from the repository root.
set -euo pipefail
here=results/session28-model
dir=${1:-/tmp/s28/st-unroll}
rm -rf "$dir" && mkdir -p "$dir"
tar xzf results/session27-model-b/stats-load-waits.tgz -C "$dir"
tar xzf $here/emu-logs.tgz -C "$dir"
mv "$dir/examples" "$dir/examples.stored" && mv "$dir/pocl" "$dir/pocl.stored"
for g in h100 h200; do
  mkdir -p "$dir/examples/$g/logs"
  for f in "$dir/examples.stored/$g/logs/"*.1_0.jsonl; do
    app=$(basename "$f" .1_0.jsonl)
    python3 $here/transplant-instr.py "$f" "$dir/emu-logs/ex-base/$app.0_0.jsonl" \
      "$dir/emu-logs/ex-unroll/$app.0_0.jsonl" "$dir/examples/$g/logs/$app.1_0.jsonl"
  done
done
mkdir -p "$dir/pocl"
for f in "$dir/pocl.stored/"*.jsonl; do
  app=$(basename "$f" .jsonl)
  python3 $here/transplant-instr.py "$f" "$f" "$dir/emu-logs/pb-unroll/$app.jsonl" "$dir/pocl/$app.jsonl"
done
