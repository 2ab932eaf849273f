#!/usr/bin/env python3
"""Session 24 model ablation, offline (no GPU): issue 32 item 3, the model where it misses.
Re-projects the logs session 23 used with this build (run from the repository root after
`cargo build --release && cargo test --release --test model_polybench_stats --no-run`):

    python3 results/session24-model/model-ablation.py > results/session24-model/model-ablation.txt

Corpora, metrics and columns are those of results/session23-2026-11-28/model-ablation.py
(whose README and header say what the corpora are and are not): examples = the 11 example
apps (14 kernel shapes) on one H100 and one H200 (results/gpu-2026-11-22c), projected with
`clprism accuracy --model SPEC` from either GPU's statistics; polybench = PolyBench-ACC LARGE,
41 single-NDRange kernels, PoCL-emulated statistics (results/session12-2026-11-24) against the
H100/H200 times of session 12, by results/session23-2026-11-28/model-eval-polybench.py.
Pooled = the model MAPE over both corpora's (kernel, GPU) pairs (28 + 82); no-mm = the same
without PolyBench's 2mm, 3mm and gemm (100 pairs), whose PoCL statistics are extrapolation
artefacts (README.md), computed from the per-kernel rows (the examples' times as
`clprism accuracy` prints them, 3-4 digits).
After the ablation table: per kernel of both corpora, measured and projected time per GPU,
signed error, the H200/H100 ratio measured and projected, and the regime that bounds the
projection per GPU (compute, local, global = memory throughput, latency = the serialised
load chain of latency_bound, launch = the kernel floor), for the recommended model and the
streaming_latency variants; then the (kernel, GPU) pairs that carry most of the pooled
error. (Session 23's file also prints every example's `clprism accuracy` table; the model is
unchanged here, so they are those of results/session23-2026-11-28/model-ablation.txt.)
Extra specs on the command line add rows to the table. STATS_OVERLAY=TGZ (a path from the
repository root) unpacks more PoCL statistics over session 12's (session 25: gemm, 2mm and 3mm
emulated again, results/session25-2026-11-28/model)."""
import os, re, subprocess, sys, tarfile, tempfile, glob, statistics

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
tmp = tempfile.mkdtemp(prefix="clprism-ablation-")
for g in ("h100", "h200"):
    d = os.path.join(tmp, "examples", g)
    os.makedirs(d)
    with tarfile.open(os.path.join(repo, "results/gpu-2026-11-22c", g, "accuracy-logs.tgz")) as t:
        t.extractall(d)
    # the GPU's own logs only, for the per-kernel regimes (tests/model_polybench_stats.rs)
    os.makedirs(os.path.join(tmp, "gpu-" + g))
    for f in glob.glob(os.path.join(d, "logs/*.1_0.jsonl")):
        os.symlink(f, os.path.join(tmp, "gpu-" + g, os.path.basename(f).replace(".1_0", "")))
pocl = os.path.join(tmp, "pocl")
os.makedirs(pocl)
with tarfile.open(os.path.join(repo, "results/session12-2026-11-24/model-physics-pocl-stats.tgz")) as t:
    t.extractall(pocl)
if os.environ.get("STATS_OVERLAY"):
    with tarfile.open(os.path.join(repo, os.environ["STATS_OVERLAY"])) as t:
        t.extractall(pocl)
clprism = os.path.join(repo, "target/release/clprism")
evalpb = os.path.join(repo, "results/session23-2026-11-28/model-eval-polybench.py")
meas = ",".join(sorted(glob.glob(os.path.join(tmp, "examples/h100/logs/*.1_0.jsonl")))
                + sorted(glob.glob(os.path.join(tmp, "examples/h200/logs/*.1_0.jsonl"))))
statsexe = sorted((e for e in glob.glob(os.path.join(repo, "target/release/deps/model_polybench_stats-*"))
                   if os.access(e, os.X_OK) and not e.endswith(".d")), key=os.path.getmtime)[-1]

def examples(spec, frm):
    proj = ",".join(sorted(glob.glob(os.path.join(tmp, "examples", frm, "logs/*.1_0.jsonl"))))
    out = subprocess.run([clprism, "accuracy", "--profiles", os.path.join(repo, "profiles"), "--model", spec,
                          "--measured", meas, "--projected", proj], capture_output=True, text=True).stdout
    m = re.search(r"model:\s+MAPE ([\d.]+)% \(median APE [\d.]+%, (\d+) pairs; h100-sxm ([\d.]+)%, h200 ([\d.]+)%", out)
    a = re.search(r"anchored: MAPE ([\d.]+)%", out)
    r = re.search(r"relative-performance error \(Panwar\): mean ([\d.]+)%, median ([\d.]+)%; projected best = measured best: (\d+) of (\d+)", out)
    return dict(both=m.group(1), pairs=int(m.group(2)), h100=m.group(3), h200=m.group(4), anch=a.group(1), rel=r.group(1), hits=f"{r.group(3)}/{r.group(4)}"), out

