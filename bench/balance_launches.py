#!/usr/bin/env python3
"""Balance-mode launch records of clprism logs (JSONL on stdin, or the files named): how many,
how many took the balanced path, how many completed chunks on >= 2 devices, and the most
frequent fallback reasons (numbers replaced by N). Used by bench/stress_exit.sh and
bench/stress_piglit.sh.
usage: bench/balance_launches.py [LOG.jsonl ...] (no file: stdin)"""
import collections, fileinput, json, re

n = split = balanced = 0
why = collections.Counter()
for line in fileinput.input():
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
    elif s:
        balanced += 1
    devs = {c.get("device") for c in s.get("chunks") or [] if not c.get("failed") and not c.get("abandoned")}
    split += len(devs) >= 2
print(f"{n} launch records: {balanced} through the balanced path, {split} of them completed chunks on >= 2 devices")
for w, c in why.most_common(5):
    print(f"  fallback x{c}: {w[:160]}")
