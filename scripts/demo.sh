#!/usr/bin/env bash
# The main job (README.md): builds clprism and the example apps, then shows the product on
# PoCL's CPU devices. Each example app runs natively (no LD_PRELOAD, writing its output with
# --dump), then under clprism in log, project and balance mode (CLPRISM_DEVICES=all, writing its
# output again); one progress line per run. At the end, one `clprism report --devices` per
# example over its three logs: per kernel the native time (the log-mode run, on the app's
# device), the balance-mode time and speedup (CLPRISM_SPLIT=always: every launch that can be
# split is split, to show the splitting), the share of the work-groups per device, the
# projected-best device and the projected ranking of every profiled device, and whether the
# balanced run's output is byte-identical to the native one (`--cmp`, the apps' --dump files).
# Then one table of the apps' own times: native, balance `auto` (what a user gets: a launch is
# split only when the measured figures say it pays) and balance `always`, each with its output
# check. Logs, outputs and one SVG per example (`--plot`) land in results/demo/.
#
# Usage: scripts/demo.sh          the whole demo (about 15 s after the build on 2 cores)
#        scripts/demo.sh MODE     every example in one MODE only (off|log|project|balance),
#                                 with clprism's per-kernel summary at exit
# Environment: POCL_DEVICES (default "pthread pthread basic": PoCL lists basic first, so the
#   apps' default device 0:0 is the single-threaded one), DEMO_EXAMPLES="nbody fwt" (a subset),
#   CLPRISM_SPLIT (default `always` here, so that every launch that can be split is split;
#   `auto` splits only when the measured figures say it pays), DEMO_SKIP_BUILD=1 (use the
#   existing target/release and examples/build).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s.%N)
if [ -z "${DEMO_SKIP_BUILD:-}" ]; then
  scripts/setup.sh
  cargo build --release
  make -s -C examples
