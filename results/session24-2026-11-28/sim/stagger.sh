#!/usr/bin/env bash
# Owner-computes slabs equal (as the logs ran) against sized for the staggered starts
# (`--slabs stagger`, as main sizes them on GPUs of one name since de39307), projected from
# session 22 call a's 4-GPU stencil logs (4 x H200). Measured in session 24 on 4 x H200 with
# main before and after de39307 (kernel time, s): fdtd-2d 11.70/12.32 -> 11.02/10.75,
# jacobi-2d 3.58/3.29 -> 3.42/3.19 (../README.md). Run from the repository root after
# `cargo build --release`.
set -eu
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
tar xzf results/session22-2026-11-28/a-logs.tgz -C "$T"
(cd "$T/s22a" && tar xzf logs.tgz); L=$T/s22a/logs
ks() { grep -A1 "GPU Time" "$L/$1.out" | tail -1; }
for app in fdtd-long jacobi-long; do
  for slabs in equal stagger; do
    echo "== $app always.gpu4 --slabs $slabs (measured app kernel_s: native $(ks "$app.native"), this run $(ks "$app.always.gpu4"))"
    target/release/clprism simulate --replay "$L/$app.always.gpu4.jsonl" --gpus 1,2,4,8 \
      --slabs "$slabs" --native-kernel-s "$(ks "$app.native")" --measured-kernel-s "$(ks "$app.always.gpu4")"
    echo
  done
done
