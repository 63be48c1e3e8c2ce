#!/bin/sh
# examples/tensegrity/transfer.sh - issue 16 item 6: roll the SUPERball along +x at 1 m/s with MPPI (controls of
# 0.1 s; by default 40 samples, 5 iterations, 1 s horizon), planned on three kinds of model and executed in MuJoCo
# 2.2.2 (examples/tensegrity/superball_mppi.c; paper 002 Fig. 8):
#   identified  physid planning on P with the identified values of J (every parameter of the fit)
#   mujoco      MuJoCo planning on the ground truth M itself
#   random      physid planning on P with the truth's nominal values (--set RSET) scaled by random factors in
#               [0.5, 1.2] (superball_mppi --random), seeds 7 and 9
# Default (the condim-6 ground truth, session 32): M = models/superball.xml (friction "1 1 1", condim 6, filter
# actuators: act is in the planner's state), P = examples/tensegrity/superball_floor.xml (penalty contact), J =
# contact_fit.sh's fit (cables, rod mass, the floor's sliding/torsional/rolling friction, penalty's contact
# stiffness and damping), written to examples/tensegrity/transfer6.md.
# Session 30's condim-3 table (examples/tensegrity/transfer.md) was made with
#   M=examples/tensegrity/superball_condim3_nodyn.xml P=examples/tensegrity/superball_condim3_nodyn.xml \
#   J=build/tensegrity/compare/recurrent.json RSET="stiffness:*=10000 damping:*=1000 mass:r*=10 friction:floor=1" \
#   OUT=examples/tensegrity/transfer.md sh examples/tensegrity/transfer.sh
#
#   examples/tensegrity/transfer.sh [BUILD]   (from the repository root, after contact_fit.sh's fit;
#                                              writes OUT, logs in BUILD/tensegrity/mppi)
# env: CONTROLS (default 50), OPTS (further superball_mppi options, e.g. "--samples 20 --iters 3"), SEEDS (MPPI
# seeds of the identified planner, default 1), M, P, J, RSET, OUT, PAR (default 1: the planners one after another;
# 0 side by side), RUN (default 1; 0: only write the table from the logs of an earlier run).
set -u
B=${1:-build}
OUT=${OUT:-examples/tensegrity/transfer6.md}
CONTROLS=${CONTROLS:-50}
OPTS=${OPTS:-}
SEEDS=${SEEDS:-1}
M=${M:-models/superball.xml}
P=${P:-examples/tensegrity/superball_floor.xml}
J=${J:-$B/tensegrity/fit/contact6.json}
RSET=${RSET:-stiffness:*=10000 damping:*=1000 mass:r*=10 friction:floor=1 torsion:floor=1 rolling:floor=1}
D=$B/tensegrity/mppi
mkdir -p "$D"
[ -f "$J" ] || { echo "transfer.sh: no fit $J (run examples/tensegrity/contact_fit.sh first)" >&2; exit 1; }
# the identified values as --set arguments (a mass:r[..] fit sets mass:r*)
SET=$(python3 - "$J" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for p in j["params"]:
    v = p["value"][0] if isinstance(p["value"], list) else p["value"]
    name = "mass:r*" if p["name"].startswith("mass:") else p["name"]
    print("--set %s=%.17g" % (name, v), end=" ")
PY
)
RS=""
for s in $RSET; do RS="$RS --set $s"; done
run() {   # name, then superball_mppi's arguments
  n=$1
  shift
  if [ "${PAR:-1}" = 0 ]; then "$B/superball_mppi" "$@" > "$D/$n.md" 2> "$D/$n.log" &
  else "$B/superball_mppi" "$@" > "$D/$n.md" 2> "$D/$n.log"; fi
}
ROWS=""
if [ "${RUN:-1}" != 0 ]; then
  # shellcheck disable=SC2086
  run mujoco mujoco "$M" "$M" --controls "$CONTROLS" $OPTS
  for r in 7 9; do
    # shellcheck disable=SC2086
    run random$r physid "$P" "$M" --controls "$CONTROLS" $OPTS $RS --random $r
  done
  for s in $SEEDS; do
    # shellcheck disable=SC2086
    run identified$s physid "$P" "$M" --controls "$CONTROLS" $OPTS --seed "$s" $SET
  done
  wait
fi
{
  echo "# SUPERball: MPPI planned on physid and on MuJoCo, executed in MuJoCo (issue 16 item 6)"
  echo
  echo "\`sh examples/tensegrity/transfer.sh\` with CONTROLS=$CONTROLS OPTS=\"$OPTS\" SEEDS=\"$SEEDS\""
  echo "($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')): controls of 0.1 s, MPPI"
  echo "(superball_mppi's defaults: 40 samples x 5 iterations over a 1 s horizon, unless OPTS says otherwise), target"
  echo "+x at 1 m/s; ground truth $M in MuJoCo 2.2.2, physid planning model $P. See docs/tensegrity.md."
  echo
  echo "| planner | CoM displacement x, y at the end (m) | mean velocity along x (m/s) | distance to the reference at the end (m) |"
  echo "|---|---|---|---|"
  for s in $SEEDS; do
    printf '%s\n' "$(sed "s/^| physid |/| physid, identified, MPPI seed $s |/" "$D/identified$s.md")"
  done
  printf '%s\n' "$(sed "s/^| mujoco |/| MuJoCo (the truth) |/" "$D/mujoco.md")"
  for r in 7 9; do
    printf '%s\n' "$(sed "s/^| physid |/| physid, random parameters, seed $r |/" "$D/random$r.md")"
  done
  echo
  echo "Parameters of the physid plans (stderr of superball_mppi):"
  echo
  echo '```'
  for r in identified$(echo "$SEEDS" | cut -d' ' -f1) random7 random9; do echo "$r:"; grep -h "plan with" "$D/$r.log"; done
  echo '```'
} > "$OUT"
