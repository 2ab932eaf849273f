#!/usr/bin/env python3
"""Gives stored logs the `load_waits` of re-emulated ones (session 27b).
usage: transplant.py OLD_LOG NEW_LOG OUT_LOG
Each record of OLD_LOG with emulation statistics gets `load_waits` from the NEW_LOG
statistics of the same kernel and work-group size: as they are when the global loads and
stores are the same (requests, sectors, lines, bytes), else scaled by the stored load
requests over the new ones (statistics extrapolated from another share of the work-group
when the emulation budget ran out: waits scale as requests do). Every other field stays as
stored. Prints what it did per kernel."""
import json, sys
old, new, out = sys.argv[1:4]
def mem(st):
    return (tuple(sorted(st["global_loads"].items())), tuple(sorted(st["global_stores"].items())))
cand = {}
for l in open(new):
    try: r = json.loads(l)
    except Exception: continue
    st = (r.get("emulation") or {}).get("stats")
    if st and "load_waits" in st:
        cand.setdefault((r["kernel"], st["work_items"]), []).append(st)
done = {}
with open(out, "w") as f:
    for l in open(old):
        r = json.loads(l)
        st = (r.get("emulation") or {}).get("stats")
        if st:
            cs = cand.get((r["kernel"], st["work_items"]), [])
            exact = [c for c in cs if mem(c) == mem(st)]
            how = None
            if exact and len({c["load_waits"] for c in exact}) == 1:
                st["load_waits"] = exact[0]["load_waits"]; how = "same"
            elif cs and len({(c["load_waits"], c["global_loads"]["requests"]) for c in cs}) == 1 \
                    and cs[0]["global_loads"]["requests"] > 0:
                c = cs[0]
                st["load_waits"] = round(st["global_loads"]["requests"] * c["load_waits"] / c["global_loads"]["requests"])
                how = f"scaled from {c['load_waits']}/{c['global_loads']['requests']}"
            done.setdefault(r["kernel"], set()).add((st["global_loads"]["requests"], st.get("load_waits"), how))
        f.write(json.dumps(r, separators=(",", ":")) + "\n")
print(old.split("/")[-1] + ": " + "; ".join(f"{k} " + ", ".join(f"requests {a} waits {b} ({c})" for a, b, c in sorted(v, key=str)) for k, v in done.items()))
