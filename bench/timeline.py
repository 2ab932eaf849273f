#!/usr/bin/env python3
"""Where the time between split launches goes, from a balance-mode log (CLPRISM_LOG).

For each device, the idle time between the end of one launch's chunk and the start of the
next launch's chunk on it, split into what the records can tell apart:

  * app:      from the device's last chunk end to the app's enqueue of the next launch
              (`time_ns`), when the enqueue came after it (the app waited, e.g. clFinish);
  * handoff:  from the enqueue (or the chunk end, when later) to the launch thread's start
              (`time_ns + started_ns`);
  * setup:    from the launch thread's start to the chunk's enqueue (`enqueue_ns`);
  * device:   from the chunk's enqueue to its start on the device (`start_ns`); for a launch
              issued ahead (enqueued behind the one before), the whole gap.

Times come from `schedule.chunks` (ns since the launch's start: `enqueue_ns`, `start_ns` =
`end_ns - device_ns`, the end as seen by the launch thread) and the record's `time_ns` and
`schedule.started_ns` (`schedule.issued_ns` for a launch issued ahead). A chunk's start is estimated from its completion as seen (the poll
interval late at most) minus its profiled device time.

usage: bench/timeline.py LOG [--kernels K1,K2] [--skip N]
"""
import json
import sys
from collections import defaultdict


def records(path):
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            s = r.get("schedule") or {}
            if s.get("chunks") and "started_ns" in s:
                yield r


def chunk_spans(r):
    """(device, enqueue, start, end) per chunk, absolute ns (host clock)."""
    s = r["schedule"]
    devs = s.get("devices") or []
    # a launch issued ahead counts its chunk times from when it was taken up
    base = r["time_ns"] + s.get("issued_ns", s["started_ns"])
    for c in s["chunks"]:
        if c.get("device_ns") is None or c.get("end_ns") is None:
            continue
        d = devs[c["device"]] if c["device"] < len(devs) else c["device"]
        d = d.get("index", d) if isinstance(d, dict) else d
        end = base + c["end_ns"]
        yield str(d), base + c["enqueue_ns"], end - c["device_ns"], end


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    path, skip = args[0], 0
    if "--skip" in args:
        skip = int(args[args.index("--skip") + 1])
    recs = list(records(path))[skip:]
    last_end = {}  # device -> end of its latest chunk
    gaps = defaultdict(lambda: defaultdict(float))  # kernel -> part -> ns
    counts = defaultdict(int)
    busy = defaultdict(float)
    for r in recs:
        s = r["schedule"]
        enq, began = r["time_ns"], r["time_ns"] + s["started_ns"]
        first = {}
        for d, q, st, en in chunk_spans(r):
            busy[d] += en - st
            if d not in first or st < first[d][1]:
                first[d] = (q, st)
        for d, (q, st) in first.items():
            prev = last_end.get(d)
            if prev is None or st <= prev:
                continue
            k = r["kernel"]
            counts[k] += 1
            g = gaps[k]
            t = prev
            if s.get("issued_ahead"):
                # enqueued behind the running launch: what is left is on the devices
                g["device"] += st - t
                continue
            for part, until in (("app", enq), ("handoff", began), ("setup", q), ("device", st)):
                if until > t:
                    g[part] += until - t
                    t = until
        for d, _, _, en in chunk_spans(r):
            last_end[d] = max(last_end.get(d, 0), en)
    # after the last chunk: the launch's own end work (wall_ns ends when the launch thread
    # is done with it, before the app's event is set) and from then to the app's next enqueue
    tail, after, n_tail = 0.0, 0.0, 0
    for r, nxt in zip(recs, recs[1:]):
        s = r["schedule"]
        if s.get("issued_ahead") or "wall_ns" not in s:
            continue
        base = r["time_ns"] + s["started_ns"]
        last = max((c["end_ns"] for c in s["chunks"] if c.get("end_ns") is not None), default=None)
        if last is None:
            continue
        end = base + s["wall_ns"]
        if nxt["time_ns"] < end:
            continue  # the app enqueued the next one before this one ended
        tail += base + s["wall_ns"] - (base + last)
        after += nxt["time_ns"] - end
        n_tail += 1
    if n_tail:
        print(f"{n_tail} launches the app waited for: {tail / n_tail / 1e3:.1f} us from the last "
              f"chunk seen to the launch's end, {after / n_tail / 1e3:.1f} us from there to the "
              f"app's next enqueue")
    print(f"{len(recs)} split launches; device busy: "
          + ", ".join(f"{d} {b / 1e9:.3f} s" for d, b in sorted(busy.items())))
    print(f"{'kernel':<24} {'gaps':>6} {'app':>9} {'handoff':>9} {'setup':>9} {'device':>9}  (us per gap)")
    for k in sorted(gaps):
        n = counts[k]
        g = gaps[k]
        print(f"{k:<24} {n:>6} " + " ".join(
            f"{g[p] / n / 1e3:>9.1f}" for p in ("app", "handoff", "setup", "device")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
