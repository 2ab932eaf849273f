#!/usr/bin/env bash
# hashcat cracks its hash through balance mode (issue 18; the missed crack of 39755ec): a
# brute-force MD5 crack (hashcat -m 0 -a 3 of md5("abc"), mask ?l?l?l, Debian `hashcat`)
# natively and in balance mode with CLPRISM_SPLIT=always and auto. A check, not a timed
# test: prints per run hashcat's exit code (0: cracked, 1: exhausted without a crack),
# whether the printed crack is right, and from clprism's log the launch records, those
# whose chunks ran on >= 2 devices, the kernels split and the most frequent fallbacks.
#
# Usage: bench/hashcat_check.sh [OUT_DIR]        (default: /tmp/hashcat_check)
#   REPS=N          runs per mode (default 2: the first after an emptied hashcat kernel
#                   cache builds from source, compiling and linking each kernel file; the
#                   next loads hashcat's cached binaries)
#   MODES="..."     native and/or CLPRISM_SPLIT values (default "native always auto")
#   RUN_TIMEOUT=S   seconds before a run is stopped (default 900)
#   LIB=path        the interposer (default target/release/libOpenCL.so)
#   CLPRISM=path    the clprism command of the same build (default target/release/clprism):
#                   hashcat dlopens "libOpenCL.so" by that name, which LD_PRELOAD alone
#                   does not catch; `clprism run` puts a libOpenCL.so link on its path
#   POCL_DEVICES    as the caller sets it (default "pthread pthread")
# Exit status: 0 when every run cracks the hash, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-/tmp/hashcat_check}
REPS=${REPS:-2}
MODES=${MODES:-"native always auto"}
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
LIB=${LIB:-$ROOT/target/release/libOpenCL.so}
CLPRISM=${CLPRISM:-$ROOT/target/release/clprism}
export POCL_DEVICES=${POCL_DEVICES:-"pthread pthread"}
HASH=900150983cd24fb0d6963f7d28e17f72 # md5("abc")
command -v hashcat >/dev/null || { echo "hashcat_check: hashcat missing (apt install hashcat)" >&2; exit 2; }
[ -f "$LIB" ] && [ -x "$CLPRISM" ] || { echo "hashcat_check: $LIB or $CLPRISM missing (cargo build --release)" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
for v in $(env | grep -o '^CLPRISM_[A-Z_]*'); do unset "$v"; done

# What clprism did with the launches of one run's log.
launches() { # log.jsonl
  /usr/bin/python3 - "$1" <<'PYEOF'
import collections, json, re, sys
n = split = 0
kernels, why = collections.Counter(), collections.Counter()
try:
    lines = open(sys.argv[1]).readlines()
except OSError:
    lines = []
for line in lines:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if not isinstance(r, dict) or r.get("record") is not None or "kernel" not in r:
        continue
    n += 1
    s = r.get("schedule") or {}
    if s.get("fallback"):
        why[re.sub(r"[0-9]+", "N", s["fallback"])] += 1
    devs = {c.get("device") for c in s.get("chunks") or [] if not c.get("failed") and not c.get("abandoned")}
    if len(devs) >= 2:
        split += 1
        kernels[r["kernel"]] += 1
print(f"launches {n}, on >= 2 devices {split} ({', '.join(f'{k} {c}' for k, c in kernels.most_common())})")
for w, c in why.most_common(4):
    print(f"      fallback x{c}: {w[:150]}")
PYEOF
}

status=0
for mode in $MODES; do
  # each mode starts from an empty hashcat kernel cache and clprism cache
  home="$OUT/home-$mode"
  rm -rf "$home" && mkdir -p "$home"
  for rep in $(seq "$REPS"); do
    log="$OUT/$mode-$rep.jsonl"
    rm -f "$log"
    pre=()
    [ "$mode" = native ] || pre=(CLPRISM_DEVICES=all CLPRISM_SPLIT="$mode"
      CLPRISM_CACHE="$home/clprism" "$CLPRISM" run --lib "$LIB" --mode balance --log "$log"
      --summary off --)
    t0=$(date +%s)
    (cd "$home" && timeout -k 5 "$RUN_TIMEOUT" env HOME="$home" XDG_CACHE_HOME="$home/.cache" \
      XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config" "${pre[@]}" \
      hashcat -m 0 -a 3 "$HASH" '?l?l?l' -d 1 --potfile-disable --logfile-disable \
      --restore-disable --quiet >"$OUT/$mode-$rep.txt" 2>&1)
    rc=$?
    crack=no
    grep -qx "$HASH:abc" "$OUT/$mode-$rep.txt" && crack=yes
    [ "$rc" = 0 ] && [ "$crack" = yes ] || status=1
    printf '%-7s run %d: exit %d, cracked %s, %d s\n' "$mode" "$rep" "$rc" "$crack" $(($(date +%s) - t0))
    [ "$mode" = native ] || launches "$log" | sed 's/^/      /'
  done
done
echo "hashcat $(hashcat --version 2>/dev/null); POCL_DEVICES=\"$POCL_DEVICES\"; lib: $LIB; clprism: $CLPRISM"
exit $status
