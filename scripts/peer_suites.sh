#!/usr/bin/env bash
# Peer test suites (not written by this project) run natively and through clprism in each
# mode, on PoCL; writes per-run result lists and a comparison table into results/peer/.
#
#   scripts/peer_suites.sh [--quick] [--reuse-native] [--table-only] [--out DIR] [MODE...]
#
# MODE: off log project balance (default: all four; `native` is always run first, it is
# the reference; --reuse-native keeps an existing DIR/native.tsv instead; --table-only
# only rebuilds DIR/table.md from the DIR/*.tsv of earlier runs). --quick: the cl-api tests and every 6th program/execute test only
# (what tests/peer.rs runs in CI). Without --quick the piglit part is piglit's whole `cl`
# profile (the 710 tests of its tests/cl.xml.gz, what `piglit run cl` runs). Suites:
#   piglit-api      piglit's cl-api-* binaries (Debian `piglit`); without --quick every
#                   binary test of the profile (cl-api-*, cl-custom-*, cl-program-*)
#   piglit-execute  piglit's tests/cl/program/execute/*.{cl,program_test} via cl-program-tester
#                   (without --quick also its subdirectories: builtin/, ...)
#   piglit-build    (without --quick) tests/cl/program/build/ via cl-program-tester
#   piglit-generated (without --quick) generated_tests/cl/ (builtin, store, vload, vstore)
#   piglit-subtest  (without --quick) every subtest that the tests above report, named
#                   test/subtest (what piglit's own summary counts; a subtest reported again,
#                   e.g. once per device, is test/subtest #2, ...)
#   pyopencl-test   pyopencl's own pytest suite (Debian `python-pyopencl-doc` ships it),
#                   the files in PYOPENCL_TESTS
#   pyopencl-ex     pyopencl's examples that need no display (PYOPENCL_EXAMPLES)
# Each test's result: pass, fail, skip, warn, crash (signal / no PIGLIT line), timeout.
# Output: DIR/<mode>.tsv (suite<TAB>test<TAB>result), DIR/table.md (counts per suite x mode
# and every test whose result under clprism differs from native).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
QUICK=0
REUSE_NATIVE=0
TABLE_ONLY=0
OUT=results/peer
modes=()
while (($#)); do
  case "$1" in
    --quick) QUICK=1 ;;
    --out) OUT=$2; shift ;;
    --reuse-native) REUSE_NATIVE=1 ;;
    --table-only) TABLE_ONLY=1 ;;
    native) ;;
    *) modes+=("$1") ;;
  esac
  shift
