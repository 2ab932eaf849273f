#!/usr/bin/env bash
# Session 26, call a (nvidia-h200-x2): pipelined launches (CLPRISM_BALANCE_PIPELINE) off
# against on, one build (.gpu/libOpenCL-pipe.so, stripped `target/release/libOpenCL.so`),
# PolyBench fdtd-2d (5,000 steps) and jacobi-2d (2,000 steps) at 16384² over both GPUs:
# natively once, then `always` off/on twice alternating and `auto` off/on once; then one
# fdtd-2d (500 steps) with CLPRISM_DEBUG=1 and the pipeline on (its timeline).
# usage (GPU host, repository root, `.gpu` carried): bash results/session26-2026-11-28/gpu-a.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
source .gpu/gpu-env.sh > /dev/null 2>&1
export LIB=.gpu/libOpenCL-pipe.so GPUSETS=2 WARM=0 RUN_TIMEOUT=60 DEADLINE_S=200
step() { # NAME NATIVE SPLITS PIPELINE APPS...
  local name=$1 native=$2 splits=$3 pipe=$4; shift 4
  NATIVE=$native SPLITS=$splits CLPRISM_BALANCE_PIPELINE=$pipe timeout 230 \
    bash bench/multi_gpu.sh "/tmp/s26a/$name" "$@" > "$OUT/$name-progress.txt" 2>&1
  cp "/tmp/s26a/$name/table.txt" "$OUT/$name-table.txt"
  echo "== $name"; cat "$OUT/$name-table.txt"
}
step always-off-1 1 always off fdtd-long jacobi-long
step always-on-1 0 always on fdtd-long jacobi-long
step always-off-2 0 always off fdtd-long jacobi-long
step always-on-2 0 always on fdtd-long jacobi-long
step auto-off 0 auto off fdtd-long
step auto-on 0 auto on fdtd-long
NATIVE=0 SPLITS=always CLPRISM_BALANCE_PIPELINE=on CLPRISM_DEBUG=1 timeout 60 \
  bash bench/multi_gpu.sh /tmp/s26a/debug fdtd-2d > "$OUT/debug-progress.txt" 2>&1
tar xzf /tmp/s26a/debug/logs.tgz -C /tmp/s26a/debug 2>/dev/null
grep -E "launch (1400|1401|1402|1403|1404)[: ]|halo batch|chunk enqueue" /tmp/s26a/debug/logs/fdtd-2d.always.gpu2.out \
  | sed -n '/launch 1400/,/launch 1404: on/p' | head -80 > "$OUT/debug-timeline.txt"
python3 - /tmp/s26a/debug/logs/fdtd-2d.always.gpu2.jsonl > "$OUT/debug-records.txt" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if 1399 <= r.get("seq", 0) <= 1406:
        s = r.get("schedule") or {}
        print(r["seq"], r["kernel"], "ahead" if s.get("issued_ahead") else "-", "wall_us",
              round((s.get("wall_ns") or 0) / 1e3), "chunks",
              [(c["device"], round(c.get("start_ns", 0) / 1e3), round(c.get("end_ns", 0) / 1e3))
               for c in s.get("chunks") or []])
PY
ls -la "$OUT"
