#!/bin/sh
# examples/tensegrity/transfer.sh - issue 16 item 6: roll the SUPERball along +x at 1 m/s with MPPI (controls of
# 0.1 s; by default 40 samples, 5 iterations, 1 s horizon), planned on three kinds of model and executed in MuJoCo
# 2.2.2 (examples/tensegrity/superball_mppi.c; paper 002 Fig. 8):
#   identified  physid planning on P with the identified values of J (every parameter of the fit)
#   mujoco      MuJoCo planning on the ground truth M itself
#   random      physid planning on P with the truth's nominal values (--set RSET) scaled by random factors in
#               [0.5, 1.2] (superball_mppi --random), parameter seeds RSEEDS (default 7 and 9)
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
# seeds, default 1: every planner runs once with each), RSEEDS (the random models' parameter seeds, default "7 9"),
# M, P, J, RSET, OUT, PAR (default 1: the planners one after another; 0 side by side), RUN (default 1; 0: only
# write the table from the logs of an earlier run), ONLY (default identified,mujoco,random: the planners run).
# A log's name carries its MPPI seed (identified1, mujoco1, random7_1, ...).
set -u
B=${1:-build}
OUT=${OUT:-examples/tensegrity/transfer6.md}
CONTROLS=${CONTROLS:-50}
OPTS=${OPTS:-}
SEEDS=${SEEDS:-1}
RANDOM_SEEDS=${RSEEDS:-7 9}
ONLY=${ONLY:-identified,mujoco,random}
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
has() { case ",$ONLY," in *",$1,"*) return 0 ;; esac; return 1; }
if [ "${RUN:-1}" != 0 ]; then
  for s in $SEEDS; do
    # shellcheck disable=SC2086
    has identified && run identified$s physid "$P" "$M" --controls "$CONTROLS" $OPTS --seed "$s" $SET
    # shellcheck disable=SC2086
    has mujoco && run mujoco$s mujoco "$M" "$M" --controls "$CONTROLS" $OPTS --seed "$s"
    for r in $RANDOM_SEEDS; do
      # shellcheck disable=SC2086
      has random && run random${r}_$s physid "$P" "$M" --controls "$CONTROLS" $OPTS $RS --random "$r" --seed "$s"
    done
  done
  wait
fi
row() {   # the row of log $1 labelled $2 (nothing if the run is missing)
  [ -s "$D/$1.md" ] && printf '%s\n' "$(sed "s/^| [a-z]* |/| $2 |/" "$D/$1.md")"
  return 0
}
{
  echo "# SUPERball: MPPI planned on physid and on MuJoCo, executed in MuJoCo (issue 16 item 6)"
  echo
  echo "\`sh examples/tensegrity/transfer.sh\` with CONTROLS=$CONTROLS OPTS=\"$OPTS\" SEEDS=\"$SEEDS\" RSEEDS=\"$RANDOM_SEEDS\""
  echo "($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')): controls of 0.1 s, MPPI"
  echo "(superball_mppi's defaults: 40 samples x 5 iterations over a 1 s horizon, unless OPTS says otherwise), target"
  echo "+x at 1 m/s; ground truth $M in MuJoCo 2.2.2, physid planning model $P. See docs/tensegrity.md."
  echo
  echo "| planner | CoM displacement x, y at the end (m) | mean velocity along x (m/s) | distance to the reference at the end (m) |"
  echo "|---|---|---|---|"
  for s in $SEEDS; do row identified$s "physid, identified, MPPI seed $s"; done
  for s in $SEEDS; do row mujoco$s "MuJoCo (the truth), MPPI seed $s"; done
  for r in $RANDOM_SEEDS; do
    for s in $SEEDS; do row random${r}_$s "physid, random parameters (seed $r), MPPI seed $s"; done
  done
  echo
  echo "Parameters of the physid plans (stderr of superball_mppi):"
  echo
  echo '```'
  s=$(echo "$SEEDS" | cut -d' ' -f1)
  for r in identified$s $(for x in $RANDOM_SEEDS; do echo "random${x}_$s"; done); do
    [ -f "$D/$r.log" ] && { echo "$r:"; grep -h "plan with" "$D/$r.log"; }
  done
  echo '```'
} > "$OUT"
