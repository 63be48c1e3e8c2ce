#!/bin/sh
# examples/tensegrity/contact_fit.sh - the SUPERball's recurrent identification on the contact set with torsional
# and rolling friction (issue 16 items 3 and 5; penalty's angular rows have step derivatives since session 31,
# actuator activations since session 30).
# Ground truth: MuJoCo 2.2.2 on models/superball.xml (friction "1 1 1", condim 6, filter actuators: the data
# carry act0..); physid fits examples/tensegrity/superball_floor.xml (the same model with the coefficients on the
# floor, penalty contact) at 1 kHz through 100 substeps per 10 Hz observation, every interval started at the
# recorded state (qpos, qvel, act):
#   1. the recurrent loss's gradient against the horizon at the truth scaled by 0.9 (superball_horizon, on the
#      variant without actuator dynamics and its own data, contact_nodyn: superball_horizon has no act),
#   2. identify from a perturbed start: the cables' stiffness and damping, the rod mass (tied), the floor's sliding,
#      torsional and rolling friction and the penalty contact's stiffness and damping, on one window of SECS
#      seconds from each of FILES training trajectories, the window of trajectory j starting at j x STAGGER s
#      (segments spread over the 5 s; ITERS Levenberg-Marquardt iterations),
#   3. the CoM error over 5 s on the 10 test trajectories (superball_com) of the start, the fit and the truth's
#      values (penalty's contact stiffness and damping at the model's defaults 1e4, 100),
#   4. (report) examples/tensegrity/contact_fit.md (OUT): the fit's output and the CoM table.
#
#   sh examples/tensegrity/contact_fit.sh [BUILD]     (from the repository root; physid, gen_superball,
#                                                     superball_horizon, superball_com built; writes
#                                                     BUILD/tensegrity/fit/contact6_*)
# env: OUT (default examples/tensegrity/contact_fit.md), FILES (default 10), ITERS (default 3), SECS (default 0.2: two observation intervals per window),
#      STAGGER (default 0.4; 0 with SECS=5: the whole trajectories), STEPS=horizon,fit,com,report (default all),
#      the start: K0 D0 M0 (cables' stiffness and damping, rod mass; default 8000 800 12), F0 T0 R0 (the floor's
#      sliding, torsional, rolling friction; default 0.7 each), KC0 DC0 (penalty's contact stiffness and damping;
#      default the model's, 1e4 and 100), e.g. the values of an earlier fit to continue it,
#      RESUME=1: continue an interrupted fit from its checkpoint (BUILD/tensegrity/fit/contact6.ckpt, written
#      after every iteration) with the same settings
set -u
B=${1:-build}
FILES=${FILES:-10}
ITERS=${ITERS:-3}
SECS=${SECS:-0.2}
STAGGER=${STAGGER:-0.4}
STEPS=${STEPS:-horizon,fit,com,report}
OUT=${OUT:-examples/tensegrity/contact_fit.md}
K0=${K0:-8000} D0=${D0:-800} M0=${M0:-12} F0=${F0:-0.7} T0=${T0:-0.7} R0=${R0:-0.7} KC0=${KC0:-} DC0=${DC0:-}
D=$B/tensegrity
M=examples/tensegrity/superball_floor.xml
has() { case ",$STEPS," in *",$1,"*) return 0 ;; esac; return 1; }
mkdir -p "$D/fit"
if [ ! -f "$D/contact/train/10hz/traj00.csv" ]; then
  "$B/gen_superball" models/superball.xml "$D/contact" contact || exit 1
fi
if has horizon; then
  if [ ! -f "$D/contact_nodyn/train/10hz/traj00.csv" ]; then
    "$B/gen_superball" examples/tensegrity/superball_nodyn.xml "$D/contact_nodyn" contact || exit 1
  fi
  "$B/superball_horizon" examples/tensegrity/superball_floor_nodyn.xml "$D/contact_nodyn/train/10hz/traj00.csv" \
    0.9 'stiffness:*' 'damping:*' 'mass:r*' friction:floor torsion:floor rolling:floor \
    > "$D/fit/contact6_horizon.md" || exit 1
