#!/usr/bin/env bash
# The 2 x H200 logs of this session (calls a and b) replayed by `clprism simulate --replay`
# (sched::replay) at 1, 2, 4 and 8 GPUs; run from the repository root after
# `cargo build --release`. Unpacks into a temporary folder.
set -eu
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
R=results/session20-2026-11-27
for c in a b; do mkdir -p "$T/$c"; tar xzf "$R/$c-logs.tgz" -C "$T/$c"; done
for d in "$T"/a/s20a "$T"/b/s20b; do (cd "$d" && tar xzf logs.tgz); done
run() { echo "== $1"; target/release/clprism simulate --replay "$2" --gpus 1,2,4,8 --native-kernel-s "$3" --measured-kernel-s "$4"; echo; }
run "call b: jacobi-long always (2 GPUs, cea6bec)" "$T/b/s20b/logs/jacobi-long.always.gpu2.jsonl" 3.7395 4.356056
run "call b: fdtd-2d always (2 GPUs, cea6bec)" "$T/b/s20b/logs/fdtd-2d.always.gpu2.jsonl" 1.64211 3.288257
run "call a: gemm always (2 GPUs)" "$T/a/s20a/logs/gemm.always.gpu2.jsonl" 6.257694 3.574380
run "call a: gemm auto (2 GPUs)" "$T/a/s20a/logs/gemm.auto.gpu2.jsonl" 6.257694 3.790532
