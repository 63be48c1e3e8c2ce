#!/bin/sh
# examples/tensegrity/transfer.sh - issue 16 item 6: roll the SUPERball along +x at 1 m/s for 5 s with MPPI (50
# controls of 0.1 s; 40 samples, 5 iterations, 1 s horizon), planned on three models and executed in MuJoCo
# 2.2.2 (examples/tensegrity/superball_mppi.c; paper 002 Fig. 8), one run each:
#   identified  physid planning on the model whose cables and rod masses are the recurrent fit's
#               (compare.sh's recurrent route; the floor's friction and the contact itself are not identified:
#               the model file's)
#   mujoco      MuJoCo planning on the ground truth itself
#   random      physid planning with the same parameters and the floor's friction scaled by random factors in
#               [0.5, 1.2] (superball_mppi --random): seed 7 (the first drawn: factors 0.99, 0.70, 1.09, 1.19) and
#               seed 9 (of seeds 1-9 the one farthest from the truth: 0.50, 0.68, 0.59, 1.01)
# The ground truth is examples/tensegrity/superball_condim3_nodyn.xml (sliding friction only: physid has no
# torsional or rolling friction yet, so the condim-6 ground truth models/superball.xml would differ in the
# contact model itself; no actuator dynamics), the same file for every planner.
#
#   examples/tensegrity/transfer.sh [BUILD]   (from the repository root, after compare.sh's recurrent route;
#                                              writes examples/tensegrity/transfer.md, logs in BUILD/tensegrity/mppi)
# env: CONTROLS (default 50), M (the ground truth and planning model file, default the condim-3 variant), OUT, RUN (default 1; 0: only write the table from the logs of an earlier run).
# The four planners run side by side (four processes).
set -u
B=${1:-build}
OUT=${OUT:-examples/tensegrity/transfer.md}
CONTROLS=${CONTROLS:-50}
M=${M:-examples/tensegrity/superball_condim3_nodyn.xml}
D=$B/tensegrity/mppi
J=$B/tensegrity/compare/recurrent.json
mkdir -p "$D"
[ -f "$J" ] || { echo "transfer.sh: run ROUTES=recurrent examples/tensegrity/compare.sh first ($J)" >&2; exit 1; }
# the identified values as --set arguments: stiffness:*, damping:* and mass:r* (the fit's mass:r[1-5])
SET=$(python3 - "$J" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for p in j["params"]:
    v = p["value"][0] if isinstance(p["value"], list) else p["value"]
    name = "mass:r*" if p["name"].startswith("mass:") else p["name"]
    print("--set %s=%.17g" % (name, v), end=" ")
PY
)
if [ "${RUN:-1}" != 0 ]; then
  # shellcheck disable=SC2086
  "$B/superball_mppi" physid $M $M --controls "$CONTROLS" $SET > "$D/identified.md" 2> "$D/identified.log" &
  "$B/superball_mppi" mujoco $M $M --controls "$CONTROLS" > "$D/mujoco.md" 2> "$D/mujoco.log" &
  for seed in 7 9; do
    name=random$seed
    [ $seed = 7 ] && name=random
    # shellcheck disable=SC2086
    "$B/superball_mppi" physid $M $M --controls "$CONTROLS" $SET --set friction:floor=1 --random $seed \
      > "$D/$name.md" 2> "$D/$name.log" &
  done
  wait
fi
{
  echo "# SUPERball: MPPI planned on four models, executed in MuJoCo (issue 16 item 6)"
  echo
  echo "\`sh examples/tensegrity/transfer.sh\` ($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'));"
  echo "$CONTROLS controls of 0.1 s, MPPI 40 samples x 5 iterations over a 1 s horizon, target +x at 1 m/s;"
  echo "ground truth examples/tensegrity/superball_condim3_nodyn.xml in MuJoCo 2.2.2. See docs/tensegrity.md."
  echo
  echo "| planner | CoM displacement x, y at the end (m) | mean velocity along x (m/s) | distance to the reference at the end (m) |"
  echo "|---|---|---|---|"
  for r in identified mujoco random random9; do
    label=$r
    case $r in random) label="random parameters, seed 7" ;; random9) label="random parameters, seed 9" ;; esac
    printf '%s' "$(sed "s/^| physid |/| physid, $label |/; s/^| mujoco |/| MuJoCo (the truth) |/" "$D/$r.md")"
    echo
  done
  echo
  echo "Parameters of the physid plans (stderr of superball_mppi):"
  echo
  echo '```'
  for r in identified random random9; do echo "$r:"; grep -h "plan with" "$D/$r.log"; done
  echo '```'
} > "$OUT"
