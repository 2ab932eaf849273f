#!/usr/bin/env bash
# The main job (README.md): builds clprism and the example apps, runs every example under the
# interposer on PoCL's CPU devices and prints the per-kernel summaries. Logs go to results/demo/.
# Usage: scripts/demo.sh [MODE]   (MODE = off | log (default) | project | balance)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release
make -s -C examples
export POCL_DEVICES="${POCL_DEVICES:-pthread pthread}"
mode="${1:-log}"
out=results/demo; mkdir -p "$out"
fail=0
for cl in examples/kernels/*.cl; do
  name=$(basename "$cl" .cl)
  echo "== $name (CLPRISM_MODE=$mode, POCL_DEVICES=\"$POCL_DEVICES\")"
  if ! CLPRISM_MODE="$mode" CLPRISM_LOG="$out/$name.jsonl" \
       LD_PRELOAD="$PWD/target/release/libOpenCL.so" "examples/build/$name"; then
    echo "!! $name FAILED"; fail=1
  fi
done
echo "logs: $out/*.jsonl"
exit $fail
