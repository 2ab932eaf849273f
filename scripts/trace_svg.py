#!/usr/bin/env python3
"""Renders a clprism Chrome trace (CLPRISM_TRACE) as an SVG timeline, the way Perfetto lays
it out: one row per track (host threads, balanced launches, devices, emulation), slices as
boxes, instants as ticks, flow arrows from the scheduler to the chunks (Boyer, Fig. 4.4).
Python standard library only: used for the docs where no browser or Perfetto UI can run.

Usage: trace_svg.py TRACE.json OUT.svg [--from US] [--to US] [--width PX] [--title TEXT]
"""
import argparse
import html
import json

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
           "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]
CAT_COLOR = {"api": "#8c8c8c", "transfer": "#b07aa1", "emulation": "#9c755f",
             "balance": "#76b7b2"}


def color(e):
    if e.get("cat") in CAT_COLOR:
        return CAT_COLOR[e["cat"]]
    return PALETTE[hash(e.get("name", "").split(" chunk")[0]) % len(PALETTE)] \
        if e.get("cat") == "kernel" else PALETTE[(e.get("args", {}).get("seq", 0)) % len(PALETTE)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--from", dest="t0", type=float)
    ap.add_argument("--to", dest="t1", type=float)
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    data = json.load(open(a.trace))
    evs = data["traceEvents"] if isinstance(data, dict) else data
    names, order = {}, {}
    for e in evs:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_sort_index":
            order[e["tid"]] = e["args"]["sort_index"]
    body = [e for e in evs if e["ph"] in ("X", "i", "s", "f")]
    t0 = a.t0 if a.t0 is not None else min(e["ts"] for e in body)
    t1 = a.t1 if a.t1 is not None else max(e["ts"] + e.get("dur", 0) for e in body)
    tids = sorted({e["tid"] for e in body if e["ph"] in ("X", "i")},
                  key=lambda t: (order.get(t, 0), t))
    label_w, row_h, top = 330, 34, 56 if a.title else 36
    plot_w = a.width - label_w - 20
    height = top + row_h * len(tids) + 40
    x = lambda t: label_w + (t - t0) / (t1 - t0) * plot_w
    row = {t: top + i * row_h for i, t in enumerate(tids)}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{a.width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="100%" height="100%" fill="white"/>',
           '<defs><marker id="ar" markerWidth="6" markerHeight="6" refX="5" refY="3" '
           'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#555"/></marker></defs>']
    if a.title:
        out.append(f'<text x="10" y="20" font-size="15" font-weight="bold">{html.escape(a.title)}</text>')
        out.append('<text x="10" y="40" fill="#444">boxes: OpenCL calls, balanced launches, chunks '
                   '(labelled with their share of the work-groups); ticks: chunk enqueued by the '
                   'scheduler; arrows: enqueue to chunk start (as in Boyer, Fig. 4.4)</text>')
    for t in tids:
        y = row[t]
        out.append(f'<rect x="0" y="{y}" width="{a.width}" height="{row_h}" '
                   f'fill="{"#f7f7f7" if tids.index(t) % 2 else "#ffffff"}"/>')
        out.append(f'<text x="8" y="{y + row_h / 2 + 4}">{html.escape(names.get(t, str(t))[:52])}</text>')
    # time axis (ms)
    span_ms = (t1 - t0) / 1000
    step = next(s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
                if span_ms / s <= 12)
    k = 0
    while k * step <= span_ms + 1e-9:
        xx = x(t0 + k * step * 1000)
        out.append(f'<line x1="{xx:.1f}" y1="{top - 4}" x2="{xx:.1f}" y2="{height - 30}" stroke="#ddd"/>')
        out.append(f'<text x="{xx:.1f}" y="{height - 14}" text-anchor="middle">{k * step:g} ms</text>')
        k += 1
    in_win = lambda e: e["ts"] + e.get("dur", 0) >= t0 and e["ts"] <= t1
    for e in body:
        if e["ph"] != "X" or e["tid"] not in row or not in_win(e):
            continue
        xa, xb = max(x(e["ts"]), label_w), min(x(e["ts"] + e["dur"]), label_w + plot_w)
        w = max(xb - xa, 0.8)
        y = row[e["tid"]] + 5
        out.append(f'<rect x="{xa:.2f}" y="{y}" width="{w:.2f}" height="{row_h - 10}" '
                   f'fill="{color(e)}" stroke="#333" stroke-width="0.3">'
                   f'<title>{html.escape(e["name"])}</title></rect>')
        label = e["name"]
        if e.get("cat") == "chunk":
            label = "chunk " + e["name"].split(" chunk ")[-1]
            if w <= 6 * len(label):
                label = label.split(": ")[-1]
        if w > 6 * len(label):
            out.append(f'<text x="{xa + 3:.1f}" y="{y + row_h / 2 - 1}" fill="white">{html.escape(label)}</text>')
    for e in body:
        if e["ph"] == "i" and e["tid"] in row and in_win(e):
            xx, y = x(e["ts"]), row[e["tid"]]
            out.append(f'<line x1="{xx:.2f}" y1="{y + 1}" x2="{xx:.2f}" y2="{y + 9}" stroke="#000" stroke-width="1.2"/>')
    starts = {e["id"]: e for e in body if e["ph"] == "s"}
    for e in body:
        if e["ph"] == "f" and e["id"] in starts:
            s = starts[e["id"]]
            if s["tid"] in row and e["tid"] in row and in_win(s) and in_win(e):
                out.append(f'<line x1="{x(s["ts"]):.2f}" y1="{row[s["tid"]] + row_h - 5}" '
                           f'x2="{x(e["ts"]):.2f}" y2="{row[e["tid"]] + 5}" stroke="#555" '
                           f'stroke-width="0.7" marker-end="url(#ar)"/>')
    out.append("</svg>")
    open(a.out, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
