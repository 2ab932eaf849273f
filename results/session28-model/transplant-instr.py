#!/usr/bin/env python3
"""Gives stored logs the instruction counts (and load_waits) of the front end's unrolling
(session 28). usage: transplant-instr.py OLD_LOG BASE_LOG NEW_LOG OUT_LOG
BASE_LOG and NEW_LOG are the same app's emulation statistics without (main's front end)
and with `frontend::UNROLL`, paired by kernel and memory counts (work-group size, global
and local loads and stores), which the unrolling leaves as they are: the same app run in
project mode on PoCL with each front end, or (PolyBench, whose stored instruction counts
are those of this emulator, results/session27-model-b) the stored log itself as BASE. Each record of OLD_LOG with statistics is paired
with the BASE/NEW pair of the same kernel and work-group size whose global loads equal its
own (else the nearest in load requests): where OLD's instruction counts equal BASE's, NEW's
are copied; otherwise (statistics of another emulator version, or extrapolated from another
share of the work-group) every class is scaled by NEW/BASE of that class (warp and lane
counts alike), and load_waits by NEW/BASE. Memory counts, footprints and every other field
stay as stored. Prints what it did per kernel."""
import json, math, sys
old, base, new, out = sys.argv[1:5]

def emus(path):
    res = {}
    for l in open(path):
        try: r = json.loads(l)
        except Exception: continue
        st = (r.get("emulation") or {}).get("stats")
        if st: res.setdefault(r["kernel"], []).append(st)
    return res

B, N = emus(base), emus(new)
sig = lambda st: json.dumps([st["work_items"], st["global_loads"], st["global_stores"],
                             st.get("local_loads"), st.get("local_stores")], sort_keys=True)
pairs = {}
for k, bs in B.items():
    ns = {sig(n): n for n in N.get(k, [])}
    seen = set()
    for b in bs:
        if sig(b) in ns and sig(b) not in seen:
            seen.add(sig(b))
            pairs.setdefault(k, []).append((b, ns[sig(b)]))

def pick(st, k):
    cs = [p for p in pairs.get(k, []) if p[0]["work_items"] == st["work_items"]]
    if not cs: return None, None
    ex = [p for p in cs if p[0]["global_loads"] == st["global_loads"]]
    if ex: return ex[0], "same loads"
    r = max(st["global_loads"]["requests"], 1)
    p = min(cs, key=lambda p: abs(math.log(max(p[0]["global_loads"]["requests"], 1) / r)))
    return p, "nearest loads"

done = {}
with open(out, "w") as f:
    for l in open(old):
        r = json.loads(l)
        st = (r.get("emulation") or {}).get("stats")
        if st:
            p, why = pick(st, r["kernel"])
            how = "no pair: as stored"
            if p:
                b, n = p
                if st["instructions"] == b["instructions"]:
                    st["instructions"] = json.loads(json.dumps(n["instructions"])); how = f"copied ({why})"
                else:
                    for c, v in st["instructions"].items():
                        for w in ("warp", "lane"):
                            bb, nn = b["instructions"][c][w], n["instructions"][c][w]
                            v[w] = round(v[w] * nn / bb) if bb else v[w]
                    how = f"scaled ({why})"
                if st.get("load_waits") and b.get("load_waits"):
                    st["load_waits"] = round(st["load_waits"] * n["load_waits"] / b["load_waits"])
                tb = sum(v["lane"] for v in b["instructions"].values())
                tn = sum(v["lane"] for v in n["instructions"].values())
                how += f", lanes x{tn / tb:.2f}"
            done.setdefault(r["kernel"], set()).add(how)
        f.write(json.dumps(r, separators=(",", ":")) + "\n")
print(old.split("/")[-1] + ": " + "; ".join(f"{k} " + ", ".join(sorted(v)) for k, v in done.items()))
