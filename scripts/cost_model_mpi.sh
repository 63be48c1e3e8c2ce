#!/usr/bin/env bash
# scripts/cost_model_mpi.sh - the cost model of one Levenberg-Marquardt iteration of `mpirun -np P physid identify`
# (issue 21 item 4; docs/performance.md, *Identification on many processes*): bench/bench_fit_eval.c measures the
# CPU time of an evaluation per trajectory on NTRAIN real cube tosses (default 40; one thread), then the model
# predicts an iteration on P processes for G trajectories: compute (G / P) (c_J + c_f) (one evaluation with the
# Jacobian and one trial, an accepted step), the exchange of the reduction (fit.c, *Reduction*: every process
# receives every process's tree nodes, 1 + p + p^2 numbers each after the Jacobian's evaluation, 1 after a trial,
# and every process's outcome counts (5 ints);
# the node counts are the tree's own, counted here as fit.c counts them), and for comparison the row exchange it
# replaced (every residual row and its Jacobian row to every process: (p + 1) numbers per row). The network is an
# assumption, not a measurement: latency ALPHA (default 2e-6 s) per message of a ring allgather (P - 1 steps) and
# bandwidth BETA (default 1e10 B/s, an InfiniBand HDR link).
#
#   scripts/cost_model_mpi.sh [BUILD] [DATA]   (from the repository root; BUILD holds bench_fit_eval, default
#                                               build; DATA default ../shared/data/cube_toss; NTRAIN=40)
#
# Writes bench/results/cost_model_mpi.md.
set -euo pipefail
BUILD=${1:-build}
DATA=${2:-../shared/data/cube_toss}
NTRAIN=${NTRAIN:-40}
ALPHA=${ALPHA:-2e-6}
BETA=${BETA:-1e10}
OUT=${OUT:-bench/results/cost_model_mpi.md}
. "$(dirname "$0")/bench_lib.sh"
require_binaries cost_model_mpi.sh "$BUILD/bench_fit_eval"
mkdir -p "$(dirname "$OUT")"
FIG=$("$BUILD/bench_fit_eval" models/cube.xml "$DATA" "$NTRAIN" friction:cube,restitution:cube 5)
python3 - "$ALPHA" "$BETA" "$NTRAIN" "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" > "$OUT" <<EOF
import sys
alpha, beta, ntrain, commit = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
fig = dict(line.split(' ', 1) for line in """$FIG""".strip().splitlines())
p, rho = int(fig['parameters']), float(fig['rows_per_trajectory'])
cj, cf = 1e-6 * float(fig['eval_jacobian_us_per_trajectory']), 1e-6 * float(fig['eval_loss_us_per_trajectory'])

def nodes(G, P):
    """tree nodes per process (fit.c's tree_count; trajectories of equal length: process p holds [p G / P, (p+1) G / P))"""
    start = [G * q // P for q in range(P)] + [G]
    cnt = [0] * P
    stack = [(0, G)]
    while stack:
        lo, hi = stack.pop()
        q = bisect(start, lo)
        if hi <= start[q + 1]:
            cnt[q] += 1
            continue
        mid = lo + (hi - lo) // 2
        stack += [(lo, mid), (mid, hi)]
    return cnt

def bisect(start, lo):
    a, b = 0, len(start) - 2
    while a < b:
        c = (a + b + 1) // 2
        if start[c] <= lo: a = c
        else: b = c - 1
    return a

def model(G, P, p=p):
    cnt = nodes(G, P)
    tot, w = sum(cnt), 1 + p + p * p
    comp = G / P * (cj + cf)
    lat = 4 * (P - 1) * alpha if P > 1 else 0                       # two evaluations: outcome counts, then sums
    red = lat + ((tot * (w + 1) * 8 + 2 * P * 20) / beta if P > 1 else 0)
    rows = lat + (G * rho * (p + 1) * 8 / beta if P > 1 else 0)     # s29: every row and Jacobian row to everyone
    return dict(cnt=max(cnt), tot=tot, comp=comp, red=red, rows=rows, eff=comp / (comp + red),
                mem=G / P * rho * (p + 1) * 8, memrows=G * rho * (p + 1) * 8)

print("# Cost model of one LM iteration on P processes (scripts/cost_model_mpi.sh)\n")
print(f"Measured ({commit}, bench/bench_fit_eval.c, {ntrain} real cube tosses, kstep 10, lcp, "
      f"{fig['substeps']} substeps, one thread): p = {p} parameters, {rho:.4g} residual rows per trajectory; "
      f"an evaluation with the Jacobian {1e6 * cj:.4g} us per trajectory, without {1e6 * cf:.4g} us. "
      f"Network assumed: latency {alpha:g} s per message (ring allgather: P - 1 steps; per evaluation two "
      f"exchanges, the outcome counts (20 bytes a process) and the tree nodes), bandwidth {beta:g} B/s.\n")
print("| G trajectories | P processes | nodes per process (max) / all | compute | reduction exchange | "
      "efficiency | rows exchange (s29) | J rows per process |")
print("|---|---|---|---|---|---|---|---|")
for G, P in [(400, 1), (400, 2), (400, 8), (100000, 100), (1000000, 1000), (1000000, 100)]:
    r = model(G, P)
    print(f"| {G:,} | {P:,} | {r['cnt']} / {r['tot']} | {r['comp']:.4g} s | {r['red']:.3g} s | "
          f"{100 * r['eff']:.1f} % | {r['rows']:.3g} s | {r['mem'] / 1e6:.4g} MB (all rows: {r['memrows'] / 1e9:.4g} GB) |")
r = model(1000000, 1000, 10)
print(f"\nWith p = 10 (same per-trajectory time, an underestimate: the sensitivities grow with p) at G = 1e6, "
      f"P = 1,000: {1 + 10 + 100} numbers per node, {r['tot']} nodes, exchange {r['red']:.3g} s against "
      f"{r['comp']:.4g} s of compute ({100 * r['eff']:.1f} %).")
EOF
cat "$OUT"
