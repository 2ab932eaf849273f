#!/usr/bin/env bash
# Validates CLPRISM_TRACE output (issue 7): runs examples in log and balance modes and the
# pyopencl script with a trace, then
#   1. checks each file against the trace event format (`clprism trace-check`: ph/ts/pid/tid
#      on every event, slices nested per track, flows paired);
#   2. loads each file into Perfetto's trace processor when one can be found, and compares
#      its slice/track/flow counts with the JSON and prints its import errors. The processor:
#      $TRACE_PROCESSOR, else trace_processor_shell / trace_processor on PATH, else the
#      `perfetto` Python package (pip install perfetto), which downloads the binary on first
#      use and so fails on a machine without internet access: the script then says so.
# Renders the balance trace to docs/trace-balance.svg/.png as well when asked (--render).
# Usage: scripts/validate_trace.sh [--render]     (after `cargo build`)
set -uo pipefail
cd "$(dirname "$0")/.."
export POCL_DEVICES=${POCL_DEVICES:-"pthread pthread basic"} CLPRISM_DEVICES=${CLPRISM_DEVICES:-all}
bin=target/debug/clprism
[ -x "$bin" ] || { echo "build first: cargo build" >&2; exit 2; }
make -s -C examples >/dev/null || exit 2
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
status=0
runs=(
  "log:reduction:examples/build/reduction"
  "balance:matmul_local:examples/build/matmul_local 512 2"
  "log:saxpy_check.py:/usr/bin/python3 tests/py/saxpy_check.py"
  "balance:saxpy_check.py:/usr/bin/python3 tests/py/saxpy_check.py"
)
traces=()
for r in "${runs[@]}"; do
  IFS=: read -r mode name cmd <<<"$r"
  t="$out/$name.$mode.json"
  # shellcheck disable=SC2086
  if ! "$bin" run --mode "$mode" --log "$out/$name.$mode.jsonl" --trace "$t" --summary off -- $cmd >/dev/null 2>"$out/err"; then
    echo "FAIL: $name in $mode mode did not run"; cat "$out/err"; status=1; continue
  fi
  echo "== $name, $mode mode: $(wc -l <"$out/$name.$mode.jsonl") launch records"
  (cd "$out" && "$OLDPWD/$bin" trace-check "$(basename "$t")") || status=1
  traces+=("$t")
  [ "$name.$mode" = "matmul_local.balance" ] && cp "$t" "$out/render.json"
done

echo
echo "== Perfetto trace processor"
tp=${TRACE_PROCESSOR:-$(command -v trace_processor_shell || command -v trace_processor || true)}
py=/usr/bin/python3
if [ -z "$tp" ] && ! $py -c "import perfetto.trace_processor" 2>/dev/null; then
  for p in python3 "$HOME/.local/bin/python3"; do
    command -v "$p" >/dev/null && "$p" -c "import perfetto.trace_processor" 2>/dev/null && py=$p && break
  done
fi
$py - "$tp" "${traces[@]}" 2>&1 <<'EOF' | grep -v -e '^Downloading ' -e '^curl: ' -e '^$'
import json, sys
tp, files = sys.argv[1], sys.argv[2:]
try:
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig
except ImportError:
    TraceProcessor = None
if not tp and TraceProcessor is None:
    print("unavailable: no trace_processor binary and no perfetto Python package "
          "(pip install perfetto); only the structural check above was made")
    sys.exit(0)
bad = 0
for f in files:
    try:
        cfg = TraceProcessorConfig(bin_path=tp) if tp else None
        t = TraceProcessor(trace=f, config=cfg) if cfg else TraceProcessor(trace=f)
    except Exception as e:  # the Python package could not fetch or start the binary
        print(f"unavailable: the trace processor could not start ({type(e).__name__}; the "
              "perfetto package downloads its binary on first use, which needs internet "
              "access); only the structural check above was made")
        sys.exit(0)
    q = lambda s: list(t.query(s))
    evs = json.load(open(f))["traceEvents"]
    want_slices = sum(1 for e in evs if e["ph"] in ("X", "i"))
    want_flows = sum(1 for e in evs if e["ph"] == "s")
    slices = q("select count(*) as n from slice")[0].n
    flows = q("select count(*) as n from flow")[0].n
    tracks = q("select count(distinct utid) as n from thread_track")[0].n
    errors = q("select name, value from stats where severity in ('error', 'data_loss') and value > 0")
    ok = slices == want_slices and flows == want_flows and not errors
    bad += not ok
    print(f"{f.split('/')[-1]}: {'ok' if ok else 'MISMATCH'}: {slices}/{want_slices} slices, "
          f"{flows}/{want_flows} flows, {tracks} thread tracks, import errors: "
          f"{[(e.name, e.value) for e in errors] or 'none'}")
    t.close()
sys.exit(1 if bad else 0)
EOF
[ "${PIPESTATUS[0]}" = 0 ] || status=1

if [ "${1:-}" = "--render" ] && [ -f "$out/render.json" ]; then
  mkdir -p docs
  cp "$out/render.json" docs/trace-balance.json
  python3 scripts/trace_svg.py docs/trace-balance.json docs/trace-balance.svg \
    --title "clprism balance mode: matmul_local 512x512, 2 launches over 3 PoCL CPU devices (CLPRISM_TRACE)"
  command -v rsvg-convert >/dev/null && rsvg-convert docs/trace-balance.svg -o docs/trace-balance.png
  echo "rendered docs/trace-balance.svg (and .png with rsvg-convert)"
fi
echo
[ $status = 0 ] && echo "validate_trace: all traces valid" || echo "validate_trace: FAILED"
exit $status
