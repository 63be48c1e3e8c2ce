#!/usr/bin/env python3
"""plot_svg.py - cost against wall time and against iterations, one SVG per task, from the table run.sh
writes (CSV: task,method,iteration,seconds,cost; seconds cumulative from the start of the run). Standard
library only: log-scale cost, one polyline per method.

usage: plot_svg.py COSTS.csv OUTDIR
"""
import csv
import math
import sys

COLORS = {"ddp": "#1f77b4", "random": "#2ca02c", "cem": "#d62728", "mppi": "#9467bd"}
W, H, L, R, T, B = 420, 300, 62, 12, 28, 42


def series(path):
    """{task: {method: [(iteration, seconds, cost)]}} from the CSV (non-positive or non-finite costs left out)."""
    out = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            c = float(row["cost"])
            if c > 0 and math.isfinite(c):
                out.setdefault(row["task"], {}).setdefault(row["method"], []).append(
                    (int(row["iteration"]), float(row["seconds"]), c))
    return out


def panel(x0, title, xlabel, data, xi):
    """SVG elements of one panel at horizontal offset x0: x = data column xi (linear), y = log10 cost."""
    pts = [p for s in data.values() for p in s]
    xmax = max(p[xi] for p in pts) or 1.0
    ylo = math.floor(math.log10(min(p[2] for p in pts)))
    yhi = math.ceil(math.log10(max(p[2] for p in pts)))
    yhi = yhi if yhi > ylo else ylo + 1
    sx = lambda x: x0 + L + (W - L - R) * x / xmax
    sy = lambda c: T + (H - T - B) * (yhi - math.log10(c)) / (yhi - ylo)
    e = ['<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#888"/>' % (x0 + L, T, W - L - R, H - T - B),
         '<text x="%g" y="16" font-size="13" text-anchor="middle">%s</text>' % (x0 + W / 2, title),
         '<text x="%g" y="%g" font-size="11" text-anchor="middle">%s</text>' % (x0 + (W + L) / 2, H - 6, xlabel)]
    for k in range(ylo, yhi + 1):
        e.append('<text x="%g" y="%g" font-size="10" text-anchor="end">1e%d</text>' % (x0 + L - 4, sy(10 ** k) + 3, k))
    for k in range(5):
        x = xmax * k / 4
        e.append('<text x="%g" y="%g" font-size="10" text-anchor="middle">%.3g</text>' % (sx(x), H - B + 14, x))
    for i, (method, s) in enumerate(sorted(data.items())):
        color = COLORS.get(method, "#333")
        e.append('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>' % (
            color, " ".join("%.1f,%.1f" % (sx(p[xi]), sy(p[2])) for p in s)))
        e.append('<text x="%g" y="%g" font-size="11" fill="%s">%s</text>' % (x0 + W - R - 50, T + 14 + 13 * i, color, method))
    return e


def main():
    data = series(sys.argv[1])
    for task, d in data.items():
        e = panel(0, task + ": cost vs wall time", "seconds", d, 1) + panel(W, task + ": cost vs iterations", "iteration", d, 0)
        with open("%s/%s.svg" % (sys.argv[2], task), "w") as f:
            f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">\n' % (2 * W, H))
            f.write('<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(e) + "\n</svg>\n")


if __name__ == "__main__":
    main()
