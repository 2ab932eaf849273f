#!/usr/bin/env bash
# Session 26, call b (nvidia-h200-x2): as gpu-a.sh after ce6daf3 (a barrier without a wait
# list keeps the queue quiet; in call a no launch was issued ahead, PolyBench-ACC enqueues a
# barrier between the kernels of a time step). Pipelined launches off against on, one build
# (.gpu/libOpenCL-pipe.so), fdtd-2d (5,000 steps) and jacobi-2d (2,000 steps) at 16384² over
# both GPUs: natively once, `always` off/on twice alternating, `auto` off/on once; then the
# kernel time, digest and launches issued ahead of every run (summary.txt), and one fdtd-2d
# (500 steps) with CLPRISM_DEBUG=1 and the pipeline on (its timeline).
# usage (GPU host, repository root, `.gpu` carried): bash results/session26-2026-11-28/gpu-b.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
W=/tmp/s26b
source .gpu/gpu-env.sh > /dev/null 2>&1
export LIB=.gpu/libOpenCL-pipe.so GPUSETS=2 WARM=0 RUN_TIMEOUT=60 DEADLINE_S=200
step() { # NAME NATIVE SPLITS PIPELINE APPS...
  local name=$1 native=$2 splits=$3 pipe=$4; shift 4
  NATIVE=$native SPLITS=$splits CLPRISM_BALANCE_PIPELINE=$pipe timeout 230 \
    bash bench/multi_gpu.sh "$W/$name" "$@" > "$W/$name.progress" 2>&1
}
mkdir -p $W
step always-off-1 1 always off fdtd-long jacobi-long
step always-on-1 0 always on fdtd-long jacobi-long
step always-off-2 0 always off fdtd-long jacobi-long
step always-on-2 0 always on fdtd-long jacobi-long
step auto-off 0 auto off fdtd-long jacobi-long
step auto-on 0 auto on fdtd-long jacobi-long
NATIVE=0 SPLITS=always CLPRISM_BALANCE_PIPELINE=on CLPRISM_DEBUG=1 timeout 60 \
  bash bench/multi_gpu.sh $W/debug fdtd-2d > $W/debug.progress 2>&1
for d in $W/*/; do mkdir -p "$d/x" && tar xzf "$d/logs.tgz" -C "$d/x" 2>/dev/null; done
{
  echo "run app kernel_s digest split_launches issued_ahead"
  for f in $W/*/x/logs/*.out; do
    j=${f%.out}.jsonl; n=$(basename "$(dirname "$(dirname "$(dirname "$f")")")")
    echo "$n $(basename "$f" .out) $(grep -A1 'GPU Time' "$f" | tail -1) $(grep -o 'digest: [0-9a-f]*' "$f" | cut -c9-) \
$( [ -f "$j" ] && grep -c '"merge":"resident"' "$j") $( [ -f "$j" ] && grep -c '"issued_ahead":true' "$j")"
  done
} > $W/summary.txt
grep -E "launch (1400|1401|1402|1403|1404)[: ]|halo batch|chunk enqueue|taken up" $W/debug/x/logs/fdtd-2d.always.gpu2.out \
  | sed -n '/launch 1400: on/,/launch 1404: on/p' | head -90 > $W/debug-timeline.txt
python3 - $W/debug/x/logs/fdtd-2d.always.gpu2.jsonl > $W/debug-records.txt <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if 1399 <= r.get("seq", 0) <= 1409:
        s = r.get("schedule") or {}
        print(r["seq"], r["kernel"], "ahead" if s.get("issued_ahead") else "-", "wall_us",
              round((s.get("wall_ns") or 0) / 1e3), "chunks(dev,enq,start,end us)",
              [(c["device"], round((c.get("enqueue_ns") or 0) / 1e3), round((c.get("start_ns") or 0) / 1e3),
                round((c.get("end_ns") or 0) / 1e3)) for c in s.get("chunks") or []])
PY
for d in $W/*/; do echo "== $(basename "$d")"; cat "$d/table.txt"; done > $W/tables.txt
cp $W/summary.txt $W/debug-timeline.txt $W/debug-records.txt $W/tables.txt "$OUT/"
cat "$OUT/summary.txt"; cat "$OUT/debug-records.txt"
