#!/bin/sh
# examples/control/fig7.sh - paper 001's Fig. 7 for the cartpole and double-pendulum swing-ups: DDP, multiple
# shooting and single shooting (L-BFGS-B) against random shooting, CEM and MPPI tuned on a small seeded grid,
# cost against wall time and against model evaluations (fig7.py says how). About 10 minutes on one core.
#
#   examples/control/fig7.sh [PHYSID]     (run from the repository root; PHYSID defaults to build/physid)
#
# Writes examples/control/fig7.md (tables), fig7_grid.csv (every tuning run), fig7_costs.csv (every curve),
# fig7_cartpole.svg, fig7_double_pendulum.svg; the runs' files under examples/control/out/. FIG7_TASKS=cartpole
# runs one task.
set -eu
PHYSID=${1:-build/physid}
python3 examples/control/fig7.py "$PHYSID" examples/control
