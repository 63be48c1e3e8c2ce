#!/usr/bin/env python3
"""tables.py - the tables (results.md) and plots (one SVG per scenario: position, rotation, volume, friction and
inertia errors against training-set size, log2 x axis) of examples/ccn/run.sh's CSV. Standard library only.
Rows of a later run replace earlier rows of the same scenario, size and approach; each row keeps its commit.
Rows of several starts (run.sh's STARTS: APPROACH for start 0, APPROACH/sK for start K) are one series in the
plots (a dot per start, the line through their mean) and get a table of their mean and range per size.

usage: tables.py RESULTS.csv OUTDIR
"""
import csv
import math
import re
import sys

METRICS = [("position_mm", "position error (mm)"), ("rotation_deg", "rotational error (deg)"),
           ("volume", "volume error"), ("friction", "friction error"), ("inertia", "inertia error")]
COLORS = {"diffsim": "#1f77b4", "diffsim-kstep": "#9467bd", "ccn": "#d62728", "diffsim-r": "#17becf", "ccn-r": "#ff7f0e", "e2e": "#2ca02c",
          "nominal": "#555", "start": "#aaa"}
W, H, L, R, T, B = 300, 230, 56, 10, 26, 40


def load(path):
    """{(scenario, size, approach): row}, the last row of each key winning."""
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows[(r["scenario"], int(r["size"]), r["approach"])] = r
    return rows


def num(x):
    return float(x) if x not in ("", None) else None


def base(approach):
    """(approach without its start suffix /sK, K); K 0 for start 0 (no suffix)."""
    m = re.match(r"^(.*)/s(\d+)$", approach)
    return (m.group(1), int(m.group(2))) if m else (approach, 0)


def spread(rows, scen):
    """Markdown table of the approaches of scen that ran from more than one start: per size the number of starts,
    the mean and the range of each error; None if there are none."""
    groups = {}
    for k, r in rows.items():
        if k[0] == scen and k[1] > 0 and num(r["position_mm"]) is not None:
            groups.setdefault((k[1], base(k[2])[0]), []).append(r)
    keys = sorted(k for k, g in groups.items() if len(g) > 1)
    if not keys:
        return None
    out = ["| size | approach | starts | position (mm) mean [min, max] | rotation (deg) mean [min, max] | "
           "volume mean [min, max] | friction mean [min, max] | inertia mean [min, max] |",
           "|---:|---|---:|---|---|---|---|---|"]
    for key in keys:
        cells = []
        for col in ("position_mm", "rotation_deg", "volume", "friction", "inertia"):
            v = [num(r[col]) for r in groups[key] if num(r[col]) is not None]
            cells.append("%.3g [%.3g, %.3g]" % (sum(v) / len(v), min(v), max(v)) if v else "-")
        out.append("| %d | %s | %d | %s |" % (key[0], key[1], len(groups[key]), " | ".join(cells)))
    return "\n".join(out)


def table(rows, scen):
    """Markdown table of one scenario, sorted by size then approach."""
    keys = sorted((k for k in rows if k[0] == scen), key=lambda k: (k[1], k[2]))
    out = ["| size | approach | position (mm) | rotation (deg) | volume | friction | inertia | fit (s) | status | commit |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for k in keys:
        r = rows[k]
        cell = lambda c: r[c] if r[c] else "-"
        out.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            k[1], k[2], cell("position_mm"), cell("rotation_deg"), cell("volume"), cell("friction"),
            cell("inertia"), cell("fit_s"), r["status"], r["commit"]))
    return "\n".join(out)


