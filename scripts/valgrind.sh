#!/usr/bin/env bash
# Runs programs under valgrind memcheck (--leak-check=full) through clprism and classifies
# every leak record ("definitely" and "indirectly lost") by who allocated it: clprism
# (the first frame above the allocator and Rust's std/alloc/core frames is in clprism's
# code, an `OpenCL::` function) or the driver/app (anything else, e.g. PoCL, LLVM, libc).
#
#   scripts/valgrind.sh [--mode MODE] [--out FILE] [PROGRAM ARGS... | --piglit-api]
#
# Default: tests/c/early_release (built into target/ctests) in log mode, then piglit's
# cl-api-* tests. Writes the summary to FILE (default results/valgrind.txt) and the raw
# valgrind logs in target/valgrind/ (VG_RAW).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=log
OUT=results/valgrind.txt
progs=()
while (($#)); do
  case "$1" in
    --mode) MODE=$2; shift ;;
    --out) OUT=$2; shift ;;
    *) progs+=("$1") ;;
  esac
  shift
done
LIB="${CLPRISM_TEST_LIB:-$ROOT/target/debug/libOpenCL.so}"
PIGLIT="${PIGLIT_DIR:-/usr/lib/x86_64-linux-gnu/piglit}"
export POCL_DEVICES="${POCL_DEVICES:-pthread}"
RAW=${VG_RAW:-$ROOT/target/valgrind}
mkdir -p "$RAW" "$(dirname "$OUT")"
if ((${#progs[@]} == 0)); then
  mkdir -p target/ctests
  cc -O1 -g -o target/ctests/early_release tests/c/early_release.c -lOpenCL || exit 2
  list=("$ROOT/target/ctests/early_release")
  # a peer suite: piglit's cl-api tests (PIGLIT_API="..." to choose; default: a subset that
  # covers buffers, programs, kernels, queues, events; each takes minutes under valgrind)
  for t in ${PIGLIT_API:-create-buffer build-program set-kernel-arg enqueue-read_write-buffer retain_release-kernel}; do
    list+=("$PIGLIT/bin/cl-api-$t")
  done
else
  list=("${progs[*]}")
fi
: >"$OUT.tmp"
for cmd in "${list[@]}"; do
  name=$(basename "${cmd%% *}")
  log="$RAW/$name.$MODE.txt"
  # shellcheck disable=SC2086
  timeout -k 5 "${VG_TIMEOUT:-300}" env LD_PRELOAD="$LIB" CLPRISM_MODE="$MODE" \
    CLPRISM_LOG=/tmp/clprism-vg-%p.jsonl CLPRISM_SUMMARY=off \
    valgrind --leak-check=full --show-leak-kinds=definite,indirect \
    --num-callers=40 --error-exitcode=0 --log-file="$log" $cmd >/dev/null 2>&1
  rc=$?
  /usr/bin/python3 - "$log" "$name" "$rc" >>"$OUT.tmp" <<'PYEOF'
import re, sys
path, name, rc = sys.argv[1:4]
try:
    text = open(path, errors="replace").read()
except OSError:
    print(f"{name}: no valgrind log (rc {rc})"); sys.exit()
recs, cur = [], None
for line in text.splitlines():
    line = re.sub(r"^==\d+== ?", "", line)
    m = re.match(r"([\d,]+) (?:\(([\d,]+) direct, ([\d,]+) indirect\) )?bytes in [\d,]+ blocks are (definitely|indirectly) lost", line)
    if m:
        cur = {"bytes": int(m.group(1).replace(",", "")), "kind": m.group(4), "frames": []}
        recs.append(cur); continue
    if cur is not None:
        f = re.match(r"\s+(?:at|by) 0x[0-9A-F]+: (.*)", line)
        if f: cur["frames"].append(f.group(1))
        elif not line.strip(): cur = None
skip = re.compile(r"^(malloc|calloc|realloc|operator new|posix_memalign|aligned_alloc|memalign|"
                  r"<?alloc::|<?core::|<?std::|<?hashbrown::|__rust|<?serde|<?serde_json::|"
                  r"<?crossbeam|<?once_cell|<?parking_lot|<?rustc_hash)")
ours = lambda f: f.startswith(("OpenCL::", "<OpenCL::")) or "/src/" in f and "clprism" in f
mine, theirs = [], []
for r in recs:
    fr = [f for f in r["frames"] if not skip.match(f)]
    (mine if fr and ours(fr[0]) else theirs).append((r, fr[:1]))
# memcheck errors (invalid reads/writes, uninitialised values) whose first frame above
# std/alloc code is clprism's
errs_ours = 0
for blk in re.split(r"\n(?:==\d+== )?\n", re.sub(r"^==\d+== ?", "", text, flags=re.M)):
    lines = blk.strip().splitlines()
    if not lines or "lost in loss record" in lines[0] or not re.match(r"(Invalid|Conditional|Use of|Syscall|Mismatched|Source and dest)", lines[0]):
        continue
    fr = [re.sub(r"\s+(?:at|by) 0x[0-9A-F]+: ", "", l) for l in lines[1:] if re.match(r"\s+(?:at|by) 0x", l)]
    fr = [f for f in fr if not skip.match(f)]
    if fr and ours(fr[0]):
        errs_ours += 1
        print(f"  clprism memcheck error: {lines[0]} at {fr[0]}")
summ = re.search(r"definitely lost: ([\d,]+) bytes", text)
err = re.search(r"ERROR SUMMARY: (\d+) errors", text)
print(f"{name}: exit {rc}; definitely lost {summ.group(1) if summ else '?'} bytes in total; "
      f"memcheck errors {err.group(1) if err else '?'} ({errs_ours} in clprism); leak records allocated by clprism: {len(mine)} "
      f"({sum(r['bytes'] for r, _ in mine)} bytes), by driver/app: {len(theirs)} "
      f"({sum(r['bytes'] for r, _ in theirs)} bytes)")
for r, fr in mine:
    print(f"  clprism {r['kind']} {r['bytes']} bytes at {fr[0] if fr else '?'}")
PYEOF
done
{
  echo "# valgrind memcheck through clprism (CLPRISM_MODE=$MODE, POCL_DEVICES=$POCL_DEVICES)"
  echo "# command: scripts/valgrind.sh --mode $MODE   ($(date -u +%F), valgrind $(valgrind --version))"
  cat "$OUT.tmp"
} >"$OUT"
rm -f "$OUT.tmp"
cat "$OUT"
