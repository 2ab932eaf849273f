#!/usr/bin/env bash
# Session 22 call a's 4-GPU stencil logs replayed with the host's calls as logged (serial)
# and as CLPRISM_BALANCE_ISSUE=parallel would issue them (`--issue parallel`: each GPU's
# halo reads at once, then each GPU's writes and chunk; the best case, a driver that lets
# contexts issue in parallel). Run from the repository root after `cargo build --release`.
set -eu
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
tar xzf results/session22-2026-11-28/a-logs.tgz -C "$T"
(cd "$T/s22a" && tar xzf logs.tgz); L=$T/s22a/logs
ks() { grep -A1 "GPU Time" "$L/$1.out" | tail -1; }
for app in fdtd-long jacobi-long; do
  for issue in serial parallel; do
    echo "== $app always.gpu4 --issue $issue (measured app kernel_s: native $(ks "$app.native"), this run $(ks "$app.always.gpu4"))"
    target/release/clprism simulate --replay "$L/$app.always.gpu4.jsonl" --gpus 1,2,4,8 \
      --issue "$issue" --native-kernel-s "$(ks "$app.native")" --measured-kernel-s "$(ks "$app.always.gpu4")"
    echo
  done
done
