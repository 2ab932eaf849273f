#!/usr/bin/env python3
"""Session 27b ablation, offline (no GPU): both corpora of results/session27-model
(the 11 example apps, 14 kernel shapes, on one H100 and one H200, results/gpu-2026-11-22c;
PolyBench-ACC LARGE, 41 kernels, session 12's times) re-projected from their stored
statistics with `load_waits` added (stats-load-waits.tgz here, made by transplant.py from
this branch's PoCL re-emulation). Run from the repository root after
`cargo build --release`:
    python3 results/session27-model-b/ablation.py SPEC... > results/session27-model-b/ablation.txt
Per spec: examples MAPE H100 / H200 (`clprism accuracy`, the H100's statistics, as
session 23-27's scripts), PolyBench MAPE H100 / H200
(results/session23-2026-11-28/model-eval-polybench.py), pooled MAPE over the 110
(kernel, GPU) pairs, and Panwar's relative error over both corpora (mean of
|| unit(meas) - unit(proj) || / sqrt 2 per kernel); then the kernels whose projection
moves by more than 1 % against the first spec."""
import glob, math, os, re, subprocess, sys, tarfile, tempfile
here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
tmp = tempfile.mkdtemp(prefix="clprism-s27b-")
with tarfile.open(os.path.join(here, "stats-load-waits.tgz")) as t:
    t.extractall(tmp)
clprism = os.path.join(repo, "target/release/clprism")
evalpb = os.path.join(repo, "results/session23-2026-11-28/model-eval-polybench.py")
ex = lambda g: sorted(glob.glob(os.path.join(tmp, "examples", g, "logs/*.1_0.jsonl")))

def examples(spec):
    out = subprocess.run([clprism, "accuracy", "--profiles", os.path.join(repo, "profiles"), "--model", spec,
                          "--measured", ",".join(ex("h100") + ex("h200")), "--projected", ",".join(ex("h100"))],
                         capture_output=True, text=True).stdout
    rows, cur = {}, None
    for l in out.splitlines():
        m = re.match(r"(\S.*?\])\s+(h100-sxm|h200)\*?\s+\d+\s+([\d.]+)\s+([\d.]+)", l)
        if m:
            cur, dev, mu, pu = m.groups()
        else:
            m = re.match(r"\s+(h100-sxm|h200)\*?\s+\d+\s+([\d.]+)\s+([\d.]+)", l)
            if not (m and cur):
                continue
            dev, mu, pu = m.groups()
        rows.setdefault("ex " + cur, {})["h100" if dev == "h100-sxm" else "h200"] = (float(mu), float(pu))
    return rows

def polybench(spec):
    out = subprocess.run([sys.executable, evalpb, spec, os.path.join(tmp, "pocl"), "-v"], capture_output=True,
                         text=True, env=dict(os.environ, REPO=repo)).stdout
    rows = {}
    for l in out.splitlines():
        m = re.match(r"(\S+)\s+h100\s+([\d.]+)\s+([\d.]+)\s+\S+\s+h200\s+([\d.]+)\s+([\d.]+)", l)
        if m:
            rows["pb " + m.group(1)] = {"h100": (float(m.group(2)), float(m.group(3))),
                                        "h200": (float(m.group(4)), float(m.group(5)))}
    return rows

def ape(v):
    return abs(v[1] - v[0]) / v[0] * 100

def relerr(r):
    m = [r["h100"][0], r["h200"][0]]; p = [r["h100"][1], r["h200"][1]]
    nm, np_ = math.hypot(*m), math.hypot(*p)
    return math.hypot(m[0] / nm - p[0] / np_, m[1] / nm - p[1] / np_) / math.sqrt(2) * 100

mean = lambda xs: sum(xs) / len(xs)
specs = sys.argv[1:] or ["recommended", "recommended,+load_waits"]
res = {s: {**examples(s), **polybench(s)} for s in specs}
print("spec | examples H100 / H200 | PolyBench H100 / H200 | pooled (pairs) | Panwar relerr mean (median)")
for s in specs:
    r = res[s]
    e = [k for k in r if k.startswith("ex ")]; p = [k for k in r if k.startswith("pb ")]
    f = lambda ks, g: mean([ape(r[k][g]) for k in ks])
    rel = sorted(relerr(r[k]) for k in r)
    print(f"{s} | {f(e,'h100'):.1f} / {f(e,'h200'):.1f} % | {f(p,'h100'):.1f} / {f(p,'h200'):.1f} % | "
          f"{mean([ape(r[k][g]) for k in r for g in ('h100','h200')]):.1f} % ({2*len(r)}) | "
          f"{mean(rel):.1f} ({rel[len(rel)//2]:.1f}) %")
base = res[specs[0]]
for s in specs[1:]:
    print(f"\nkernels that {s} moves by more than 1 % against {specs[0]} (measured us; projected before -> after, signed error):")
    for k in base:
        b, a = base[k], res[s][k]
        if any(abs(a[g][1] - b[g][1]) > 0.01 * b[g][1] for g in ("h100", "h200")):
            sg = lambda v: f"{(v[1]-v[0])/v[0]*100:+.0f}%"
            print(f"  {k}: h100 {b['h100'][0]:.1f}: {b['h100'][1]:.1f} ({sg(b['h100'])}) -> {a['h100'][1]:.1f} ({sg(a['h100'])}); "
                  f"h200 {b['h200'][0]:.1f}: {b['h200'][1]:.1f} ({sg(b['h200'])}) -> {a['h200'][1]:.1f} ({sg(a['h200'])})")
