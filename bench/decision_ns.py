#!/usr/bin/env python3
"""Issue 18 item 2: what balance mode spent on the app's thread before forwarding each launch
it did not split (`schedule.decision_ns`), per clprism log: launches, split launches, the
median / p90 / mean decision_ns, and the most frequent fallback reasons (figures masked as #).

Usage: bench/decision_ns.py LOG.jsonl [LOG.jsonl ...]
"""
import json
import re
import statistics
import sys
from collections import Counter


def summary(path):
    reasons, ns, launches, split = Counter(), [], 0, 0
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if "kernel" not in r:
                continue  # a device definition line
            launches += 1
            s = r.get("schedule") or {}
            fb = s.get("fallback")
            if fb is None and s.get("chunks"):
                split += 1
            reasons[re.sub(r"[0-9.]+", "#", str(fb))[:100]] += 1
            if s.get("decision_ns") is not None:
                ns.append(s["decision_ns"])
    ns.sort()
    pick = lambda q: ns[min(len(ns) - 1, int(len(ns) * q))] if ns else None
    mean = int(statistics.mean(ns)) if ns else None
    print(f"{path}: {launches} launches, {split} split; decision_ns median {pick(0.5)} "
          f"p90 {pick(0.9)} mean {mean}")
    for text, n in reasons.most_common(5):
        print(f"  {n:6d}  {text}")


for p in sys.argv[1:]:
    summary(p)
