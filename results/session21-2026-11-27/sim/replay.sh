#!/usr/bin/env bash
# Call e's 2 x H200 logs (the session's last build) replayed by `clprism simulate --replay`
# (sched::replay) at 1, 2, 4 and 8 GPUs; run from the repository root after
# `cargo build --release`. Unpacks into a temporary folder.
set -eu
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
R=results/session21-2026-11-27
tar xzf "$R/e-logs.tgz" -C "$T"; (cd "$T/s21e" && tar xzf logs.tgz)
L=$T/s21e/logs
ks() { grep -A1 "GPU Time" "$L/$1.out" | tail -1; }
run() { echo "== $1"; target/release/clprism simulate --replay "$L/$2.jsonl" --gpus 1,2,4,8 --native-kernel-s "$(ks "$3.native")" --measured-kernel-s "$(ks "$2")"; echo; }
run "fdtd-long always (5,000 steps)" fdtd-long.always.gpu2 fdtd-long
run "fdtd-long auto" fdtd-long.auto.gpu2 fdtd-long
run "jacobi-long always (2,000 steps)" jacobi-long.always.gpu2 jacobi-long
run "gemm auto (one launch)" gemm.auto.gpu2 gemm
run "3mm auto" 3mm.auto.gpu2 3mm