def panel(x0, title, series, refs):
    """One panel: series {approach: [(size, value)]} against log2 size; refs {name: value} as dashed lines."""
    xs = [p[0] for s in series.values() for p in s] or [4, 256]
    vs = [p[1] for s in series.values() for p in s] + list(refs.values())
    lo, hi = math.log2(min(xs)), math.log2(max(xs))
    hi = hi if hi > lo else lo + 1
    vmax = max(vs) * 1.1 if vs and max(vs) > 0 else 1.0
    sx = lambda n: x0 + L + (W - L - R) * (math.log2(n) - lo) / (hi - lo)
    sy = lambda v: T + (H - T - B) * (1 - v / vmax)
    e = ['<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#888"/>' % (x0 + L, T, W - L - R, H - T - B),
         '<text x="%g" y="16" font-size="12" text-anchor="middle">%s</text>' % (x0 + (W + L) / 2, title),
         '<text x="%g" y="%g" font-size="10" text-anchor="middle">training tosses</text>' % (x0 + (W + L) / 2, H - 6)]
    for k in range(5):
        v = vmax * k / 4
        e.append('<text x="%g" y="%g" font-size="9" text-anchor="end">%.3g</text>' % (x0 + L - 3, sy(v) + 3, v))
    n = 2 ** math.ceil(lo)
    while n <= 2 ** hi:
        e.append('<text x="%g" y="%g" font-size="9" text-anchor="middle">%d</text>' % (sx(n), H - B + 12, n))
        n *= 2
    for name, v in sorted(refs.items()):
        e.append('<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="4,3"/>' % (
            x0 + L, x0 + W - R, sy(v), sy(v), COLORS.get(name, "#333")))
    for i, (name, s) in enumerate(sorted(series.items())):
        s = sorted(s)
        color = COLORS.get(name, "#333")
        sizes = sorted({p[0] for p in s})
        mean = [(n, sum(p[1] for p in s if p[0] == n) / sum(1 for p in s if p[0] == n)) for n in sizes]
        e.append('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>' % (
            color, " ".join("%.1f,%.1f" % (sx(p[0]), sy(p[1])) for p in mean)))
        for p in s:   # one dot per start
            e.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s" fill-opacity="0.7"/>' % (sx(p[0]), sy(p[1]),
                                                                                           color))
    for i, name in enumerate(sorted(set(series) | set(refs))):
        e.append('<text x="%g" y="%g" font-size="9" fill="%s">%s%s</text>' % (
            x0 + W - R - 70, T + 12 + 11 * i, COLORS.get(name, "#333"), name, " (dashed)" if name in refs else ""))
    return e


def plot(rows, scen, path):
    """One SVG of the five metrics against training-set size for a scenario with sizes."""
    e = []
    for i, (col, title) in enumerate(METRICS):
        series, refs = {}, {}
        for k, r in rows.items():
            v = num(r[col])
            if k[0] != scen or v is None:
                continue
            if k[1] == 0:
                if base(k[2])[1] == 0:   # the drawn starts' own rows are in the table only
                    refs[k[2]] = v
            else:
                series.setdefault(base(k[2])[0], []).append((k[1], v))
        e += panel(i * W, title, series, refs)
    with open(path, "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">\n' % (
            W * len(METRICS), H))
        f.write("\n".join(e))
        f.write("\n</svg>\n")


def main():
    rows = load(sys.argv[1])
    out = sys.argv[2]
    scens = sorted({k[0] for k in rows})
    md = ["# examples/ccn: paper 004's metrics against training-set size",
          "",
          "Written by examples/ccn/tables.py from results.csv (examples/ccn/run.sh; each row names the commit that "
          "made it). Test set fixed per scenario; full rollouts from each test toss's first sample "
          "(`physid evaluate --horizon 0 --truth models/cube.xml`). size 0: reference models (nominal: "
          "models/cube.xml; start: where every fit begins). vortex-s27 and gravity-s27: session 27's rows (start "
          "friction 0.4; the vortex data then had the field one sample late, a generator defect fixed in s30), kept "
          "for the record; vortex and gravity: s30's data and approaches. APPROACH/sK, start/sK (s31): fits from, and "
          "the errors of, the start K that run.sh's STARTS draws (box half sizes and friction in 0.5-1.5 times the "
          "authors' values); start 0 is examples/ccn/start.xml.", ""]
    for s in scens:
        md += ["## " + s, "", table(rows, s), ""]
        sp = spread(rows, s)
        if sp:
            md += ["Over the starts (start 0: examples/ccn/start.xml; sK: run.sh's STARTS), per size:", "", sp, ""]
        if any(k[0] == s and k[1] > 0 for k in rows) and not s.startswith("gravity"):
            plot(rows, s, "%s/%s.svg" % (out, s))
            md += ["![%s](%s.svg)" % (s, s), ""]
    with open(out + "/results.md", "w") as f:
        f.write("\n".join(md))


if __name__ == "__main__":
    main()
