#!/usr/bin/env python3
"""Session 29: a statistics tree (session 28's make-stats.sh layout) with the five
extrapolated PolyBench-ACC kernels' statistics replaced by their whole-work-group emulation
(emulate-whole.sh's JSON files). Checks first that `clprism emulate` reproduces the stored
statistics of a kernel emulated whole in project mode (mm2_kernel2; and syrk_kernel against
session 28's pb-unroll run, where it finished), field for field but `emulation_ns`.
    usage: transplant-whole.py ST WHOLE   (edits ST/pocl/*.jsonl in place)"""
import json, os, sys
st, whole = sys.argv[1], sys.argv[2]
load = lambda k: json.load(open(os.path.join(whole, k + ".json")))

def stats_of(path, kernel):
    for l in open(path):
        r = json.loads(l)
        if r.get("kernel") == kernel and (r.get("emulation") or {}).get("stats"):
            return r["emulation"]["stats"]

def same(a, b):
    return {k for k in set(a) | set(b) if k != "emulation_ns" and a.get(k) != b.get(k)}

d = same(load("mm2_kernel2"), stats_of(f"{st}/pocl/2mm.jsonl", "mm2_kernel2"))
print("mm2_kernel2: clprism emulate vs stored project-mode statistics, fields that differ:", sorted(d) or "none")
assert not d
ref = f"{st}/emu-logs/pb-unroll/syrk.jsonl"
if os.path.exists(ref):
    d = same(load("syrk_kernel"), stats_of(ref, "syrk_kernel"))
    print("syrk_kernel: clprism emulate vs session 28's pb-unroll (finished there), fields that differ:", sorted(d) or "none")
    assert not d
for app, k in (("2mm", "mm2_kernel1"), ("3mm", "mm3_kernel1"), ("gramschmidt", "gramschmidt_kernel3"),
               ("syrk", "syrk_kernel"), ("syr2k", "syr2k_kernel")):
    path = f"{st}/pocl/{app}.jsonl"
    new = load(k)
    assert not new["budget_exhausted"] and new["extrapolation_factor"] == 1.0, k
    out, n = [], 0
    for l in open(path):
        r = json.loads(l)
        if r.get("kernel") == k and (r.get("emulation") or {}).get("stats"):
            old = r["emulation"]["stats"]
            print(f"{k}: factor {old['extrapolation_factor']} -> 1; load requests {old['global_loads']['requests']} -> "
                  f"{new['global_loads']['requests']}, fp32 lanes {old['instructions']['fp32']['lane']} -> "
                  f"{new['instructions']['fp32']['lane']}")
            r["emulation"]["stats"] = new
            r["emulation"].pop("footprint_sector", None)
            l, n = json.dumps(r) + "\n", n + 1
        out.append(l)
    assert n == 1, (k, n)
    open(path, "w").writelines(out)