fi
if has fit; then
  TR=$D/fit/contact6_train
  rm -rf "$TR" && mkdir -p "$TR" || exit 1
  j=0
  for f in $(ls "$D"/contact/train/10hz/traj*.csv | head -n "$FILES"); do   # header + the window's samples
    awk -F, -v a="$j" -v g="$STAGGER" -v s="$SECS" \
      'NR == 1 || ($1 >= a * g - 1e-9 && $1 <= a * g + s + 1e-9)' "$f" > "$TR/$(basename "$f")" || exit 1
    j=$((j + 1))
  done
  R=""
  [ "${RESUME:-0}" = 1 ] && R=--resume
  # shellcheck disable=SC2086
  "$B/physid" identify $M "$TR" \
    --param "stiffness:*:init=$K0" --param "damping:*:init=$D0" --param "mass:r*:init=$M0" \
    --param "friction:floor:init=$F0" --param "torsion:floor:init=$T0" --param "rolling:floor:init=$R0" \
    --param "penalty:stiffness${KC0:+:init=$KC0}" --param "penalty:damping${DC0:+:init=$DC0}" --substeps 100 \
    --iters "$ITERS" --checkpoint "$D/fit/contact6.ckpt" $R --out "$D/fit/contact6.json" \
    --write-model "$D/fit/contact6.xml" > "$D/fit/contact6.txt" 2> "$D/fit/contact6.log" || exit 1
fi
if has com; then
  T=$(ls "$D"/contact/test/10hz/traj*.csv)
  # the start (the fit's init values written into the model) and the truth's values
  PS="<numeric name=\"physid:penalty\" data=\"${KC0:-10000} ${DC0:-100}\"\/>"
  sed -e "s/stiffness=\"10000\" damping=\"1000\"/stiffness=\"$K0\" damping=\"$D0\"/" -e "s/mass=\"10\"/mass=\"$M0\"/g" \
    -e "s/<geom name=\"floor\" type=\"plane\" size=\"20 20 0.1\"\/>/<geom name=\"floor\" type=\"plane\" size=\"20 20 0.1\" friction=\"$F0 $T0 $R0\"\/>/" \
    -e "s|</custom>|  $PS\n  </custom>|" $M > "$D/fit/contact6_start.xml"
  # the truth's values with the fit's penalty contact stiffness and damping (the contact parameters' share)
  K=$(grep -o '<numeric name="physid:penalty" data="[^"]*"/>' "$D/fit/contact6.xml" 2>/dev/null)
  [ -n "$K" ] && sed "s|</custom>|  $K\n  </custom>|" $M > "$D/fit/contact6_truth_kc.xml"
  { echo "| model | trajectories | mean CoM error (m) | mean at 5 s (m) | max (m) | mean CoM path (m) | mean error / path |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    for x in truth:$M "truth, the fit's penalty contact:$D/fit/contact6_truth_kc.xml" start:$D/fit/contact6_start.xml \
      fit:$D/fit/contact6.xml; do
      [ -f "${x#*:}" ] || continue
      printf '| %s ' "${x%%:*}"
      "$B/superball_com" "${x#*:}" 100 euler $T | tail -1
    done; } > "$D/fit/contact6_com.md" || exit 1
fi
if has report; then
  { echo "# SUPERball: the contact fit on the condim-6 ground truth (issue 16 items 3 and 5)"
    echo
    echo "\`sh examples/tensegrity/contact_fit.sh\` with FILES=$FILES SECS=$SECS STAGGER=$STAGGER ITERS=$ITERS,"
    echo "started from K0=$K0 D0=$D0 M0=$M0 F0=$F0 T0=$T0 R0=$R0 KC0=${KC0:-10000} DC0=${DC0:-100}${RESUME:+ (RESUME=$RESUME)}"
    echo "($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')); ground truth models/superball.xml"
    echo "in MuJoCo 2.2.2 (filter actuators, act in the data), fitted model $M (penalty). See docs/tensegrity.md."
    echo
    echo "## The fit (identify's output)"
    echo
    echo '```'
    cat "$D/fit/contact6.txt"
    grep -h "warning" "$D/fit/contact6.log"
    echo '```'
    echo
    echo "## CoM error over 5 s on the 10 test trajectories (superball_com, 100 substeps of 1 ms, Euler)"
    echo
    cat "$D/fit/contact6_com.md"; } > "$OUT" || exit 1
fi
