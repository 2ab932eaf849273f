#!/usr/bin/env python3
"""Tables of bench/multi_gpu.sh (issue 31, item 5) from its log folder: per app and run (native,
and balance `auto` / `always` per device set) the exit code, the wall time and its ratio to
native, the app's own figures and their ratio to native, whether the output digest equals
native's, the launches split over >= 2 devices / all launches and the most frequent fallback
reasons (both from bench/balance_launches.py), the bytes each split launch moved (the mean over
split launches of every `*_bytes` field of the record's `schedule`, e.g. `merged_bytes`: copied
back into the app's buffers, `split_decision.upload_bytes`: uploaded to the other devices), and
when the balance devices were ready (`schedule.devices_ready_ms`).
Ratios are mode / native: for a time (PolyBench's kernel time, wall time) < 1 is faster, for a
throughput (BabelStream's MB/s, clpeak's GFLOPS / GBPS) > 1 is faster. The summary at the end
gives each app's headline figure as a speedup over native (> 1 is faster), as issue 31's table.
usage: bench/multi_gpu_table.py LOGDIR [APP ...]   (LOGDIR holds runs.tsv, apps.txt and the
       runs' .out and .jsonl files; no APP: every app in runs.tsv; --summary: only the summary)"""
import collections, json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def figures(kind, text):
    """The app's own figures from its output: {name: value}, and whether higher is better."""
    f = {}
    if kind == "polybench":
        m = re.search(r"GPU Time in seconds:\s*\n\s*([0-9.eE+-]+)", text)
        if m:
            f["kernel_s"] = float(m.group(1))
        return f, False
    if kind == "babelstream":
        for m in re.finditer(r"^(Copy|Mul|Add|Triad|Dot|Nstream)\s+([0-9.]+)\s", text, re.M):
            f[m.group(1).lower()] = float(m.group(2))
        return f, True
    if kind == "clpeak":
        for m in re.finditer(r"^\s+(float\d*|half\d*|double\d*|int\d*)\s+:\s+([0-9.]+)\s*$", text, re.M):
            f[m.group(1)] = float(m.group(2))
        return f, True
    return f, False


def headline(kind, f):
    """The figure issue 31's table quotes: PolyBench's kernel time, STREAM's triad, clpeak's
    worst width (the goal holds for every width)."""
    if kind == "polybench":
        return f.get("kernel_s")
    if kind == "babelstream":
        return f.get("triad")
    return None


def digest(kind, text, rc):
    if kind == "polybench":
        m = re.search(r"^digest: ([0-9a-f]+)", text, re.M)
        return m.group(1) if m else None
    if kind == "babelstream":  # checks its arrays and dot product itself, exits 1 when wrong
        return "verified" if rc == 0 and "FAILED validation" not in text else "FAILED"
    return None


def launches(log):
    """(split, total, [fallback lines], bytes per split launch {field: mean}, ready_ms)."""
    if not os.path.exists(log):
        return None
    out = subprocess.run([sys.executable, os.path.join(HERE, "balance_launches.py"), log],
                         capture_output=True, text=True).stdout
    m = re.search(r"(\d+) launch records: (\d+) through the balanced path, (\d+) of them", out)
    total, split = (int(m.group(1)), int(m.group(3))) if m else (0, 0)
    falls = [re.sub(r"^\s*fallback x(\d+): ", r"\1x ", l) for l in out.splitlines() if "fallback x" in l]
    moved, nsplit, ready = collections.Counter(), 0, None
    merges, one = collections.Counter(), collections.Counter()

    def walk(d, pre=""):
        for k, v in d.items():
            if isinstance(v, dict):
                yield from walk(v, pre + k + ".")
            elif isinstance(v, list):
                for e in v:
                    if isinstance(e, dict):
                        yield from walk(e, pre + k + "[].")
            elif k.endswith("_bytes") and isinstance(v, (int, float)) and k != "pinned_staging_bytes":
                yield pre + k, v

    with open(log, errors="replace") as fh:
        for line in fh:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if not isinstance(r, dict) or r.get("record") is not None or "kernel" not in r:
                continue
            s = r.get("schedule") or {}
            if ready is None and s.get("devices_ready_ms") is not None:
                ready = s["devices_ready_ms"]
            devs = {c.get("device") for c in s.get("chunks") or [] if not c.get("failed") and not c.get("abandoned")}
            if len(devs) < 2 and s and not s.get("fallback"):
                one[re.sub(r"[0-9]+", "N", s.get("one_device_reason") or "balanced path, one device")] += 1
            if len(devs) >= 2:
                nsplit += 1
                merges[s.get("merge") or "?"] += 1
                for k, v in walk(s):
                    if not k.startswith("verify."):
                        moved[k] += v
    per = {k: v / nsplit for k, v in moved.items()} if nsplit else {}
    # the balance_launches.py fallbacks and the balanced-path launches that ran on one device
    falls += [f"{n}x one device: {w}" for w, n in one.most_common(3)]
    falls.sort(key=lambda l: -int(l.split("x", 1)[0]))
    return split, total, falls, per, ready, merges


def human(b):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= div:
            return f"{b / div:.1f}{unit}"
    return f"{b:.0f}"


