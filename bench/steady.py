#!/usr/bin/env python3
"""Per-launch times of the runs of bench/gpu_balance.sh (its logs/ folder).

For every log: the number of launches, the first launch's time, the mean of the later
launches ("steady"), the sum over all launches, and the steady speedup against the same
app's `native-log` run (the app under clprism's log mode: the kernel's device time, which is
what the launch costs natively). A balanced launch's time is its `schedule.wall_ns`: from
the launch's start barrier to the merged result in the app's buffer (footprint, snapshot,
chunks, read-back, write-back), so transfers are included.

Then a second table with the median of launches 3..N (launch 2 pays the one-time uploads
into fresh replicas and pinned staging), and, given the runs' balance.txt, the app's own
end-to-end time_ms against its native run.

Usage: bench/steady.py LOGDIR [BALANCE_TXT]
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
    print()
    print("%-16s %-26s %10s %9s %9s %8s" % (
        "app", "config", "launch2_ms", "med3+_ms", "native_ms", "speedup"))
    for app, runs in rows.items():
        base = next((t for c, t, _ in runs if c == "native-log"), None)
        nat = median(base[2:]) if base and len(base) > 2 else None
        for cfg, t, _ in runs:
            if len(t) < 3:
                continue
            m = median(t[2:])
            print("%-16s %-26s %10.1f %9.1f %9.1f %8.2f" % (
                app, cfg, t[1], m, nat or float("nan"), nat / m if nat and m > 0 else float("nan")))
    efficiency(rows)
    if len(sys.argv) > 2:
        end_to_end(sys.argv[2])


def efficiency(rows):
    """Boyer's efficiency (dissertation §4.1, footnote 1: the measured throughput divided by
    the sum of the throughputs of the devices executing separately) of each run of an app
    that also has a `native-cpu-log` run: the GPU alone is its `native-log` run, the CPU
    alone its `native-cpu-log` run, both as median of launches 3..N (2..N when shorter)."""
    def steady(t):
        return median(t[2:] if len(t) > 2 else t[1:] or t)
    out = []
    for app, runs in rows.items():
        by = {c: t for c, t, _ in runs}
        if "native-log" not in by or "native-cpu-log" not in by:
            continue
        gpu, cpu = steady(by["native-log"]), steady(by["native-cpu-log"])
        ideal = 1.0 / (1.0 / gpu + 1.0 / cpu)
        for cfg, t, _ in runs:
            m = steady(t)
            out.append("%-16s %-26s %9.2f %9.1f %9.1f %9.2f %10.3f" % (
                app, cfg, m, gpu, cpu, ideal, ideal / m if m > 0 else float("nan")))
    if out:
        print()
        print("%-16s %-26s %9s %9s %9s %9s %10s" % (
            "app", "config", "med_ms", "gpu_ms", "cpu_ms", "ideal_ms", "efficiency"))
        print("\n".join(out))


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def end_to_end(path):
    """The app's own time_ms (uploads, every launch, read-back) against its native run."""
    runs = {}
    for line in open(path):
        f = line.split()
        if len(f) < 5 or not any(x.startswith("time_ms=") for x in f):
            continue
        ms = next(x for x in f if x.startswith("time_ms="))[len("time_ms="):]
        try:
            runs.setdefault(f[0], []).append((f[1], float(ms)))
        except ValueError:
            pass
    print()
    print("%-16s %-26s %12s %12s %8s" % ("app", "config", "app_time_ms", "native_ms", "ratio"))
    for app, rs in runs.items():
        nat = next((ms for c, ms in rs if c == "native"), None)
        for cfg, ms in rs:
            print("%-16s %-26s %12.1f %12s %8s" % (
                app, cfg, ms, "%.1f" % nat if nat else "?",
                "%.2f" % (nat / ms) if nat and ms > 0 else "?"))


if __name__ == "__main__":
    main()
