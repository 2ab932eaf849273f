#!/usr/bin/env python3
"""The kernels with the largest pure-model APE on h100-sxm in `clprism accuracy ... --format
json` output (issue 19): per kernel (program, name), its shapes' APEs averaged, with the median
measured and projected time. usage: bench/accuracy_worst_kernels.py ACCURACY.json [N]"""
import json,collections,statistics,sys
d=json.load(open(sys.argv[1]))
by=collections.defaultdict(list)
for r in d['rows']:
    by[(r['id']['program'][:6],r['id']['kernel'])].append(r)
out=[]
for k,rows in by.items():
    apes=[c['ape_model'] for r in rows for c in r['cells'] if c['device']=='h100-sxm']
    meas=[c['measured_ns'] for r in rows for c in r['cells'] if c['device']=='h100-sxm']
    mod=[c['model_ns'] for r in rows for c in r['cells'] if c['device']=='h100-sxm']
    out.append((statistics.mean(apes),k,len(rows),statistics.median(meas)/1e3,statistics.median(mod)/1e3))
for o in sorted(out,reverse=True)[:int(sys.argv[2]) if len(sys.argv)>2 else 25]: print("%6.1f%% %-40s shapes %3d meas %9.1fus model %9.1fus"%(100*o[0],o[1],o[2],o[3],o[4]))
