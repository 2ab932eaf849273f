#!/usr/bin/env bash
# Session 22 call a's logs (4 x H200, one host; session 21's build 845cf7d^ as run there:
# native, `always` and `auto` on 2 and on 4 GPUs in the same call) replayed by
# `clprism simulate --replay` (sched::replay) at 1, 2, 4 and 8 GPUs, from the 2-GPU log and
# from the 4-GPU log of each app. Run from the repository root after
# `cargo build --release`. Unpacks into a temporary folder.
set -eu
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
tar xzf results/session22-2026-11-28/a-logs.tgz -C "$T"
(cd "$T/s22a" && tar xzf logs.tgz); L=$T/s22a/logs
ks() { grep -A1 "GPU Time" "$L/$1.out" | tail -1; }
run() {
  echo "== $1 $2 (measured app kernel_s: native $(ks "$1.native"), this run $(ks "$1.$2"))"
  target/release/clprism simulate --replay "$L/$1.$2.jsonl" --gpus 1,2,4,8 \
    --native-kernel-s "$(ks "$1.native")" --measured-kernel-s "$(ks "$1.$2")"
  echo
}
for app in fdtd-long jacobi-long gemm 3mm 2mm; do
  for m in always.gpu2 always.gpu4 auto.gpu2 auto.gpu4; do run "$app" "$m"; done
  echo "-- $app measured app kernel_s: native $(ks "$app.native"); always 2 GPUs $(ks "$app.always.gpu2"), 4 GPUs $(ks "$app.always.gpu4"); auto 2 GPUs $(ks "$app.auto.gpu2"), 4 GPUs $(ks "$app.auto.gpu4")"
  echo
done
