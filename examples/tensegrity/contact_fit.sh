#!/bin/sh
# examples/tensegrity/contact_fit.sh - the SUPERball's recurrent identification on the contact set with torsional
# and rolling friction (issue 16 items 3 and 5, session 31: penalty's angular rows have step derivatives).
# Ground truth: MuJoCo 2.2.2 on examples/tensegrity/superball_nodyn.xml (friction "1 1 1", condim 6); physid fits
# examples/tensegrity/superball_floor_nodyn.xml (the same contacts, the coefficients on the floor; penalty contact)
# at 1 kHz through 100 substeps per 10 Hz observation:
#   1. the recurrent loss's gradient against the horizon at the truth scaled by 0.9 (superball_horizon),
#   2. identify from a perturbed start: the cables' stiffness and damping, the rod mass (tied), the floor's sliding,
#      torsional and rolling friction and the penalty contact stiffness (FILES training trajectories, ITERS
#      Levenberg-Marquardt iterations),
#   3. the CoM error over 5 s on the 10 test trajectories (superball_com) of the start, the fit and the truth's
#      values (penalty's contact stiffness at the model's default 1e4).
#
#   sh examples/tensegrity/contact_fit.sh [BUILD]     (from the repository root; physid, gen_superball,
#                                                     superball_horizon, superball_com built; writes
#                                                     BUILD/tensegrity/fit/contact6_*)
# env: FILES (default 1), ITERS (default 3), SECS (default 5: the training files cut to their first SECS seconds,
#      for a cheaper fit), STEPS=horizon,fit,com (default all)
set -u
B=${1:-build}
FILES=${FILES:-1}
ITERS=${ITERS:-3}
SECS=${SECS:-5}
STEPS=${STEPS:-horizon,fit,com}
D=$B/tensegrity
M=examples/tensegrity/superball_floor_nodyn.xml
has() { case ",$STEPS," in *",$1,"*) return 0 ;; esac; return 1; }
mkdir -p "$D/fit"
if [ ! -f "$D/contact_nodyn/train/10hz/traj00.csv" ]; then
  "$B/gen_superball" examples/tensegrity/superball_nodyn.xml "$D/contact_nodyn" contact || exit 1
fi
if has horizon; then
  "$B/superball_horizon" $M "$D/contact_nodyn/train/10hz/traj00.csv" 0.9 'stiffness:*' 'damping:*' 'mass:r*' \
    friction:floor torsion:floor rolling:floor > "$D/fit/contact6_horizon.md" || exit 1
fi
if has fit; then
  TR=$D/fit/contact6_train
  rm -rf "$TR" && mkdir -p "$TR" || exit 1
  for f in $(ls "$D"/contact_nodyn/train/10hz/traj*.csv | head -n "$FILES"); do   # header + the samples t <= SECS
    awk -F, -v s="$SECS" 'NR == 1 || $1 <= s + 1e-9' "$f" > "$TR/$(basename "$f")" || exit 1
  done
  "$B/physid" identify $M "$TR" \
    --param 'stiffness:*:init=8000' --param 'damping:*:init=800' --param 'mass:r*:init=12' \
    --param friction:floor:init=0.7 --param torsion:floor:init=0.7 --param rolling:floor:init=0.7 \
    --param penalty:stiffness --substeps 100 --iters "$ITERS" --out "$D/fit/contact6.json" \
    --write-model "$D/fit/contact6.xml" > "$D/fit/contact6.txt" 2> "$D/fit/contact6.log" || exit 1
fi
if has com; then
  T=$(ls "$D"/contact_nodyn/test/10hz/traj*.csv)
  # the start (the fit's init values written into the model) and the truth's values
  sed -e 's/stiffness="10000" damping="1000"/stiffness="8000" damping="800"/' -e 's/mass="10"/mass="12"/g' \
    -e 's/<geom name="floor" type="plane" size="20 20 0.1"\/>/<geom name="floor" type="plane" size="20 20 0.1" friction="0.7 0.7 0.7"\/>/' \
    $M > "$D/fit/contact6_start.xml"
  { echo "| model | trajectories | mean CoM error (m) | mean at 5 s (m) | max (m) | mean CoM path (m) | mean error / path |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    for x in truth:$M start:$D/fit/contact6_start.xml fit:$D/fit/contact6.xml; do
      [ -f "${x#*:}" ] || continue
      printf '| %s ' "${x%%:*}"
      "$B/superball_com" "${x#*:}" 100 euler $T | tail -1
    done; } > "$D/fit/contact6_com.md" || exit 1
fi
