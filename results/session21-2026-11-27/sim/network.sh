#!/usr/bin/env bash
# Issue 33 item 5: call e's 2 x H200 logs projected by `clprism simulate --replay --link` to
# N = 1, 4, 16 and 64 devices (the app's GPU and N-1 PoCL-Remote servers of one GPU each)
# behind a 25 Gb/s, 50 us link and a 100 Gb/s, 10 us link. Run from the repository root
# after `cargo build --release`. A model, not a measurement (sched::replay's doc and
# docs/multi-gpu-projection.md).
set -eu
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
R=results/session21-2026-11-27
tar xzf "$R/e-logs.tgz" -C "$T"; (cd "$T/s21e" && tar xzf logs.tgz)
L=$T/s21e/logs
ks() { grep -A1 "GPU Time" "$L/$1.out" | tail -1; }
for link in 25:50 100:10; do
  for run in fdtd-long.always jacobi-long.always gemm.auto 3mm.auto; do
    app=${run%%.*}
    echo "== $run, link $link"
    target/release/clprism simulate --replay "$L/$run.gpu2.jsonl" --gpus 1,4,16,64 --link "$link" \
      --native-kernel-s "$(ks "$app.native")" | sed -n '/^run totals/,/^$/p'
  done
done
