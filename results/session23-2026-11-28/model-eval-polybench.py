#!/usr/bin/env python3
"""PolyBench-ACC LARGE offline: the measured per-kernel times of session 12 (the H100 and
H200 tables of results/session12-2026-11-24/model-physics.txt, column 'meas us': log mode,
every launch timed, mean over the kernel's NDRanges of each NDRange's median) against this
build's projection of the emulation statistics of the same binaries run in project mode on
PoCL's CPU (results/session12-2026-11-24/model-physics-pocl-stats.tgz, unpacked into
STATS_DIR), by tests/model_polybench_stats.rs with the model options SPEC
(ModelOptions::parse_spec). Only kernels with one NDRange in the statistics are compared
(their measured figure is that NDRange's median). Prints MAPE per GPU, Panwar's relative
error of the H200/H100 ratio, and how often the projected faster GPU is the measured one
(or the two measure within 3 %); -v: one line per kernel.
usage: model-eval-polybench.py SPEC STATS_DIR [-v]   (REPO: the checkout, default the
script's; MAIN: where results/session12-2026-11-24 is, default REPO)"""
import os, re, subprocess, sys, statistics, glob
repo = os.environ.get("REPO", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
spec = sys.argv[1]
stats = sys.argv[2]
verbose = "-v" in sys.argv
txt = open(os.path.join(os.environ.get("MAIN", repo), "results/session12-2026-11-24/model-physics.txt")).read().splitlines()
meas = {"h100-sxm": {}, "h200": {}}
cur = None
for l in txt:
    m = re.match(r"kernel on (\S+)\s+meas us", l)
    if m: cur = m.group(1); continue
    if cur and (not l.strip() or l.startswith("baseline") or l.startswith("==")): cur = None; continue
    if cur:
        f = l.split()
        if len(f) > 2 and "/" in f[0]:
            try: meas[cur][f[0]] = float(f[1])
            except ValueError: pass
exe = sorted(glob.glob(os.path.join(repo, "target/release/deps/model_polybench_stats-*")), key=os.path.getmtime)
exe = [e for e in exe if os.access(e, os.X_OK) and not e.endswith(".d")][-1]
env = dict(os.environ, MODEL_STATS_DIR=stats, MODEL_STATS_SPEC=spec)
out = subprocess.run([exe, "--ignored", "--nocapture"], env=env, capture_output=True, text=True, cwd=repo).stdout
proj = {}; shapes = {}
for l in out.splitlines():
    if "\tn=" not in l: continue
    f = l.split("\t")
    key = f[0].split(" ")[0]
    shapes[key] = shapes.get(key, 0) + 1
    d = {}
    for x in f[2:]:
        m = re.match(r"(\S+)=([\d.]+)$", x)
        if m: d[m.group(1)] = float(m.group(2))
    proj[key] = d
rows = []
for k in sorted(proj):
    if shapes[k] != 1: continue
    if k not in meas["h100-sxm"] or k not in meas["h200"]: continue
    rows.append(k)
res = {}
for dev in ("h100-sxm", "h200"):
    apes = [abs(proj[k][dev] - meas[dev][k]) / meas[dev][k] * 100 for k in rows]
    res[dev] = apes
rel = []
for k in rows:
    rm = meas["h200"][k] / meas["h100-sxm"][k]; rp = proj[k]["h200"] / proj[k]["h100-sxm"]
    rel.append(abs(rp - rm) / rm * 100)
    if verbose:
        print(f"{k:<40} h100 {meas['h100-sxm'][k]:>9.1f} {proj[k]['h100-sxm']:>9.1f} {100*(proj[k]['h100-sxm']/meas['h100-sxm'][k]-1):+6.0f}%  h200 {meas['h200'][k]:>9.1f} {proj[k]['h200']:>9.1f} {100*(proj[k]['h200']/meas['h200'][k]-1):+6.0f}%  ratio meas {rm:.3f} proj {rp:.3f}")
hits = sum(1 for k in rows if (meas['h200'][k] < meas['h100-sxm'][k]) == (proj[k]['h200'] < proj[k]['h100-sxm']) or abs(meas['h200'][k]/meas['h100-sxm'][k]-1) < 0.03)
print(f"polybench[{spec}] {len(rows)} kernels: MAPE h100 {statistics.mean(res['h100-sxm']):.1f}% h200 {statistics.mean(res['h200']):.1f}% both {statistics.mean(res['h100-sxm']+res['h200']):.1f}%; relerr mean {statistics.mean(rel):.1f}% median {statistics.median(rel):.1f}%; best hit (or within 3%) {hits}/{len(rows)}")
