"""Summarises sim/replay.txt: per app and mode, the launches' sum and the app's kernel time
as measured and as the replay projects them at the logged device count, and the 4-GPU
figure projected from the 2-GPU log against the 4-GPU run measured in the same call.
The replay's app-kernel column is its `auto` projection plus the time outside split
launches as logged.  python3 results/session23-2026-11-28/sim/table.py"""
import re, sys
t = open(sys.argv[1] if len(sys.argv) > 1 else 'results/session23-2026-11-28/sim/replay.txt').read()
rows = {}
for b in t.split('== ')[1:]:
    m = re.match(r'(\S+) (\S+) \(measured app kernel_s: native ([\d.]+), this run ([\d.]+)\)', b)
    if not m:
        continue
    tab = {}
    for line in b.split('\n'):
        mm = re.match(r'\s+([1248])\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)', line)
        if mm:
            tab[int(mm.group(1))] = float(mm.group(7))
    al = re.search(r'all launches\s+: measured\s+([\d.]+), projected\s+([\d.]+) \(([-+\d.%]+)\); '
                   r'app kernel_s projected ([\d.]+)', b)
    rows[(m.group(1), m.group(2))] = (float(m.group(4)), tab, al.groups() if al else None)
print('| app | mode | GPUs | launches: measured / projected s | app kernel s: measured | '
      'projected | error | 4 GPUs from this 2-GPU log | measured on 4 | error |')
print('|---|---|---|---|---|---|---|---|---|---|')
for app in ['fdtd-long', 'jacobi-long', 'gemm', '3mm', '2mm']:
    for mode in ['always', 'auto']:
        for n in (2, 4):
            r = rows.get((app, f'{mode}.gpu{n}'))
            if not r or not r[2]:
                print(f'| {app} | {mode} | {n} | no split launch | | | | | | |')
                continue
            meas, tab, al = r
            own = float(al[3])
            cross = ''
            r4 = rows.get((app, f'{mode}.gpu4'))
            if n == 2 and r4:
                cross = f' {tab[4]:.3f} | {r4[0]:.3f} | {100 * (tab[4] / r4[0] - 1):+.0f} % |'
            else:
                cross = ' | | |'
            print(f'| {app} | {mode} | {n} | {al[0]} / {al[1]} ({al[2]}) | {meas:.3f} | {own:.3f} | '
                  f'{100 * (own / meas - 1):+.0f} % |{cross}')
