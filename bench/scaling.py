#!/usr/bin/env python3
"""Scaling table of bench/gpu_scaling.sh: per app and GPU count, balance mode's time per
launch against native single-GPU execution, the ideal (n x), the efficiency (speedup / n) and
the discrete-event simulator's prediction (`clprism simulate`), then Boyer against the even
static partition and GSS with every GPU.

Times per launch: the median of launches 3..R (bench/steady.py: a balanced launch's
`schedule.wall_ns`, transfers and merge included; native: the kernel's `device_ns` in log
mode). The prediction simulates the launch's units (`schedule.work_groups`, each
`wgs_per_unit` work-groups) on n devices at the native rate, with Boyer's warm start
(`--warm`), the logged wave (`schedule.wave_work_groups`: resident work-groups per compute
unit x compute units, which the scheduler uses) and OVERHEAD ns per chunk; it has no
transfers or merge. It is given twice:
  sim_ms: a chunk costs its work-groups rounded up to whole waves at the native rate;
  sim_curve_ms: a chunk costs what a chunk of its size measured (`--chunk-cost`): the
    per-size median of `device_ns` over the chunks of the GSS run (halving sizes, the first
    one a 1/n share) and the native whole launch. A compute-bound kernel saturates a GPU
    before every resident slot is filled, and a small chunk costs the latency of one
    work-group, which the wave model misses (N-body on an H200: 5 and 160 work-groups both
    take 45 ms).
Usage: bench/scaling.py LOGDIR [--clprism PATH] [--overhead-ns 50000] [--plot OUT.svg]
                       [--predict 4,8]
--predict adds simulator-only rows for GPU counts that were not measured.
(the plot needs matplotlib: Debian python3-matplotlib, /usr/bin/python3)
"""
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from steady import launch_times, median  # noqa: E402


def steady_ms(t):
    return median(t[2:] if len(t) > 2 else t[1:] or t)


def first_schedule(path):
    for line in open(path):
        s = json.loads(line).get("schedule")
        if isinstance(s, dict) and not s.get("fallback") and s.get("work_groups"):
            return s
    return None


def chunk_curve(cfgs, units, native_ms):
    """Measured chunk cost: {units: median device ms} over the chunks of the GSS run, plus
    the native whole launch; None without a GSS run."""
    gss = next((f for c, (_, f) in sorted(cfgs.items()) if c.startswith("gss")), None)
    if not gss or not units:
        return None
    by = {}
    for line in open(gss):
        s = json.loads(line).get("schedule")
        if not isinstance(s, dict) or s.get("fallback"):
            continue
        for c in s.get("chunks") or []:
            if c.get("device_ns") and not c.get("abandoned") and c["count"] < units:
                by.setdefault(c["count"], []).append(c["device_ns"] / 1e6)
    curve = {n: median(v) for n, v in by.items()}
    curve[units] = native_ms
    return curve