def polybench(spec, verbose=False):
    args = [sys.executable, evalpb, spec, pocl] + (["-v"] if verbose else [])
    out = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, REPO=repo)).stdout
    m = re.search(r"(\d+) kernels: MAPE h100 ([\d.]+)% h200 ([\d.]+)% both ([\d.]+)%; relerr mean ([\d.]+)% median ([\d.]+)%; best hit \(or within 3%\) (\d+/\d+)", out)
    return dict(pairs=2 * int(m.group(1)), h100=m.group(2), h200=m.group(3), both=m.group(4), rel=m.group(5), relmed=m.group(6), hits=m.group(7)), out

def regimes(spec, d):
    """key -> {device: regime} from tests/model_polybench_stats.rs (first launch)."""
    out = subprocess.run([statsexe, "--ignored", "--nocapture"], capture_output=True, text=True, cwd=repo,
                         env=dict(os.environ, MODEL_STATS_DIR=d, MODEL_STATS_SPEC=spec)).stdout
    res = {}
    for l in out.splitlines():
        if "\tn=" not in l:
            continue
        f = l.split("\t")
        key = f[0]
        r = {}
        for i in range(2, len(f) - 1, 2):
            m = re.match(r"(\S+)=([\d.]+)$", f[i])
            b = re.search(r" (\w+)\)$", f[i + 1])
            if m and b:
                r[m.group(1)] = b.group(1)
        res[key] = r
    return res

def per_kernel(spec):
    """(corpus, kernel, meas h100, meas h200, proj h100, proj h200, regime h100, regime h200)."""
    rows = []
    _, out = examples(spec, "h100")
    reg = regimes(spec, os.path.join(tmp, "gpu-h100"))
    regk = {}
    for k, v in reg.items():  # "app/kernel [g, g]/[l, l]" -> "kernel [gxg/lxl]"
        m = re.match(r"[^/]+/(\S+) \[([\d, ]+)\]/\[([\d, ]+)\]", k)
        regk[f"{m.group(1)} [{'x'.join(m.group(2).split(', '))}/{'x'.join(m.group(3).split(', '))}]"] = v
    cur = None
    vals = {}
    for l in out.splitlines():
        # "kernel [shape]  device[*]  n  meas_us  model_us ..." or "  device[*]  n  meas_us ..."
        m = re.match(r"(\S.*?\])\s+(h100-sxm|h200)\*?\s+\d+\s+([\d.]+)\s+([\d.]+)", l)
        if m:
            cur, dev, mu, pu = m.groups()
        else:
            m = re.match(r"\s+(h100-sxm|h200)\*?\s+\d+\s+([\d.]+)\s+([\d.]+)", l)
            if not (m and cur):
                continue
            dev, mu, pu = m.groups()
        vals.setdefault(cur, {})[dev] = (float(mu), float(pu))
    for k, v in vals.items():
        r = regk.get(k, {})
        rows.append(("examples", k, v["h100-sxm"][0], v["h200"][0], v["h100-sxm"][1], v["h200"][1],
                     r.get("h100-sxm", "?"), r.get("h200", "?")))
    _, out = polybench(spec, True)
    reg = regimes(spec, pocl)
    regk = {k.split(" ")[0]: v for k, v in reg.items()}
    for l in out.splitlines():
        m = re.match(r"(\S+)\s+h100\s+([\d.]+)\s+([\d.]+)\s+\S+\s+h200\s+([\d.]+)\s+([\d.]+)", l)
        if m:
            r = regk.get(m.group(1), {})
            rows.append(("polybench", m.group(1), float(m.group(2)), float(m.group(4)), float(m.group(3)), float(m.group(5)),
                         r.get("h100-sxm", "?"), r.get("h200", "?")))
    return rows