done
((${#modes[@]})) || modes=(off log project balance)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export POCL_DEVICES="${POCL_DEVICES:-pthread pthread basic}"
LIB="${CLPRISM_TEST_LIB:-$ROOT/target/debug/libOpenCL.so}"
[ -f "$LIB" ] || { echo "peer: $LIB missing (cargo build)" >&2; exit 2; }
PIGLIT="${PIGLIT_DIR:-/usr/lib/x86_64-linux-gnu/piglit}"
PYEX="${PYOPENCL_EXAMPLES_DIR:-/usr/share/doc/python-pyopencl-doc/examples}"
PY=/usr/bin/python3
T=${PEER_TIMEOUT:-120}
# tests left out (extended regex on the test name); cl-api-enqueue-fill-buffer hangs natively
# on PoCL 3.1 (timeout in every mode) and only costs time
SKIP=${PEER_SKIP:-^cl-api-enqueue-fill-buffer$}
JOBS=${PEER_JOBS:-2}
PYOPENCL_TESTS=${PYOPENCL_TESTS:-"test_wrapper.py test_enqueue_copy.py test_arrays_in_structs.py test_clrandom.py"}
# test_event_set_callback hangs natively on PoCL 3.1 (basic device): deselected.
PYOPENCL_DESELECT=${PYOPENCL_DESELECT:-"not test_event_set_callback"}
PYOPENCL_EXAMPLES=${PYOPENCL_EXAMPLES:-"demo.py demo_array.py demo_elementwise.py demo_elementwise_complex.py demo-struct-reduce.py dump-properties.py narray.py"}
work=$(mktemp -d /tmp/clprism-peer.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Environment of one run: native or LD_PRELOAD with CLPRISM_MODE, own log/cache dirs, and
# PEER_CLPRISM_ENV (e.g. "CLPRISM_SPLIT=always"; the caller's CLPRISM_* are unset).
mode_env() { # mode -> prints env assignments for `env`
  local m=$1
  for v in $(env | grep -o '^CLPRISM_[A-Z_]*' | grep -v CLPRISM_TEST_LIB); do printf -- '-u %s ' "$v"; done
  if [ "$m" != native ]; then
    mkdir -p "$work/$m/log" "$work/$m/cache"
    printf 'LD_PRELOAD=%s CLPRISM_MODE=%s CLPRISM_LOG=%s/%s/log/%%p.jsonl CLPRISM_SUMMARY=off CLPRISM_CACHE=%s/%s/cache %s ' \
      "$LIB" "$m" "$work" "$m" "$work" "$m" "${PEER_CLPRISM_ENV:-}"
  fi
}

# piglit result of one binary run: the last `PIGLIT: {"result": "X"}` line.
piglit_one() { # mode envs name cmd...
  local m=$1 envs=$2 name=$3; shift 3
  local log="$work/$m/out/$(echo "$name" | tr / _).txt"
  mkdir -p "$work/$m/out"
  # shellcheck disable=SC2086
  (cd "$work" && timeout -k 5 "$T" env $envs "$@" >"$log" 2>&1)
  local rc=$? r
  mkdir -p "$work/$m/sub"
  sed -n 's/^PIGLIT: {"subtest": *{"\(.*\)" *: *"\([a-z]*\)"}}$/\1\t\2/p' "$log" |
    awk -F'\t' -v n="$name" '{k = n "/" $1; if (++c[k] > 1) k = k " #" c[k]; print k "\t" $2}' \
      >"$work/$m/sub/$(echo "$name" | tr / _).tsv"
  r=$(grep -o '"result": *"[a-z]*"' "$log" | tail -1 | sed 's/.*"\([a-z]*\)"$/\1/')
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then r=timeout
  elif [ -z "$r" ] || [ "$rc" -gt 128 ]; then r=crash; fi
  printf '%s\t%s\n' "$name" "$r"
}
export -f piglit_one

# One test of piglit's cl profile: "suite<TAB>name<TAB>command<TAB>argument" (no argument
# for binary tests); prints "suite<TAB>name<TAB>result".
piglit_entry() { # mode envs entry
  local s n c a
  IFS=$'\t' read -r s n c a <<<"$3"
  piglit_one "$1" "$2" "$n" "$c" ${a:+"$a"} | sed "s/^/$s\t/"
}
export -f piglit_entry

# Every test of piglit's cl profile (tests/cl.xml.gz), as piglit_entry lines.
profile_list() {
  $PY - "$PIGLIT" <<'PYEOF'
import ast, gzip, sys, xml.etree.ElementTree as ET
root = sys.argv[1]
prefixes = [("tests/cl/program/execute/", "piglit-execute"), ("tests/cl/program/build/", "piglit-build"),
            ("generated_tests/cl/", "piglit-generated")]
for t in ET.fromstring(gzip.open(f"{root}/tests/cl.xml.gz").read()).iter("Test"):
    o = {x.get("name"): ast.literal_eval(x.get("value")) for x in t.iter("option")}
    if t.get("type") == "cl":
        print(f"piglit-api\t{o['command'][0]}\t{root}/bin/{o['command'][0]}")
        continue
    f = o["filename"]
    suite, name = next(((s, f[len(p):]) for p, s in prefixes if f.startswith(p)), ("piglit-program", f))
    print(f"{suite}\t{name}\t{root}/bin/cl-program-tester\t{root}/{f}")
PYEOF
}
export work T

run_mode() {
  local m=$1 envs tsv="$OUT/$m.tsv"
  envs=$(mode_env "$m")
  : >"$tsv"
  if ! ((QUICK)); then
    # piglit's whole cl profile, then every subtest the tests reported
    profile_list | awk -F'\t' -v skip="$SKIP" '$2 !~ skip' | sort >"$work/$m.full"
    xargs -d '\n' -P "$JOBS" -I{} bash -c 'piglit_entry "$0" "$1" "$2"' "$m" "$envs" {} \
      <"$work/$m.full" | sort >>"$tsv"
    cat "$work/$m/sub/"*.tsv 2>/dev/null | sed 's/^/piglit-subtest\t/' | sort >>"$tsv"
  else
    # piglit API tests
    for f in "$PIGLIT"/bin/cl-api-*; do [[ "$(basename "$f")" =~ $SKIP ]] || echo "$f"; done | sort | xargs -P "$JOBS" -I{} bash -c \
      'piglit_one "$0" "$1" "$(basename {})" {}' "$m" "$envs" | sed 's/^/piglit-api\t/' | sort >>"$tsv"
    # piglit program/execute tests
    local i=0 list="$work/$m.exec"
    : >"$list"
    for f in $(ls "$PIGLIT"/tests/cl/program/execute/ | grep -E '\.(cl|program_test)$' | sort); do
      i=$((i + 1))
      ((i % 6 != 1)) && continue
      [[ "$f" =~ $SKIP ]] && continue
      echo "$f" >>"$list"
    done
    xargs -P "$JOBS" -I{} bash -c \
      'piglit_one "$0" "$1" "{}" "$2/bin/cl-program-tester" "$2/tests/cl/program/execute/{}"' \
      "$m" "$envs" "$PIGLIT" <"$list" | sed 's/^/piglit-execute\t/' | sort >>"$tsv"
    return
  fi
  # pyopencl test suite (pytest), one line per test id
  if [ -d "$PYEX" ] && $PY -c 'import pyopencl, pytest' 2>/dev/null; then
    mkdir -p "$work/pyt" && cp "$PYEX"/test_*.py "$work/pyt/"
    for f in $PYOPENCL_TESTS; do
      # shellcheck disable=SC2086
      (cd "$work/pyt" && timeout -k 5 1800 env $envs PYOPENCL_NO_CACHE=1 $PY -m pytest -q -p no:cacheprovider \
        -k "$PYOPENCL_DESELECT" --junitxml="$work/$m.$f.xml" "$f" >"$work/$m.pytest.$f.txt" 2>&1)
      local rc=$?
      $PY - "$work/$m.$f.xml" <<'PYEOF' | sort >>"$tsv"
import sys, re, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    sys.exit(0)
for tc in root.iter("testcase"):
    name = tc.get("classname", "") + "::" + tc.get("name", "")
    name = re.sub(r"<context factory for <pyopencl.Device '([^']*)' on '[^']*'>>", r"\1", name)
    r = "pass"
    for ch in tc:
        if ch.tag in ("failure",): r = "fail"
        elif ch.tag == "error": r = "crash"
        elif ch.tag == "skipped": r = "skip"
    print(f"pyopencl-test\t{name}\t{r}")
PYEOF
      if [ "$rc" -gt 1 ] && [ "$rc" != 5 ]; then printf 'pyopencl-test\t%s(run)\t%s\n' "$f" \
        "$([ $rc = 124 ] && echo timeout || echo crash)" >>"$tsv"; fi
      cp "$work/$m.pytest.$f.txt" "$OUT/$m.pytest.$f.txt"
    done
    for f in $PYOPENCL_EXAMPLES; do
      # shellcheck disable=SC2086
      (cd "$work/pyt" && timeout -k 5 "$T" env $envs PYOPENCL_NO_CACHE=1 $PY "$PYEX/$f" >"$work/$m.ex.$f.txt" 2>&1)
      local rc=$? r=pass
      [ $rc = 0 ] || r=fail
      [ $rc = 124 ] && r=timeout
      [ $rc -gt 128 ] && [ $rc != 124 ] && r=crash
      printf 'pyopencl-ex\t%s\t%s\n' "$f" "$r" >>"$tsv"
    done
  fi
  # keep the outputs of tests that failed, for diagnosis
  mkdir -p "$OUT/out-$m"
  awk -F'\t' '$3!="pass" && $1 ~ /piglit/ && $1 != "piglit-subtest" {print $2}' "$tsv" | while read -r n; do
    cp "$work/$m/out/$(echo "$n" | tr / _).txt" "$OUT/out-$m/" 2>/dev/null
  done
  [ "$m" = native ] || launch_summary "$m" >"$OUT/$m.launches.txt"
}

# What the mode did with the launches of its whole run (every test's log): launch records,
# those whose chunks ran on >= 2 devices, and the most frequent fallback reasons (digits
# folded to N).
launch_summary() { # mode
  cat "$work/$1/log/"*.jsonl 2>/dev/null | $PY -c '
import collections, json, re, sys
n = split = 0
why = collections.Counter()
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if not isinstance(r, dict) or r.get("record") is not None or "kernel" not in r:
        continue
    s = r.get("schedule")
    n += 1
    if not isinstance(s, dict):
        continue
    if s.get("fallback"):
        why[re.sub(r"[0-9]+", "N", s["fallback"])] += 1
    devs = {c.get("device") for c in s.get("chunks") or [] if not c.get("failed") and not c.get("abandoned")}
    split += len(devs) >= 2
print(f"launch records: {n}; chunks on >= 2 devices: {split}")
for w, c in why.most_common(12):
    print(f"{c:8d}  {w}")
'
}

all=(native "${modes[@]}")
for m in "${all[@]}"; do
  ((TABLE_ONLY)) && break
  if [ "$m" = native ] && ((REUSE_NATIVE)) && [ -s "$OUT/native.tsv" ]; then continue; fi
  echo "peer: mode $m" >&2
  start=$(date +%s)
  run_mode "$m"
  echo "peer: mode $m done in $(($(date +%s) - start)) s" >&2
done

# Table: per suite and mode, counts of each result; then the differences from native.
$PY - "$OUT" "${all[@]}" <<'PYEOF'
import sys, collections
out, modes = sys.argv[1], sys.argv[2:]
res = {}
for m in modes:
    res[m] = {}
    for line in open(f"{out}/{m}.tsv"):
        p = line.rstrip("\n").split("\t")
        if len(p) == 3:
            res[m][(p[0], p[1])] = p[2]
suites = sorted({s for m in modes for (s, _) in res[m]})
def cell(m, s):
    c = collections.Counter(r for (su, _), r in res[m].items() if su == s)
    return " ".join(f"{k}:{c[k]}" for k in ["pass", "fail", "skip", "warn", "crash", "timeout"] if c[k]) or "-"
lines = ["| suite | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
for s in suites:
    lines.append(f"| {s} | " + " | ".join(cell(m, s) for m in modes) + " |")
lines.append("")
lines.append("Tests whose result differs from native (suite / test: native -> mode result):")
lines.append("")
diffs = 0
for m in modes[1:]:
    for k in sorted(set(res["native"]) | set(res[m])):
        a, b = res["native"].get(k, "missing"), res[m].get(k, "missing")
        if a != b:
            diffs += 1
            lines.append(f"- {k[0]} / {k[1]}: native {a} -> {m} {b}")
if not diffs:
    lines.append("- none")
open(f"{out}/table.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PYEOF
