#!/usr/bin/env python3
"""Session 23 model ablation, offline (no GPU): every model option on and off, re-projected
from committed logs with this build (run from the repository root after
`cargo build --release && cargo test --release --test model_polybench_stats --no-run`):

    python3 results/session23-2026-11-28/model-ablation.py > results/session23-2026-11-28/model-ablation.txt

Corpora (both GPUs; tarballs unpacked under a temporary directory, never into the repo):
  examples: results/gpu-2026-11-22c/{h100,h200}/accuracy-logs.tgz, the 11 example apps
    (14 kernel shapes; reduce at 3 sizes) in project mode on one H100 and one H200, every
    launch timed; measured = both GPUs' logs (*.1_0.jsonl, the GPU), projected = the
    statistics of the H100 run ('from h100') or of the H200 run ('from h200'):
      clprism accuracy --profiles profiles --model SPEC --measured H100,H200 --projected FROM
  polybench: PolyBench-ACC LARGE (41 single-NDRange kernels), statistics of project-mode
    runs on PoCL (results/session12-2026-11-24/model-physics-pocl-stats.tgz) against the
    measured H100/H200 per-kernel times of results/session12-2026-11-24/model-physics.txt
    (model-eval-polybench.py SPEC DIR).
Columns: model MAPE per GPU (examples: of the projection from h100's statistics; from h200's
statistics gives the same model figures), anchored MAPE off the launch device (from h100 /
from h200), Panwar's relative-performance error (mean), best-device hits; polybench: MAPE
per GPU, relative error of the H200/H100 ratio (mean / median), hits (or within 3 %);
pooled: the model MAPE over both corpora's (kernel, GPU) pairs (28 + 82)."""
import os, re, subprocess, sys, tarfile, tempfile, glob

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
tmp = tempfile.mkdtemp(prefix="clprism-ablation-")
for g in ("h100", "h200"):
    d = os.path.join(tmp, "examples", g)
    os.makedirs(d)
    with tarfile.open(os.path.join(repo, "results/gpu-2026-11-22c", g, "accuracy-logs.tgz")) as t:
        t.extractall(d)
pocl = os.path.join(tmp, "pocl")
os.makedirs(pocl)
with tarfile.open(os.path.join(repo, "results/session12-2026-11-24/model-physics-pocl-stats.tgz")) as t:
    t.extractall(pocl)
clprism = os.path.join(repo, "target/release/clprism")
meas = ",".join(sorted(glob.glob(os.path.join(tmp, "examples/h100/logs/*.1_0.jsonl")))
                + sorted(glob.glob(os.path.join(tmp, "examples/h200/logs/*.1_0.jsonl"))))

def examples(spec, frm):
    proj = ",".join(sorted(glob.glob(os.path.join(tmp, "examples", frm, "logs/*.1_0.jsonl"))))
    out = subprocess.run([clprism, "accuracy", "--profiles", os.path.join(repo, "profiles"), "--model", spec,
                          "--measured", meas, "--projected", proj], capture_output=True, text=True).stdout
    m = re.search(r"model:\s+MAPE ([\d.]+)% \(median APE [\d.]+%, (\d+) pairs; h100-sxm ([\d.]+)%, h200 ([\d.]+)%", out)
    a = re.search(r"anchored: MAPE ([\d.]+)%", out)
    r = re.search(r"relative-performance error \(Panwar\): mean ([\d.]+)%, median ([\d.]+)%; projected best = measured best: (\d+) of (\d+)", out)
    return dict(both=m.group(1), pairs=int(m.group(2)), h100=m.group(3), h200=m.group(4), anch=a.group(1), rel=r.group(1), hits=f"{r.group(3)}/{r.group(4)}"), out

def polybench(spec, verbose=False):
    args = [sys.executable, os.path.join(here, "model-eval-polybench.py"), spec, pocl] + (["-v"] if verbose else [])
    out = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, REPO=repo)).stdout
    m = re.search(r"(\d+) kernels: MAPE h100 ([\d.]+)% h200 ([\d.]+)% both ([\d.]+)%; relerr mean ([\d.]+)% median ([\d.]+)%; best hit \(or within 3%\) (\d+/\d+)", out)
    return dict(pairs=2 * int(m.group(1)), h100=m.group(2), h200=m.group(3), both=m.group(4), rel=m.group(5), relmed=m.group(6), hits=m.group(7)), out

old = "recommended,-bytes_in_flight,-conversion_as_int,-additive_floor"
rows = [
    ("before: main's recommended (d77cb1f)", old),
    ("  + bytes_in_flight", old + ",+bytes_in_flight"),
    ("  + conversion_as_int", old + ",+conversion_as_int"),
    ("  + additive_floor", old + ",+additive_floor"),
    ("after: recommended (this branch)", "recommended"),
    ("  - bytes_in_flight", "recommended,-bytes_in_flight"),
    ("  - conversion_as_int", "recommended,-conversion_as_int"),
    ("  - additive_floor", "recommended,-additive_floor"),
    ("  - latency_bound", "recommended,-latency_bound"),
    ("  - cache_reuse", "recommended,-cache_reuse"),
    ("  - kernel_floor", "recommended,-kernel_floor"),
    ("panwar (baseline, every refinement off)", "panwar"),
    ("all", "all"),
]
print(__doc__.split("\n\n")[0].split("\n")[0])
print("build:", subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
      "(+ uncommitted)" if subprocess.run(["git", "-C", repo, "status", "--porcelain", "src"], capture_output=True, text=True).stdout.strip() else "")
print()
print("examples (11 apps, 14 kernels, H100 + H200)                              | polybench LARGE (41 kernels, H100 + H200)")
hdr = f"{'variant':<40} {'MAPE h100':>9} {'h200':>6} {'both':>6} {'anch100':>7} {'anch200':>7} {'relerr':>6} {'best':>5} | {'MAPE h100':>9} {'h200':>6} {'both':>6} {'relerr':>6} {'(med)':>6} {'best':>6} | {'pooled':>6}"
print(hdr)
print("-" * len(hdr))
for name, spec in rows:
    e1, _ = examples(spec, "h100")
    e2, _ = examples(spec, "h200")
    p, _ = polybench(spec)
    pooled = (e1["pairs"] * float(e1["both"]) + p["pairs"] * float(p["both"])) / (e1["pairs"] + p["pairs"])
    print(f"{name:<40} {e1['h100']:>8}% {e1['h200']:>5}% {e1['both']:>5}% {e1['anch']:>6}% {e2['anch']:>6}% {e1['rel']:>5}% {e1['hits']:>5} | {p['h100']:>8}% {p['h200']:>5}% {p['both']:>5}% {p['rel']:>5}% {p['relmed']:>5}% {p['hits']:>6} | {pooled:>5.1f}%")
print()
print("specs:", "; ".join(f"{n.strip()} = --model {s}" for n, s in rows))
for label, spec in (("BEFORE", old), ("AFTER", "recommended")):
    for frm in ("h100", "h200"):
        _, out = examples(spec, frm)
        print(f"\n## examples, {label} (--model {spec}), statistics of the {frm} run\n")
        print(out.rstrip())
    _, out = polybench(spec, True)
    print(f"\n## polybench, {label} (--model {spec}): kernel, measured and projected us and signed error per GPU, H200/H100 ratio measured and projected\n")
    print(out.rstrip())
