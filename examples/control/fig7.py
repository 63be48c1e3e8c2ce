#!/usr/bin/env python3
"""fig7.py - paper 001's Fig. 7 for the cartpole and double-pendulum swing-ups: gradient methods (DDP,
multiple shooting "ms", single shooting "lbfgsb") against stochastic search (random shooting, CEM, MPPI) with
tuned hyperparameters, cost against wall time and against model evaluations.

usage: fig7.py PHYSID OUTDIR     (run by examples/control/fig7.sh from the repository root)

1. Tuning (seed 0): for each task and stochastic method, a small grid over samples per iteration, noise sigma
   (as a fraction of the control range's half width) and the method's own parameter (CEM's elite fraction,
   MPPI's temperature lambda), every run with the same budget of rollouts (samples x iterations = GRID_BUDGET).
   The winner is the lowest final cost (ties: the first in grid order).
2. Comparison: each method's winner rerun on fresh seeds (1 and 2, FINAL_BUDGET rollouts, so the tuning seed
   is not the reported one) and the gradient methods (deterministic, from the same zero initial controls).
3. The stochastic method with the lowest mean final cost over seeds 1 and 2 once more with LONG_BUDGET rollouts
   (seed 3): does more sampling get there?
Every run is single-threaded ("threads": 1), so wall time and evaluations compare the same work. An ms
iterate whose largest defect is above FEASIBLE is no trajectory: it is left out of the curves and thresholds.

Measures per iteration (cumulative): wall time (the result JSON's "seconds"; it drifts with the machine's
load, so the tables also give each run's CPU time, user + system, from the process accounting), steps (phys_step calls) and step
linearizations (step Jacobians or VJPs): the result JSON's "steps"/"linearizations" for the gradient methods,
samples x horizon steps per iteration for the sampling methods (exact: every sample is one rollout).

Writes OUTDIR/fig7_grid.csv (every tuning run), fig7_costs.csv (the curves), fig7.md (tables) and
fig7_TASK.svg (cost against wall time and against evaluations, log-log).
"""
import csv
import itertools
import json
import math
import os
import resource
import subprocess
import sys

GRID_BUDGET = 4096
FINAL_BUDGET = 16384
LONG_BUDGET = 65536   # the best stochastic method (lowest mean final cost of its two seeds) once more, seed 3
FEASIBLE = 1e-8   # ms: an iterate counts (curve, thresholds) when its largest defect is below this (ms's own
                  # threshold for the returned iterate)
THRESHOLDS = (10.0, 1.0, 0.1)
TASKS = {
    # name: (model, the half width of the control range, final target, running state weights)
    "cartpole": ("cartpole.xml", 5.0, [0, 3.14159265], [0.1, 0]),
    "double_pendulum": ("double_pendulum.xml", 1.5, [3.14159265, 0], None),
}
GRID = {
    "random": {"samples": [16, 32, 128], "sigma": [0.2, 0.5, 1.0, 2.0]},
    "cem": {"samples": [16, 32, 128], "sigma": [0.2, 0.5, 1.0, 2.0], "elite": [0.05, 0.2]},
    "mppi": {"samples": [16, 32, 128], "sigma": [0.2, 0.5, 1.0, 2.0], "lambda": [0.3, 3, 30]},
}
GRADIENT = {"ddp": {"maxiter": 300}, "ms": {"maxiter": 300}, "lbfgsb": {"maxiter": 300}}
COLORS = {"ddp": "#1f77b4", "ms": "#17becf", "lbfgsb": "#8c564b", "random": "#2ca02c", "cem": "#d62728",
          "mppi": "#9467bd"}


def task_json(task, method, options, out):
    """the task file of one run (the swing-up of examples/control/TASK_ddp.json with this method)"""
    model, _, target, wrun = TASKS[task]
    cost = {"final": [{"qpos": target, "weight": 100}, {"qvel": [0, 0], "weight": 10}], "control": 1e-3}
    if wrun:
        cost["running"] = [{"qpos": target, "weight": wrun}]
    return {"model": os.path.abspath(os.path.join("models", model)), "horizon": 300, "method": method,
            "init": {"qpos": [0, 0], "qvel": [0, 0]}, "cost": cost, "options": options,
            "out": {"result": os.path.abspath(out)}}