def print_per_kernel(label, spec):
    rows = per_kernel(spec)
    print(f"\n## per kernel, {label} (--model {spec}); examples: statistics of the H100 run\n")
    print(f"{'corpus':<9} {'kernel':<38} {'meas h100':>9} {'proj':>9} {'err':>6} {'regime':<8} | {'meas h200':>9} {'proj':>9} {'err':>6} {'regime':<8} | {'ratio meas':>10} {'proj':>6}")
    total = 0.0
    pairs = []
    for c, k, m1, m2, p1, p2, r1, r2 in rows:
        e1, e2 = p1 / m1 - 1, p2 / m2 - 1
        print(f"{c:<9} {k:<38} {m1:>9.1f} {p1:>9.1f} {100*e1:>+5.0f}% {r1:<8} | {m2:>9.1f} {p2:>9.1f} {100*e2:>+5.0f}% {r2:<8} | {m2/m1:>10.3f} {p2/p1:>6.3f}")
        pairs += [(abs(e1), c, k, "h100", r1, e1), (abs(e2), c, k, "h200", r2, e2)]
    total = sum(p[0] for p in pairs)
    print(f"\npooled MAPE {100*total/len(pairs):.1f}% over {len(pairs)} pairs; by regime (pairs, share of the summed APE, MAPE):")
    by = {}
    for p in pairs:
        b = by.setdefault(p[4], [0, 0.0])
        b[0] += 1
        b[1] += p[0]
    for reg, (n, s) in sorted(by.items(), key=lambda x: -x[1][1]):
        print(f"  {reg:<8} {n:>3} pairs  {100*s/total:>5.1f}% of the error  MAPE {100*s/n:>6.1f}%")
    print("largest contributions (kernel, GPU: signed error, regime, share of the summed APE, cumulative):")
    cum = 0.0
    for p in sorted(pairs, reverse=True)[:20]:
        cum += p[0]
        print(f"  {p[1]:<9} {p[2]:<38} {p[3]}: {100*p[5]:>+6.0f}%  {p[4]:<8} {100*p[0]/total:>5.1f}%  {100*cum/total:>5.1f}%")

old = "recommended"  # main's recommended model (95e8f87); the options of session 24 are off in it
rows = [
    ("recommended (main 95e8f87 = this branch)" if not os.environ.get("STATS_OVERLAY") else "recommended (main)", old),
    ("  + streaming_latency", old + ",+streaming_latency"),
    ("  + request_in_flight", old + ",+request_in_flight"),
    ("  + streaming_latency + request_in_flight", old + ",+streaming_latency,+request_in_flight"),
    ("  + streaming_latency - bytes_in_flight", old + ",+streaming_latency,-bytes_in_flight"),
    ("  - bytes_in_flight", old + ",-bytes_in_flight"),
    ("  - latency_bound", old + ",-latency_bound"),
    ("  - cache_reuse", old + ",-cache_reuse"),
    ("  - kernel_floor", old + ",-kernel_floor"),
    ("  - additive_floor", old + ",-additive_floor"),
    ("  - conversion_as_int", old + ",-conversion_as_int"),
    ("panwar (baseline, every refinement off)", "panwar"),
    ("all", "all"),
]
for extra in sys.argv[1:]:
    rows.append(("  " + extra, extra))
print(__doc__.split("\n")[0])
print("build:", subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
      "(+ uncommitted)" if subprocess.run(["git", "-C", repo, "status", "--porcelain", "src"], capture_output=True, text=True).stdout.strip() else "")
print()
print("examples (11 apps, 14 kernels, H100 + H200)                              | polybench LARGE (41 kernels, H100 + H200)")
hdr = f"{'variant':<40} {'MAPE h100':>9} {'h200':>6} {'both':>6} {'anch100':>7} {'anch200':>7} {'relerr':>6} {'best':>5} | {'MAPE h100':>9} {'h200':>6} {'both':>6} {'relerr':>6} {'(med)':>6} {'best':>6} | {'pooled':>6} {'no-mm':>6}"
print(hdr)
print("-" * len(hdr))
for name, spec in rows:
    e1, _ = examples(spec, "h100")
    e2, _ = examples(spec, "h200")
    p, _ = polybench(spec)
    pooled = (e1["pairs"] * float(e1["both"]) + p["pairs"] * float(p["both"])) / (e1["pairs"] + p["pairs"])
    nomm = [abs(r[4] / r[2] - 1) for r in per_kernel(spec) if not re.search(r"/mm\d_|/gemm$", r[1])] + \
           [abs(r[5] / r[3] - 1) for r in per_kernel(spec) if not re.search(r"/mm\d_|/gemm$", r[1])]
    print(f"{name:<40} {e1['h100']:>8}% {e1['h200']:>5}% {e1['both']:>5}% {e1['anch']:>6}% {e2['anch']:>6}% {e1['rel']:>5}% {e1['hits']:>5} | {p['h100']:>8}% {p['h200']:>5}% {p['both']:>5}% {p['rel']:>5}% {p['relmed']:>5}% {p['hits']:>6} | {pooled:>5.1f}% {100*sum(nomm)/len(nomm):>5.1f}%")
print()
print("specs:", "; ".join(f"{n.strip()} = --model {s}" for n, s in rows))
print_per_kernel("recommended", old)
print_per_kernel("+ streaming_latency", old + ",+streaming_latency")
print_per_kernel("+ streaming_latency - bytes_in_flight", old + ",+streaming_latency,-bytes_in_flight")