def short(k):
    return k.replace("split_decision.", "").replace("_bytes", "").replace("[]", "")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only_summary = "--summary" in sys.argv
    if not args:
        sys.exit(__doc__)
    logdir, want = args[0], args[1:]
    apps = {}
    try:
        for line in open(os.path.join(logdir, "apps.txt")):
            p = line.rstrip("\n").split("|")
            if len(p) >= 5:
                apps[p[0]] = {"kind": p[2], "desc": p[3]}
    except OSError:
        pass
    runs = collections.OrderedDict()
    for line in open(os.path.join(logdir, "runs.tsv")):
        p = line.rstrip("\n").split("\t")
        if len(p) < 5 or p[0] == "app":
            continue
        app, mode, devs, ms, rc = p[:5]
        runs.setdefault(app, []).append((mode, devs, int(ms), int(rc)))
    summary = []
    for app, rs in runs.items():
        if want and app not in want:
            continue
        kind = apps.get(app, {}).get("kind", "?")
        desc = apps.get(app, {}).get("desc", "")
        rows, nat = [], None
        for mode, devs, ms, rc in rs:
            tag = mode if mode == "native" else f"{mode}.{devs.replace(':', '')}"
            try:
                text = open(os.path.join(logdir, f"{app}.{tag}.out"), errors="replace").read()
            except OSError:
                text = ""
            f, higher = figures(kind, text)
            row = {"mode": mode, "devs": devs, "ms": ms, "rc": rc, "fig": f, "higher": higher,
                   "digest": digest(kind, text, rc),
                   "log": None if mode == "native" else launches(os.path.join(logdir, f"{app}.{tag}.jsonl"))}
            rows.append(row)
            if mode == "native" and nat is None:
                nat = row
        higher = rows[0]["higher"] if rows else False
        unit = {"polybench": "kernel_s: the app's own kernel time in s (mode/native, < 1 is faster)",
                "babelstream": "MB/s per kernel (mode/native, > 1 is faster)",
                "clpeak": "GFLOPS or GBPS per width (mode/native, > 1 is faster)"}.get(kind, "")
        out = [f"== {app}: {desc}", f"   figures: {unit}; wall: mode/native, < 1 is faster"]
        out.append(f"{'mode':<7} {'devices':<8} {'rc':>3} {'wall_s':>8} {'wall_x':>6} {'same':>8} "
                   f"{'split/launches':>14} {'ready_ms':>8}  {'moved per split launch (merge)':<30} figures")
        for r in rows:
            ratio = lambda a, b: f"{a / b:.2f}" if a is not None and b else "-"
            wall_x = ratio(r["ms"], nat["ms"]) if nat else "-"
            if r is nat:
                same = "ref" if r["digest"] not in (None, "FAILED") else (r["digest"] or "-")
                figs = " ".join(f"{k} {v:g}" for k, v in r["fig"].items()) or "(none)"
            else:
                if r["digest"] is None or nat is None or nat["digest"] is None:
                    same = "-"
                elif r["digest"] == "verified" or r["digest"] == "FAILED":
                    same = r["digest"]
                else:
                    same = "yes" if r["digest"] == nat["digest"] else "NO"
                figs = " ".join(f"{k} {ratio(v, nat['fig'].get(k)) if nat else '-'}" for k, v in r["fig"].items()) or "(none)"
            lg = r["log"]
            if lg is None:
                sp = moved = ready = "-"
                falls = []
            else:
                split, total, falls, per, rd, merges = lg
                sp = f"{split}/{total}"
                moved = ", ".join(f"{short(k)} {human(v)}" for k, v in sorted(per.items()) if v) or "-"
                if merges:
                    moved += " (" + " ".join(f"{k} {n}" for k, n in merges.most_common()) + ")"
                ready = f"{rd:.0f}" if rd is not None else "-"
            out.append(f"{r['mode']:<7} {r['devs']:<8} {r['rc']:>3} {r['ms'] / 1000:>8.2f} {wall_x:>6} {same:>8} "
                       f"{sp:>14} {ready:>8}  {moved:<30} {figs}")
            for fl in falls[:3]:
                out.append(f"{'':<16}{fl[:140]}")
        # summary: headline figure as a speedup (> 1 faster)
        cells = []
        for r in rows:
            if r is nat or nat is None:
                continue
            if kind == "clpeak":
                rs_ = [v / nat["fig"][k] for k, v in r["fig"].items() if nat["fig"].get(k)]
                s = min(rs_) if rs_ else None
            else:
                a, b = headline(kind, r["fig"]), headline(kind, nat["fig"])
                s = (b / a if not higher else a / b) if a and b else None
            cells.append(f"{r['mode']}@{r['devs']} {s:.3g}" if s is not None else f"{r['mode']}@{r['devs']} -")
        if nat is not None:
            nh = headline(kind, nat["fig"])
            if kind == "clpeak":
                nh = " ".join(f"{v:g}" for v in nat["fig"].values()) or None
            summary.append(f"{app:<16} native {nh if nh is not None else '-'}: " + "; ".join(cells))
        if not only_summary:
            print("\n".join(out) + "\n")
    if summary and (only_summary or len(summary) > 1):
        print("== summary: speedup over native of the headline figure (PolyBench: kernel time, "
              "STREAM: triad MB/s, clpeak: the worst width's ratio); > 1 is faster")
        print("\n".join(summary))


if __name__ == "__main__":
    main()