def simulate(clprism, n, rate, units, wave, overhead, curve=None):
    args = [clprism, "simulate", "--devices", str(n), "--rates", "%.9g" % rate,
            "--wgs", str(units), "--overhead-ns", str(overhead), "--scheduler", "boyer",
            "--warm"]
    if wave:
        args += ["--wave", str(wave)]
    if curve:
        args += ["--chunk-cost", ",".join("%d:%.3f" % (k, v * 1000) for k, v in sorted(curve.items()))]
    out = subprocess.run(args, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("boyer"):
            return float(line.split()[1])
    return None


def main():
    argv = sys.argv[1:]
    opt = lambda k, d: argv[argv.index(k) + 1] if k in argv else d
    logdir = argv[0]
    clprism = opt("--clprism", "clprism")
    overhead = int(opt("--overhead-ns", "50000"))
    plot = opt("--plot", None)
    predict = [int(x) for x in opt("--predict", "").split(",") if x]
    runs = {}
    for f in sorted(glob.glob(os.path.join(logdir, "*.jsonl"))):
        app, cfg = os.path.basename(f)[: -len(".jsonl")].split(".", 1)
        t, _ = launch_times(f)
        if t:
            runs.setdefault(app, {})[cfg] = (t, f)
    curves = {}
    print("%-12s %5s %11s %10s %8s %6s %10s %9s %9s %12s %12s" % (
        "app", "gpus", "native_ms", "ms/launch", "speedup", "ideal", "efficiency",
        "sim_ms", "sim_spdup", "sim_curve_ms", "curve_spdup"))
    for app, cfgs in runs.items():
        if "native-log" not in cfgs:
            continue
        nat = steady_ms(cfgs["native-log"][0])
        sched = next((first_schedule(f) for c, (_, f) in sorted(cfgs.items())
                      if c.startswith("boyer") and first_schedule(f)), None)
        units = sched["work_groups"] if sched else None
        per_unit = sched.get("wgs_per_unit", 1) if sched else 1
        waves = sched.get("wave_work_groups") or [] if sched else []
        wave = max(1, round(waves[0] / per_unit)) if waves else None
        rate = units / (nat * 1000.0) if units else None
        by_n = sorted((int(m.group(1)), c) for c in cfgs
                      for m in [re.fullmatch(r"boyer-gpu(\d+)-warm", c)] if m)
        measured = {n: steady_ms(cfgs[c][0]) for n, c in by_n}
        curve = chunk_curve(cfgs, units, nat)
        for n in sorted(set(measured) | set(predict)):
            ms = measured.get(n)
            sim = simulate(clprism, n, rate, units, wave, overhead) if rate else None
            flat = simulate(clprism, n, rate, units, wave, overhead, curve) if rate and curve else None
            f = lambda x, fmt: fmt % x if x else "-"
            print("%-12s %5d %11.1f %10s %8s %6d %10s %9s %9s %12s %12s" % (
                app, n, nat, f(ms, "%.1f"), f(ms and nat / ms, "%.2f"), n,
                f(ms and nat / ms / n, "%.2f"), f(sim, "%.1f"), f(sim and nat / sim, "%.2f"),
                f(flat, "%.1f"), f(flat and nat / flat, "%.2f")))
            curves.setdefault(app, []).append(
                (n, nat / ms if ms else None, nat / sim if sim else None, nat / flat if flat else None))
    print()
    print("%-12s %-26s %10s %10s" % ("app", "config", "ms/launch", "vs Boyer"))
    for app, cfgs in runs.items():
        for c in sorted(cfgs):
            m = re.fullmatch(r"(static-even|gss)-gpu(\d+)-warm", c)
            if not m:
                continue
            boyer = cfgs.get("boyer-gpu%s-warm" % m.group(2))
            ms = steady_ms(cfgs[c][0])
            b = steady_ms(boyer[0]) if boyer else None
            print("%-12s %-26s %10.1f %10s" % (app, c, ms, "%+.1f %%" % (100 * (ms / b - 1)) if b else "-"))
    if plot and curves:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 4))
        top = max(n for c in curves.values() for n, *_ in c)
        ax.plot([1, top], [1, top], "k--", label="ideal")
        for app, c in curves.items():
            meas = [(n, m) for n, m, _, _ in c if m]
            line = ax.plot([n for n, _ in meas], [m for _, m in meas], "o-", label=app + " measured")
            for k, style, what in ((3, "s--", "simulated, measured chunk costs"),
                                   (2, "x:", "simulated, wave model")):
                pts = [(e[0], e[k]) for e in c if e[k]]
                if pts:
                    ax.plot([n for n, _ in pts], [p for _, p in pts], style,
                            color=line[0].get_color(), alpha=0.6, label=app + " " + what)
        ax.set_xlabel("GPUs")
        ax.set_ylabel("speedup against native on one GPU")
        ax.set_xticks(sorted({n for c in curves.values() for n, *_ in c}))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(plot)


if __name__ == "__main__":
    main()
