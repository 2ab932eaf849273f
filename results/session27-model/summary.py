#!/usr/bin/env python3
"""Per-GPU and pooled figures of one per-kernel table of a model-ablation.txt (session 24's
format): MAPE per GPU over both corpora, Panwar's relative-performance error
(||T'_measured - T'_projected|| / sqrt(2) over the unit-normalised (H100, H200) vectors of
each kernel, Panwar §V), the anchored MAPE (one GPU's measured time times the model's
ratio of the two, DESIGN.md §9), and how often the projected faster GPU is the measured one (or
the two measure within 3 %).
usage: summary.py ABLATION.txt [SECTION]   (SECTION: the n-th '## per kernel' table, 1 = recommended)"""
import math, re, statistics, sys
f, sec = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1
rows, n = [], 0
for l in open(f):
    if l.startswith("## per kernel"):
        n += 1
        continue
    if n != sec:
        continue
    m = re.match(r"(examples|polybench)\s+(.+?)\s+([\d.]+)\s+([\d.]+)\s+[+-]\d+%\s+\S+\s+\|\s+([\d.]+)\s+([\d.]+)", l)
    if m:
        rows.append((m.group(1), m.group(2), *map(float, m.groups()[2:])))
def unit(a, b):
    z = math.hypot(a, b)
    return a / z, b / z
ape = {"h100": [], "h200": []}
rel, hits = [], 0
anch = {"h100": [], "h200": []}
for c, k, m1, p1, m2, p2 in rows:
    ape["h100"].append(abs(p1 / m1 - 1) * 100)
    ape["h200"].append(abs(p2 / m2 - 1) * 100)
    a, b = unit(m1, m2), unit(p1, p2)
    rel.append(math.hypot(a[0] - b[0], a[1] - b[1]) / math.sqrt(2) * 100)
    hits += (m2 < m1) == (p2 < p1) or abs(m2 / m1 - 1) < 0.03
    # anchored: the other GPU's measured time scaled by the model's ratio (DESIGN.md §9)
    anch["h200"].append(abs(m1 * p2 / p1 / m2 - 1) * 100)
    anch["h100"].append(abs(m2 * p1 / p2 / m1 - 1) * 100)
print(f"{f} table {sec}: {len(rows)} kernels, MAPE h100 {statistics.mean(ape['h100']):.1f}% "
      f"h200 {statistics.mean(ape['h200']):.1f}% pooled {statistics.mean(ape['h100'] + ape['h200']):.1f}%; "
      f"Panwar relative error mean {statistics.mean(rel):.1f}% median {statistics.median(rel):.1f}% "
      f"max {max(rel):.1f}%; projected best = measured best (or within 3 %) {hits}/{len(rows)}; "
      f"anchored MAPE h200 (from the H100's time) {statistics.mean(anch['h200']):.1f}%, "
      f"h100 (from the H200's) {statistics.mean(anch['h100']):.1f}%")
