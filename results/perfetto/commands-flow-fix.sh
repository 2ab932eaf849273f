#!/usr/bin/env bash
# The exact commands behind the flow-arrow fix's files in results/perfetto/ (the writer now
# puts each chunk's flow start on its device track, right after its enqueue tick; see
# README.md). Run from the repository root after `cargo build` and `make -C examples`:
#   results/perfetto/commands-flow-fix.sh
# Writes NAME.json (a fresh trace), NAME.txt (what scripts/perfetto_check.sh printed, exit
# status on its last line) and NAME.png (the Perfetto UI zoomed to the first launch's chunks,
# an area selected over every track so that every flow arrow in it is drawn).
set -uo pipefail
cd "$(dirname "$0")/../.."
r=results/perfetto
lib=$PWD/target/debug/libOpenCL.so
check() { # NAME TRACE PNG [env...]
  local name=$1 trace=$2 png=$3; shift 3
  env "$@" scripts/perfetto_check.sh "$trace" "$png" >"$r/$name.txt" 2>&1
  echo "exit status $?" >>"$r/$name.txt"
  tail -2 "$r/$name.txt"
}

# Fresh balance traces with the fixed writer: two and three PoCL CPU devices.
POCL_DEVICES="pthread pthread" CLPRISM_MODE=balance CLPRISM_TRACE=$r/matmul_global.balance.json \
  LD_PRELOAD=$lib examples/build/matmul_global 256 >/dev/null
POCL_DEVICES="pthread pthread basic" CLPRISM_DEVICES=all CLPRISM_MODE=balance \
  CLPRISM_TRACE=$r/matmul_local.balance3.json LD_PRELOAD=$lib examples/build/matmul_local 512 2 >/dev/null
for n in matmul_global.balance matmul_local.balance3; do
  check "$n" "$r/$n.json" "$r/$n.png" PERFETTO_CHECK_SELECT=area
done

# The committed docs trace, written before the fix: the arrow check must fail on it (its
# flows bind to the launch's `chunks` phase slice). Its screenshot is not kept.
check docs-trace-balance.old-writer docs/trace-balance.json "$(mktemp --suffix=.png)" PERFETTO_CHECK_SELECT=area
