#!/usr/bin/env python3
"""Per-launch times of the runs of bench/gpu_balance.sh (its logs/ folder).

For every log: the number of launches, the first launch's time, the mean of the later
launches ("steady"), the sum over all launches, and the steady speedup against the same
app's `native-log` run (the app under clprism's log mode: the kernel's device time, which is
what the launch costs natively). A balanced launch's time is its `schedule.wall_ns`: from
the launch's start barrier to the merged result in the app's buffer (footprint, snapshot,
chunks, read-back, write-back), so transfers are included.

Usage: bench/steady.py LOGDIR
"""
import glob
import json
import os
import sys


def launch_times(path):
    """(ms per launch, number of launches that were split across devices)."""
    times, split = [], 0
    for line in open(path):
        r = json.loads(line)
        s = r.get("schedule")
        if isinstance(s, dict):
            if s.get("fallback"):
                times.append(r.get("device_ns", 0) / 1e6)
                continue
            times.append(s.get("wall_ns", 0) / 1e6)
            if sum(1 for x in s.get("share", []) if x > 0) > 1:
                split += 1
        elif r.get("device_ns") is not None:
            times.append(r["device_ns"] / 1e6)
    return times, split


def main():
    rows = {}
    for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.jsonl"))):
        app, cfg = os.path.basename(f)[: -len(".jsonl")].split(".", 1)
        t, split = launch_times(f)
        if t:
            rows.setdefault(app, []).append((cfg, t, split))
    print("%-16s %-26s %8s %6s %10s %10s %10s %9s" % (
        "app", "config", "launches", "split", "first_ms", "steady_ms", "sum_ms", "speedup"))
    for app, runs in rows.items():
        base = next((t for c, t, _ in runs if c == "native-log"), None)
        base_steady = sum(base[1:]) / len(base[1:]) if base and len(base) > 1 else None
        for cfg, t, split in runs:
            steady = sum(t[1:]) / len(t[1:]) if len(t) > 1 else float("nan")
            sp = base_steady / steady if base_steady and steady == steady and steady > 0 else float("nan")
            print("%-16s %-26s %8d %6d %10.1f %10.1f %10.1f %9.2f" % (
                app, cfg, len(t), split, t[0], steady, sum(t), sp))


if __name__ == "__main__":
    main()
