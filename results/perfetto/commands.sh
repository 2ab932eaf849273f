#!/usr/bin/env bash
# The exact commands behind results/perfetto/ (issue 7: does Perfetto load CLPRISM_TRACE
# files?). Run from the repository root after `cargo build` and `make -C examples`:
#   results/perfetto/commands.sh
# Each NAME.json is a trace written now, NAME.txt what scripts/perfetto_check.sh printed for
# it (exit status on its last line), NAME.png its Perfetto UI screenshot.
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

# The docs picture: the committed docs/trace-balance.json, whole trace, nothing selected.
check docs-trace-balance docs/trace-balance.json docs/trace-perfetto.png \
  PERFETTO_CHECK_SELECT=none PERFETTO_CHECK_HEIGHT=560

# Fresh traces from the examples: balance mode on two and on three PoCL devices, project
# mode (emulation track), log mode with 8 host threads.
POCL_DEVICES="pthread pthread" CLPRISM_MODE=balance CLPRISM_TRACE=$r/matmul_global.balance.json \
  LD_PRELOAD=$lib examples/build/matmul_global 256 >/dev/null
POCL_DEVICES="pthread pthread basic" CLPRISM_DEVICES=all CLPRISM_MODE=balance \
  CLPRISM_TRACE=$r/matmul_local.balance3.json LD_PRELOAD=$lib examples/build/matmul_local 512 2 >/dev/null
POCL_DEVICES="pthread pthread" CLPRISM_MODE=project CLPRISM_TRACE=$r/matmul_local.project.json \
  LD_PRELOAD=$lib examples/build/matmul_local 128 >/dev/null
POCL_DEVICES="pthread pthread" CLPRISM_TRACE=$r/mt_launch.log.json \
  LD_PRELOAD=$lib examples/build/mt_launch >/dev/null
for n in matmul_global.balance matmul_local.balance3 matmul_local.project mt_launch.log; do
  check "$n" "$r/$n.json" "$r/$n.png"
done

# Flow binding: Perfetto binds a flow's `s` event to the slice enclosing it on its track
# (here the whole balanced launch) and draws the arrow from that slice's END. The same
# trace with each `s` moved to its chunk's "enqueue chunk N" instant on the device track
# (right after that instant in the file) binds every flow to the enqueue tick instead.
python3 - docs/trace-balance.json "$r/flow-on-tick.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
ticks = {e["ts"]: e for e in ev if e["ph"] == "i" and e.get("cat") == "chunk"}
starts = {e["ts"]: e for e in ev if e["ph"] == "s"}
out = []
for e in ev:
    if e["ph"] == "s":
        continue
    out.append(e)
    if e["ph"] == "i" and e["ts"] in starts:
        starts[e["ts"]]["tid"] = e["tid"]
        out.append(starts[e["ts"]])
assert len(out) == len(ev), "every s event has an enqueue tick at its ts"
d["traceEvents"] = out
json.dump(d, open(sys.argv[2], "w"))
EOF
check flow-on-tick "$r/flow-on-tick.json" "$r/flow-on-tick.png" \
  "PERFETTO_CHECK_SELECT=name like '%chunk 4:%'"
