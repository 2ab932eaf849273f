#!/usr/bin/env python3
"""Session 30 evaluation: session 29's eval.py (results/session29-model/eval.py) with QUEUE=measured|projected
(`clprism accuracy --queue-state`, default: the binary's default) and ANCH=1 (each kernel's anchored H200 error
in the -v table). Session 29's docstring follows.
Session 29 evaluation (session 28's eval.py, figures to two decimals), offline (no GPU): both corpora of sessions 27/27b (the 11 example
apps, 14 kernel shapes, measured on one H100 and one H200, results/gpu-2026-11-22c;
PolyBench-ACC LARGE, 41 kernels, session 12's times), re-projected by this build from the
stored statistics of results/session27-model-b/stats-load-waits.tgz (session 27b's
ablation.py, whose data and parsing this reuses). Run from the repository root after
`cargo build --release && cargo test --release --test model_polybench_stats --no-run`:
    python3 results/session28-model/eval.py SPEC... [-v]
Per spec: MAPE per GPU over both corpora (55 kernels each), pooled (110 pairs), per corpus,
Panwar's relative-performance error (per kernel, || unit(meas) - unit(proj) || / sqrt 2;
mean, median, max), the anchored MAPE (the other GPU's measured time x the model's ratio,
DESIGN.md §9), projected best = measured best (or within 3 %); -v: per-kernel table of
every spec (signed error per GPU). STATS=DIR: a statistics tree of the same layout instead
of the tgz (made by results/session29-model/make-stats.sh); PROFILES=DIR: another profiles
folder (e.g. main's: `git show main:profiles/h100-sxm.json`)."""
import math, os, statistics, sys
here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "session29-model")
sys.argv, args = [sys.argv[0]], sys.argv[1:]
verbose = "-v" in args
specs = [a for a in args if a != "-v"] or ["recommended"]
import importlib.util
spec_ = importlib.util.spec_from_file_location("abl", os.path.join(here, "../session27-model-b/ablation.py"))
# ablation.py runs its table at import time; take its functions without running it
src = open(spec_.origin).read().split("mean = lambda")[0]
if os.environ.get("STATS"):
    # another statistics tree of the same layout (examples/{h100,h200}/logs, pocl/)
    src = src.replace("with tarfile.open", "if False:\n  with tarfile.open").replace(
        'tmp = tempfile.mkdtemp(prefix="clprism-s27b-")', "tmp = os.environ['STATS']")
if os.environ.get("PROFILES"):
    # another profiles folder (e.g. main's, for the before figures)
    src = src.replace('os.path.join(repo, "profiles")', 'os.environ["PROFILES"]')
    os.environ["MODEL_STATS_PROFILES"] = os.environ["PROFILES"]
if os.environ.get("QUEUE"):
    # whose queue state the re-projection uses per device (clprism accuracy --queue-state)
    src = src.replace('"--model", spec,', '"--model", spec, "--queue-state", os.environ["QUEUE"],')
    assert "--queue-state" in src
g = {"__file__": spec_.origin}
exec(compile(src, spec_.origin, "exec"), g)
mean = lambda xs: sum(xs) / len(xs)
res = {s: {**g["examples"](s), **g["polybench"](s)} for s in specs}
ape, relerr = g["ape"], g["relerr"]
print("spec | MAPE H100 / H200 | pooled | examples H100 / H200 | PolyBench H100 / H200 | Panwar mean (median, max) | anchored H200 / H100 | best")
for s in specs:
    r = res[s]
    e = [k for k in r if k.startswith("ex ")]; p = [k for k in r if k.startswith("pb ")]
    f = lambda ks, gg: mean([ape(r[k][gg]) for k in ks])
    rel = sorted(relerr(r[k]) for k in r)
    an200 = mean([abs(r[k]["h100"][0] * r[k]["h200"][1] / r[k]["h100"][1] / r[k]["h200"][0] - 1) * 100 for k in r])
    an100 = mean([abs(r[k]["h200"][0] * r[k]["h100"][1] / r[k]["h200"][1] / r[k]["h100"][0] - 1) * 100 for k in r])
    best = sum(1 for k in r if (r[k]["h200"][0] < r[k]["h100"][0]) == (r[k]["h200"][1] < r[k]["h100"][1])
               or abs(r[k]["h200"][0] / r[k]["h100"][0] - 1) < 0.03)
    print(f"{s} | {f(list(r),'h100'):.2f} / {f(list(r),'h200'):.2f} % | "
          f"{mean([ape(r[k][gg]) for k in r for gg in ('h100','h200')]):.2f} % | "
          f"{f(e,'h100'):.2f} / {f(e,'h200'):.2f} % | {f(p,'h100'):.2f} / {f(p,'h200'):.2f} % | "
          f"{mean(rel):.2f} ({statistics.median(rel):.2f}, {rel[-1]:.2f}) % | {an200:.2f} / {an100:.2f} % | {best}/{len(r)}")
if verbose:
    for s in specs:
        print(f"\n## per kernel: {s} (measured us, projected us, signed error; H100 then H200; ratio H200/H100 measured, projected)")
        r = res[s]
        for k in sorted(r):
            a, b = r[k]["h100"], r[k]["h200"]
            sg = lambda v: f"{(v[1]-v[0])/v[0]*100:+.0f}%"
            print(f"{k:<48} {a[0]:>10.1f} {a[1]:>10.1f} {sg(a):>6} | {b[0]:>10.1f} {b[1]:>10.1f} {sg(b):>6} | {b[0]/a[0]:.3f} {b[1]/a[1]:.3f}")
