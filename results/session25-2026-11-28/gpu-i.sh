#!/usr/bin/env bash
# Session 25, call i (nvidia-h200-x2): why `auto` keeps jacobi-2d (2,000 steps at 16384²)
# whole on 2 GPUs while `always` runs it 1.10x native (f/iterative-table.txt): one `auto` run
# of the final build with the log, and the full text of each distinct reason with its count.
# usage (GPU host, repository root): bash results/session25-2026-11-28/gpu-i.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
source .gpu/gpu-env.sh > /dev/null 2>&1
cd .gpu/mgpu/jacobi-long
timeout 60 env LD_PRELOAD=../../libOpenCL-new.so CLPRISM_MODE=balance CLPRISM_SPLIT=auto \
  CLPRISM_DEVICES=gpu:2 CLPRISM_LOG=/tmp/jacobi-auto.jsonl CLPRISM_SUMMARY=off ./jacobi-long.exe \
  > "$OUT/jacobi-auto.out" 2>&1
echo "rc $?" >> "$OUT/jacobi-auto.out"
python3 - /tmp/jacobi-auto.jsonl > "$OUT/jacobi-auto-reasons.txt" <<'PY'
import collections, json, re, sys
seen = collections.OrderedDict()
for line in open(sys.argv[1]):
    r = json.loads(line)
    s = r.get("schedule") or {}
    why = s.get("fallback") or ("split" if s.get("chunks") else "-")
    key = (r.get("kernel"), re.sub(r"[0-9]+(\.[0-9]+)?", "N", why))
    if key not in seen:
        seen[key] = [0, r.get("seq"), why]
    seen[key][0] += 1
for (k, _), (n, seq, why) in seen.items():
    print(f"{n:5d}x {k} (first at launch {seq}): {why}")
PY
