#!/usr/bin/env python3
"""Paired time ratios of bench/real_apps.sh's runs, with 95 % confidence intervals.

bench/real_apps.sh runs each app's modes interleaved (native, auto, log, native, ...) and
appends every run's time, in run order, to times.tsv (`app<TAB>mode<TAB>ms ms ...`). Run r of
a mode and run r of native share a round, so a drift of the machine's speed touches both;
the ratio of the two is a paired sample. Per app and mode this prints:

  median    the ratio of the medians (what real_apps.sh's table shows)
  paired    the geometric mean of the per-round ratios, and its 95 % interval (Student's t
            on the logarithms of the ratios, n - 1 degrees of freedom): an interval that
            holds 1.00 means the app's runs cannot tell the mode from native
  rounds    n

and, over all apps, the geometric mean of the per-app paired ratios with its 95 % interval
(t on the per-app log means, apps as the sample): the mode's systematic cost on this corpus.

Usage: bench/paired_ratios.py TIMES_TSV [MODE ...]   (default modes: every mode but native)
"""
import math
import statistics
import sys

# two-sided 97.5 % quantiles of Student's t, by degrees of freedom (1..30); beyond: normal
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    return T975[df - 1] if df <= len(T975) else 1.960


def interval(logs):
    """Geometric mean of exp(logs) and its 95 % interval, or None when n < 2."""
    n = len(logs)
    m = statistics.fmean(logs)
    if n < 2:
        return math.exp(m), None, None
    h = t975(n - 1) * statistics.stdev(logs) / math.sqrt(n)
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def read(path):
    times = {}
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 3 or not parts[2].strip():
            continue
        app, mode, ms = parts
        try:
            times.setdefault(app, {})[mode] = [float(x) for x in ms.split()]
        except ValueError:
            continue
    return times


def fmt(g, lo, hi):
    return f"{g:5.2f} [{lo:4.2f}, {hi:4.2f}]" if lo is not None else f"{g:5.2f} [  -  ,   -  ]"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    times = read(sys.argv[1])
    modes = sys.argv[2:] or sorted({m for t in times.values() for m in t} - {"native"})
    print(f"{'app':20} {'mode':7} {'median':>6}  {'paired, 95 % interval':22} rounds")
    per_mode = {m: [] for m in modes}
    for app, t in times.items():
        if "native" not in t:
            continue
        for m in modes:
            if m not in t:
                continue
            pairs = [(a, n) for a, n in zip(t[m], t["native"]) if a > 0 and n > 0]
            if not pairs:
                continue
            logs = [math.log(a / n) for a, n in pairs]
            g, lo, hi = interval(logs)
            med = statistics.median(t[m]) / statistics.median(t["native"])
            per_mode[m].append(math.log(g))
            print(f"{app:20} {m:7} {med:6.2f}  {fmt(g, lo, hi):22} {len(pairs)}")
    for m, logs in per_mode.items():
        if logs:
            print(f"all apps ({len(logs)}) {m}: geometric mean of the paired ratios "
                  f"{fmt(*interval(logs))}")


if __name__ == "__main__":
    main()
