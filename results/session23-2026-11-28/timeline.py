"""Where a steady split launch's wall time goes (session 22 call a, 4 x H200, session 21's
build): for each app's `always` run on 2 and 4 GPUs, medians over the launches kept
resident after the first 100: set-up until the first chunk's enqueue, the spread of the
chunks' enqueues over the devices, a chunk's device time, and what follows the last
chunk's end.  Usage: python3 results/session23-2026-11-28/timeline.py LOGDIR
(LOGDIR: session 22's a-logs.tgz unpacked, then its inner logs.tgz: s22a/logs)."""
import json, statistics as st, sys, os
d = sys.argv[1]
print('| run | launches | wall µs | first enqueue at µs | enqueue spread µs | chunk device µs '
      '| after the last chunk µs | device busy share |')
print('|---|---|---|---|---|---|---|---|')
for app in ['fdtd-long', 'jacobi-long']:
    for n in (2, 4):
        f = os.path.join(d, f'{app}.always.gpu{n}.jsonl')
        rs = [json.loads(l) for l in open(f)]
        rs = [r for r in rs if r.get('schedule', {}).get('merge') == 'resident'][100:]
        cols = {k: [] for k in ['wall', 'first', 'spread', 'dev', 'tail', 'busy']}
        for r in rs:
            s = r['schedule']
            cs = [c for c in s['chunks'] if c.get('enqueue_ns') is not None]
            if len(cs) != n:
                continue
            enq = [c['enqueue_ns'] for c in cs]
            ends = [c.get('end_ns', 0) for c in cs]
            devns = [c.get('device_ns') or 0 for c in cs]
            cols['wall'].append(s['wall_ns'])
            cols['first'].append(min(enq))
            cols['spread'].append(max(enq) - min(enq))
            cols['dev'].append(st.median(devns))
            cols['tail'].append(s['wall_ns'] - max(ends))
            cols['busy'].append(sum(devns) / (n * s['wall_ns']))
        m = {k: st.median(v) for k, v in cols.items()}
        print(f"| {app} always, {n} GPUs | {len(cols['wall'])} | {m['wall']/1e3:.0f} | "
              f"{m['first']/1e3:.0f} | {m['spread']/1e3:.0f} | {m['dev']/1e3:.0f} | "
              f"{m['tail']/1e3:.0f} | {m['busy']:.2f} |")