def run(physid, outdir, task, method, options, tag):
    """one `physid optimize`: its curve [(iteration, seconds, steps, linearizations, cost)] and result JSON"""
    base = os.path.join(outdir, "out", "fig7_%s_%s_%s" % (task, method, tag))
    with open(base + "_task.json", "w") as f:
        json.dump(task_json(task, method, options, base + ".json"), f)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([physid, "optimize", base + "_task.json", "--quiet"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = json.load(open(base + ".json"))
    r["cpu"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    T, curve, s = r["horizon"], [], 0.0
    for k, (c, t) in enumerate(zip(r["cost"], r["seconds"])):
        s += t
        if method == "ms" and r["defect_per_iteration"][k] > FEASIBLE:
            c = math.inf   # an infeasible iterate: its objective is not the cost of a trajectory
        if method in GRID:   # iteration 0: the initial mean's rollout; then samples rollouts each
            steps, lin = T * (1 + k * options["samples"]), 0
        else:
            steps, lin = r["steps"][k], r["linearizations"][k]
        curve.append((k, s, steps, lin, c))
    return curve, r


def grid_points(method, half):
    g = GRID[method]
    keys = list(g)
    for vals in itertools.product(*(g[k] for k in keys)):
        o = dict(zip(keys, vals))
        o["sigma"] = round(o["sigma"] * half, 6)
        yield o


def with_budget(o, budget, seed):
    o = dict(o)
    o.update({"iterations": budget // o["samples"], "seed": seed, "threads": 1})
    return o


def thin(curve):
    """the points of a curve kept for the CSV and the plots: the first 100 iterations, then about 60 per decade of
    iterations, and the last (the tables use the whole curve)"""
    out, last = [], None
    for i, p in enumerate(curve):
        key = p[0] if p[0] <= 100 else int(60 * math.log10(p[0]))
        if key != last or i == len(curve) - 1:
            out.append(p)
        last = key
    return out


def reach(curve, thr):
    """(seconds, evaluations) when the cost first reaches thr, or None"""
    for k, s, st, lin, c in curve:
        if c <= thr:
            return s, st + lin
    return None


def svg(task, curves, path):
    """cost against wall time and against steps + linearizations (log-log), one polyline per run"""
    W, H, L, R, T, B = 430, 320, 62, 12, 28, 42
    out = []
    for pi, (xi, title, xlabel) in enumerate(((1, "cost vs wall time", "seconds (log)"),
                                               (2, "cost vs evaluations", "steps + step linearizations (log)"))):
        x0 = pi * W
        pts = [(p[xi] if xi == 1 else p[2] + p[3], p[4]) for c in curves.values() for p in c[1:]]
        pts = [(x, c) for x, c in pts if x > 0 and 0 < c < math.inf]
        xlo, xhi = math.floor(math.log10(min(x for x, _ in pts))), math.ceil(math.log10(max(x for x, _ in pts)))
        ylo, yhi = math.floor(math.log10(min(c for _, c in pts))), math.ceil(math.log10(max(c for _, c in pts)))
        sx = lambda x: x0 + L + (W - L - R) * (math.log10(x) - xlo) / max(xhi - xlo, 1)
        sy = lambda c: T + (H - T - B) * (yhi - math.log10(c)) / max(yhi - ylo, 1)
        out += ['<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#888"/>' % (x0 + L, T, W - L - R, H - T - B),
                '<text x="%g" y="16" font-size="13" text-anchor="middle">%s: %s</text>' % (x0 + W / 2, task, title),
                '<text x="%g" y="%g" font-size="11" text-anchor="middle">%s</text>' % (x0 + (W + L) / 2, H - 6, xlabel)]
        for k in range(ylo, yhi + 1):
            out.append('<text x="%g" y="%g" font-size="10" text-anchor="end">1e%d</text>' % (x0 + L - 4, sy(10 ** k) + 3, k))
        for k in range(xlo, xhi + 1):
            out.append('<text x="%g" y="%g" font-size="10" text-anchor="middle">1e%d</text>' % (sx(10 ** k), H - B + 14, k))
        legend = []
        for name, c in curves.items():
            method = name.split()[0]
            xy = [((p[xi] if xi == 1 else p[2] + p[3]), p[4]) for p in c[1:]]
            xy = [(x, y) for x, y in xy if x > 0 and 0 < y < math.inf]
            dash = ' stroke-dasharray="4,3"' if name.endswith("seed 2") else ' stroke-dasharray="1,2"' if name.endswith("seed 3") else ""
            out.append('<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"/>' % (
                COLORS[method], dash, " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in xy)))
            if method not in legend:
                legend.append(method)
        out.append('<text x="%g" y="%g" font-size="9" fill="#555">sampling: seed 1 solid, 2 dashed, 3 (long) dotted</text>' % (
            x0 + L + 4, H - B - 4))
        for i, method in enumerate(legend):
            out.append('<text x="%g" y="%g" font-size="11" fill="%s">%s</text>' % (x0 + W - R - 50, T + 14 + 13 * i,
                                                                                 COLORS[method], method))
    with open(path, "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">\n' % (2 * W, H))
        f.write('<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(out) + "\n</svg>\n")


def main():
    physid, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(outdir, "out"), exist_ok=True)
    tasks = os.environ.get("FIG7_TASKS", " ".join(TASKS)).split()
    grid_rows, cost_rows, md = [], [], []
    for task in tasks:
        half = TASKS[task][1]
        curves, rows, tuned = {}, [], {}
        for method, opts in GRADIENT.items():
            print("fig7: %s %s" % (task, method), file=sys.stderr)
            c, r = run(physid, outdir, task, method, opts, "final")
            curves[method] = c
            rows.append((method, "", c, r))
        for method in GRID:
            best = None
            for gi, o in enumerate(grid_points(method, half)):
                print("fig7: %s %s grid %d %s" % (task, method, gi, o), file=sys.stderr)
                c, r = run(physid, outdir, task, method, with_budget(o, GRID_BUDGET, 0), "grid%d" % gi)
                grid_rows.append([task, method, json.dumps(o, sort_keys=True), GRID_BUDGET, "%.9g" % c[-1][4], "%.3f" % c[-1][1]])
                if best is None or c[-1][4] < best[1]:
                    best = (o, c[-1][4])
            for seed in (1, 2):
                o = with_budget(best[0], FINAL_BUDGET, seed)
                print("fig7: %s %s final seed %d %s" % (task, method, seed, o), file=sys.stderr)
                c, r = run(physid, outdir, task, method, o, "seed%d" % seed)
                curves["%s seed %d" % (method, seed)] = c
                rows.append((method, "%s, seed %d" % (json.dumps(best[0], sort_keys=True).replace('"', ""), seed), c, r))
            tuned[method] = (best[0], (rows[-1][2][-1][4] + rows[-2][2][-1][4]) / 2)
        method = min(tuned, key=lambda k: tuned[k][1])
        o = with_budget(tuned[method][0], LONG_BUDGET, 3)
        print("fig7: %s %s long seed 3 %s" % (task, method, o), file=sys.stderr)
        c, r = run(physid, outdir, task, method, o, "long")
        curves["%s seed 3" % method] = c
        rows.append((method, "%s, seed 3, %d rollouts" % (json.dumps(tuned[method][0], sort_keys=True).replace('"', ""),
                                                           LONG_BUDGET), c, r))
        curves = {name: thin(c) for name, c in curves.items()}
        for name, c in curves.items():
            for k, s, st, lin, cost in c:
                cost_rows.append([task, name, k, "%.6g" % s, st, lin, "%.17g" % cost])
        svg(task, curves, os.path.join(outdir, "fig7_%s.svg" % task))
        md.append("### %s\n" % task)
        md.append("| method | tuned options, seed | iterations | final cost | wall time | CPU time | steps | linearizations | "
                  + " | ".join("to cost <= %g (s / evaluations)" % t for t in THRESHOLDS) + " |")
        md.append("|---|---|---|---|---|---|---|---|" + "---|" * len(THRESHOLDS))
        for method, opts, c, r in rows:
            last = c[-1]
            hits = []
            for t in THRESHOLDS:
                h = reach(c, t)
                hits.append("%.3g s / %d" % h if h else "not reached")
            final = "%.6g" % r["final_cost"]
            if method == "ms" and r["defect_per_iteration"][-1] > FEASIBLE:
                final += " (Ipopt %s, largest defect %.2g: its best feasible iterate)" % (r["stop"], r["defect_per_iteration"][-1])
            md.append("| %s | %s | %d | %s | %.3g s | %.3g s | %d | %d | %s |" % (
                method, opts, r["iterations"], final, last[1], r["cpu"], last[2], last[3], " | ".join(hits)))
        md.append("")
    with open(os.path.join(outdir, "fig7_grid.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task", "method", "options", "rollouts", "final_cost", "seconds"])
        w.writerows(grid_rows)
    with open(os.path.join(outdir, "fig7_costs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task", "run", "iteration", "seconds", "steps", "linearizations", "cost"])
        w.writerows(cost_rows)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    head = ["<!-- written by examples/control/fig7.sh at commit %s; budgets: %d rollouts per tuning run, %d per "
            "final run, %d for the long one -->" % (commit or "?", GRID_BUDGET, FINAL_BUDGET, LONG_BUDGET), ""]
    with open(os.path.join(outdir, "fig7.md"), "w") as f:
        f.write("\n".join(head + md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
