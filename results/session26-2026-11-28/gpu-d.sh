#!/usr/bin/env bash
# Session 26, call d (nvidia-h200-x2): BabelStream at steady state (1 GiB float arrays, 1,000
# iterations: the 100-iteration run ends before the devices have opened) natively, in `auto`
# and in `always` over both GPUs, with the build at 3558d7e (.gpu/libOpenCL-s26.so); the
# reasons of each mode (table.txt) and, per kernel, the split launches' wall and fetched bytes
# (split-walls.txt).
# usage (GPU host, repository root, `.gpu` carried): bash results/session26-2026-11-28/gpu-d.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
W=/tmp/s26d
source .gpu/gpu-env.sh > /dev/null 2>&1
LIB=.gpu/libOpenCL-s26.so GPUSETS=2 WARM=0 RUN_TIMEOUT=120 DEADLINE_S=400 SPLITS="auto always" \
  timeout 420 bash bench/multi_gpu.sh $W stream-long > $W.progress 2>&1
cp $W/table.txt "$OUT/table.txt"
mkdir -p $W/x && tar xzf $W/logs.tgz -C $W/x
python3 - $W/x/logs/*.jsonl > "$OUT/split-walls.txt" <<'PY'
import collections, json, sys
for path in sys.argv[1:]:
    per = collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        s = r.get("schedule") or {}
        if s.get("chunks") and s.get("merge"):
            per[r["kernel"]].append((s.get("wall_ns") or 0, s.get("fetched_bytes") or 0, s.get("merge")))
    print("==", path.split("/")[-1])
    for k, v in per.items():
        walls = sorted(w for w, _, _ in v)
        print(f"  {k}: {len(v)} split, wall median {walls[len(walls)//2]/1e3:.0f} us, "
              f"min {walls[0]/1e3:.0f} us, fetched total {sum(f for _, f, _ in v)/1e6:.0f} MB, "
              f"merges {collections.Counter(m for _, _, m in v)}")
PY
cat "$OUT/table.txt" "$OUT/split-walls.txt"
