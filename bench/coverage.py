#!/usr/bin/env python3
# Emulation coverage of project-mode logs: per app (DIR/<app>.project.jsonl), launches and
# kernel shapes whose emulation ran (status resolved through the "record":"emulation" definition
# line of the launch key). usage: bench/coverage.py DIR
import json,sys,glob,os,collections
tot=collections.Counter(); 
for f in sorted(glob.glob(sys.argv[1]+'/*.project.jsonl')):
    app=os.path.basename(f).split('.')[0]
    defs={}; shapes={}; n=0; ok=0
    for line in open(f):
        r=json.loads(line)
        if r.get('record')=='emulation': defs[r['key']]=r['emulation']; continue
        if 'seq' not in r: continue
        e=r.get('emulation') or {}
        st=e.get('status')
        if 'key' in e and e['key'] in defs: st=defs[e['key']].get('status',st) if st is None else st
        shape=(r['kernel'],tuple(r.get('global') or []),tuple(r.get('local') or []))
        # an emulation ran for this launch's key (ok) or the launch reuses one (reused);
        # 'error' and 'unavailable' (no snapshot, a failed compile) are not covered
        good = st in ('ok', 'reused')
        n+=1; ok+=good
        shapes.setdefault(shape,[]).append(good)
    sh_ok=sum(1 for v in shapes.values() if any(v))
    print(f"{app:18s} launches {ok}/{n}  shapes {sh_ok}/{len(shapes)}")
    tot['n']+=n; tot['ok']+=ok; tot['s']+=len(shapes); tot['sok']+=sh_ok
print(tot)
