#!/usr/bin/env python3
"""Per-kernel view of `clprism accuracy --measured ... --projected ... --format json` (issue 19):
the tool reports one row per kernel shape (program, name, NDRange); apps like lu launch one
kernel over hundreds of shapes, which then dominate the averages. Here each kernel (program
and name) counts once: its shapes' APEs and relative errors are averaged first, its best-device
hit is the majority over its shapes.
usage: bench/accuracy_per_kernel.py ACCURACY.json"""
import collections, json, statistics, sys

d = json.load(open(sys.argv[1]))
by = collections.defaultdict(list)
for r in d["rows"]:
    by[(r["id"]["program"], r["id"]["kernel"])].append(r)
ape = collections.defaultdict(list)
anch, rel, hits = [], [], 0
for rows in by.values():
    per_dev = collections.defaultdict(list)
    per_anch = []
    for r in rows:
        for c in r["cells"]:
            if c.get("ape_model") is not None:
                per_dev[c["device"]].append(c["ape_model"])
            if c.get("ape_anchored") is not None:
                per_anch.append(c["ape_anchored"])
    for dev, v in per_dev.items():
        ape[dev].append(statistics.mean(v))
    if per_anch:
        anch.append(statistics.mean(per_anch))
    rel.append(statistics.mean(r["relative_error"] for r in rows))
    hit = sum(1 for r in rows if r.get("best_measured") == r.get("best_projected"))
    hits += hit * 2 > len(rows)
print(f"{len(by)} kernels ({len(d['rows'])} shapes)")
for dev, v in sorted(ape.items()):
    print(f"  model MAPE on {dev}: {100 * statistics.mean(v):.1f} % (median {100 * statistics.median(v):.1f} %)")
allv = [x for v in ape.values() for x in v]
print(f"  model MAPE, both devices: {100 * statistics.mean(allv):.1f} %")
if anch:
    print(f"  anchored MAPE off the launch device: {100 * statistics.mean(anch):.1f} %")
print(f"  relative-performance error (Panwar): mean {100 * statistics.mean(rel):.1f} %, median {100 * statistics.median(rel):.1f} %")
print(f"  projected best = measured best: {hits} of {len(by)} kernels")
