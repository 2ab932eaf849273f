#!/usr/bin/env python3
"""Balance-mode launch records of clprism logs (JSONL on stdin, or the files named): how many,
how many took the balanced path, how many completed chunks on >= 2 devices, and the most
frequent fallback reasons (numbers replaced by N). Used by bench/stress_exit.sh,
bench/stress_piglit.sh and bench/multi_gpu.sh.
usage: bench/balance_launches.py [--examples] [LOG.jsonl ...] (no file: stdin)
  --examples: after each reason, its first launch's text in full (the figures the decision
              weighed: the grouped line replaces them by N and is cut at 160 characters)"""
import collections, fileinput, json, re, sys

examples = "--examples" in sys.argv
if examples:
    sys.argv.remove("--examples")
n = split = balanced = 0
why = collections.Counter()
first = {}
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
        key = re.sub(r"[0-9]+", "N", s["fallback"])
        why[key] += 1
        first.setdefault(key, (r.get("seq"), r.get("kernel"), s["fallback"]))
    elif s:
        balanced += 1
    devs = {c.get("device") for c in s.get("chunks") or [] if not c.get("failed") and not c.get("abandoned")}
    split += len(devs) >= 2
print(f"{n} launch records: {balanced} through the balanced path, {split} of them completed chunks on >= 2 devices")
for w, c in why.most_common(5):
    print(f"  fallback x{c}: {w[:160]}")
    if examples:
        seq, kernel, text = first[w]
        print(f"    first, launch {seq} ({kernel}): {text}")
