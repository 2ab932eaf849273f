#!/usr/bin/env bash
# Consecutive split launches pipelined (`--pipeline`, not built; docs/balance.md) against one
# at a time (as logged), projected from session 22's stencil logs: call e on 2 x H200 and call
# a on 4 x H200, `always`. Run from the repository root after `cargo build --release`.
set -eu
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
for c in a e; do
  mkdir -p "$T/$c" && tar xzf results/session22-2026-11-28/$c-logs.tgz -C "$T/$c"
  (cd "$T/$c"/s22$c && tar xzf logs.tgz)
done
ks() { grep -A1 "GPU Time" "$1" | tail -1; }
for run in "e fdtd-long gpu2" "e jacobi-long gpu2" "a fdtd-long gpu4" "a jacobi-long gpu4"; do
  set -- $run; L=$T/$1/s22$1/logs
  for p in "" --pipeline; do
    echo "== $2 always.$3 ${p:-(one launch at a time)} (measured app kernel_s: native $(ks "$L/$2.native.out"), this run $(ks "$L/$2.always.$3.out"))"
    target/release/clprism simulate --replay "$L/$2.always.$3.jsonl" --gpus 1,2,4,8 $p \
      --native-kernel-s "$(ks "$L/$2.native.out")" --measured-kernel-s "$(ks "$L/$2.always.$3.out")" | grep -v '^  measured on\|^  N=' || true
    echo
  done
done
