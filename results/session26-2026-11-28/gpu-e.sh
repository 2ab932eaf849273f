#!/usr/bin/env bash
# Session 26, call e (nvidia-h200-x2): gpu-d.sh again with the build at 82fbcb9 (a slab's
# written range in one step; 256-item work-groups on a GPU when the app passes no local size):
# BabelStream 1,000 iterations natively, `auto` and `always`, and fdtd-2d 5,000 steps `always`
# (a check that the resident stencils are unchanged or faster).
# usage (GPU host, repository root, `.gpu` carried): bash results/session26-2026-11-28/gpu-e.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
W=/tmp/s26e
source .gpu/gpu-env.sh > /dev/null 2>&1
LIB=.gpu/libOpenCL-s26.so GPUSETS=2 WARM=0 RUN_TIMEOUT=120 DEADLINE_S=400 SPLITS="auto always" \
  timeout 300 bash bench/multi_gpu.sh $W stream-long > $W.progress 2>&1
LIB=.gpu/libOpenCL-s26.so GPUSETS=2 WARM=0 NATIVE=0 RUN_TIMEOUT=60 DEADLINE_S=100 SPLITS=always \
  timeout 120 bash bench/multi_gpu.sh $W-fdtd fdtd-long > $W-fdtd.progress 2>&1
cat $W/table.txt $W-fdtd/table.txt > "$OUT/table.txt"
mkdir -p $W/x $W-fdtd/x && tar xzf $W/logs.tgz -C $W/x && tar xzf $W-fdtd/logs.tgz -C $W-fdtd/x
grep -A1 'GPU Time' $W-fdtd/x/logs/fdtd-long.always.gpu2.out >> "$OUT/table.txt"
python3 - $W/x/logs/*.jsonl > "$OUT/split-walls.txt" <<'PY'
import collections, json, sys
for path in sys.argv[1:]:
    per = collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        s = r.get("schedule") or {}
        if s.get("chunks") and s.get("merge"):
            ph = {p["name"]: p["end_ns"] - p["start_ns"] for p in s.get("phases") or []}
            dev = [c.get("device_ns") or 0 for c in s["chunks"]]
            per[r["kernel"]].append((s.get("wall_ns") or 0, s.get("fetched_bytes") or 0,
                                     ph.get("keep_resident", 0), max(dev), r.get("local")))
    print("==", path.split("/")[-1])
    for k, v in per.items():
        walls = sorted(x[0] for x in v)
        med = lambda i: sorted(x[i] for x in v)[len(v) // 2]
        print(f"  {k}: {len(v)} split, wall median {walls[len(walls)//2]/1e3:.0f} us, "
              f"min {walls[0]/1e3:.0f} us, keep_resident median {med(2)/1e3:.0f} us, "
              f"slowest chunk's device time median {med(3)/1e3:.0f} us, "
              f"fetched total {sum(x[1] for x in v)/1e6:.0f} MB, app's local {v[0][4]}")
PY
cat "$OUT/table.txt" "$OUT/split-walls.txt"