fi
built=$(date +%s.%N)
export POCL_DEVICES="${POCL_DEVICES:-pthread pthread basic}"
lib="$PWD/target/release/libOpenCL.so"
clprism="$PWD/target/release/clprism"
out=results/demo; mkdir -p "$out"
names=${DEMO_EXAMPLES:-$(for cl in examples/kernels/*.cl; do basename "$cl" .cl; done)}
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
since_ms() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }

if [ $# -gt 0 ]; then
  # one mode, as before issue 21
  mode=$1; fail=0
  for name in $names; do
    echo "== $name (CLPRISM_MODE=$mode, POCL_DEVICES=\"$POCL_DEVICES\")"
    if ! CLPRISM_MODE="$mode" CLPRISM_LOG="$out/$name.jsonl" LD_PRELOAD="$lib" \
         "examples/build/$name"; then
      echo "!! $name FAILED"; fail=1
    fi
  done
  echo "logs: $out/*.jsonl"
  exit $fail
fi

split=${CLPRISM_SPLIT:-always}
modes="native log project auto balance"
n_names=$(echo $names | wc -w); total=$((5 * n_names)); step=0; fail=0
echo "clprism demo: $n_names example apps x (native, log, project, balance auto, balance $split) on POCL_DEVICES=\"$POCL_DEVICES\""
# run NAME MODE: one run of an example, its stdout+stderr in $out/NAME.MODE.out
run() {
  local name=$1 mode=$2 t0 rc=0 verdict
  local app="examples/build/$name" o="$out/$name.$mode"
  step=$((step + 1)); t0=$(date +%s.%N)
  rm -f "$o.jsonl" "$o.bin"
  case $mode in
    native) "$app" --dump "$o.bin" >"$o.out" 2>&1 || rc=$? ;;
    log|project)
      CLPRISM_MODE=$mode CLPRISM_LOG="$o.jsonl" LD_PRELOAD="$lib" "$app" >"$o.out" 2>&1 || rc=$? ;;
    auto)
      CLPRISM_MODE=balance CLPRISM_DEVICES=all CLPRISM_SPLIT=auto \
        CLPRISM_LOG="$o.jsonl" LD_PRELOAD="$lib" "$app" --dump "$o.bin" >"$o.out" 2>&1 || rc=$? ;;
    balance)
      CLPRISM_MODE=balance CLPRISM_DEVICES=all CLPRISM_SPLIT=$split CLPRISM_BALANCE_EARLY=off \
        CLPRISM_LOG="$o.jsonl" LD_PRELOAD="$lib" "$app" --dump "$o.bin" >"$o.out" 2>&1 || rc=$? ;;
  esac
  # the app's own check (its PASS/FAIL line, examples/README.md) and its own kernel timing
  verdict=$(grep -m1 -oE '^(PASS|FAIL) [a-z_0-9]+' "$o.out" || true)
  timing=$(grep -m1 -oE 'time_ms=[0-9.]+' "$o.out" || true)
  [ $rc -eq 0 ] || { verdict="exit $rc (see $o.out)"; fail=1; }
  since_ms "$t0" > "$o.wall_ms"
  printf '[%2d/%d] %-15s %-8s %6s ms  %-22s %s\n' "$step" "$total" "$name" "$mode" \
    "$(cat "$o.wall_ms")" "${verdict:-no PASS line}" "${timing:+app $timing}"
}
for name in $names; do
  for mode in $modes; do run "$name" "$mode"; done
done

echo
echo "clprism report --devices per example (native = the log-mode run, on the app's device;"
echo "balance = CLPRISM_DEVICES=all CLPRISM_SPLIT=$split; output check = cmp of the --dump files)"
for name in $names; do
  o="$out/$name"
  echo
  echo "=================== $name ==================="
  "$clprism" report --devices "$o.log.jsonl" "$o.project.jsonl" "$o.balance.jsonl" \
    --cmp "$o.native.bin" "$o.balance.bin" --plot "$o.svg" || fail=1
  cmp -s "$o.native.bin" "$o.balance.bin" || fail=1
done
echo
echo "Each app's whole run (wall ms), native against balance auto and balance $split over"
echo "CLPRISM_DEVICES=all; 'same' = the --dump output is byte-identical to native's:"
app_ms() { cat "$out/$1.$2.wall_ms" 2>/dev/null; }
printf '%-15s %9s %9s %6s %5s %9s %6s %5s\n' app native_ms auto_ms ratio same "${split}_ms" ratio same
for name in $names; do
  n=$(app_ms "$name" native); a=$(app_ms "$name" auto); b=$(app_ms "$name" balance)
  same() { cmp -s "$out/$name.native.bin" "$out/$name.$1.bin" && echo yes || echo NO; }
  [ "$(same auto)" = yes ] || fail=1
  awk -v app="$name" -v n="${n:-0}" -v a="${a:-0}" -v b="${b:-0}" -v sa="$(same auto)" \
      -v sb="$(same balance)" 'BEGIN {
      printf "%-15s %9d %9d %6.2f %5s %9d %6.2f %5s\n", app, n, a,
             (n > 0 ? a / n : 0), sa, b, (n > 0 ? b / n : 0), sb }'
done
echo "(ratio = time / native time: below 1 is faster.) These PoCL devices share this machine's"
echo "$(nproc) cores: the apps' default device (basic) runs on one core and each pthread device on"
echo "all of them, so a split gains at most the cores the app's device leaves idle, and pays for"
echo "copies and merges ('$split' splits every launch it can; 'auto' only where the measured"
echo "figures say it pays). On a host with several GPUs each device adds compute of its own:"
echo "see docs/results.md (multi-GPU figures)."
echo
echo "logs, outputs and plots: $out/NAME.{log,project,auto,balance}.jsonl, NAME.*.out, NAME.svg"
echo "demo: $(since "$built") s after the build, $(since "$start") s in all"
exit $fail
