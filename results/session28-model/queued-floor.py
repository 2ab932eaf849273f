#!/usr/bin/env python3
"""Session 28b: the two launch floors of a GPU from the launches of the near-empty kernel
`tag` (examples/mt_launch: 4 work-groups of 16 work-items, 8 host threads; body a few ns)
in the two stored runs of the examples on an H100 and an H200: gpu-profile-2026-11-22
(its own hosts) and gpu-2026-11-22c (the corpus run; `tag`'s row there is the median of its
launches, which waited on an idle GPU, so the queued ones do not set it). A launch waited
behind other work when START - SUBMIT (`queued_ns`) exceeds QUEUED_BEHIND_NS (10 us: an idle
GPU's submit-to-start is 3.9-4.4 us, at most 6.6 us over 1,300 idle launches, plus the
shortest launch that can run ahead of it, ~3 us). Prints per GPU: the launches of each
state and the median END - START. Offline; run from the repository root."""
import json, os, statistics, sys, tarfile, tempfile
here = os.path.dirname(os.path.abspath(__file__)); res = os.path.dirname(here)
tmp = tempfile.mkdtemp(prefix="clprism-s28b-")
for g in ("h100", "h200"):
    os.makedirs(f"{tmp}/gp/{g}"); os.makedirs(f"{tmp}/c/{g}")
    tarfile.open(f"{res}/gpu-profile-2026-11-22/{g}/accuracy-logs.tgz").extractall(f"{tmp}/gp/{g}")
with tarfile.open(f"{res}/session27-model-b/stats-load-waits.tgz") as t:
    t.extractall(f"{tmp}/c")
QUEUED_BEHIND_NS = 10_000
for g in ("h100", "h200"):
    idle, queued = [], []
    for f in (f"{tmp}/gp/{g}/logs/mt_launch.1_0.jsonl", f"{tmp}/c/examples/{g}/logs/mt_launch.1_0.jsonl"):
        for l in open(f):
            r = json.loads(l)
            if r.get("kernel") != "tag" or not r.get("device_ns") or r.get("queued_ns") is None:
                continue
            (queued if r["queued_ns"] > QUEUED_BEHIND_NS else idle).append(r["device_ns"])
    print(f"{g}: idle {len(idle)} launches, median END-START {statistics.median(idle):.0f} ns; "
          f"queued behind work {len(queued)} launches, median {statistics.median(queued):.0f} ns "
          f"(min {min(queued)}, max {max(queued)})")
