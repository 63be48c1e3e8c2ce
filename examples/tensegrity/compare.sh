#!/bin/sh
# examples/tensegrity/compare.sh - issue 16 item 5 on the non-contact set: paper 002's comparisons, each fit's
# centre-of-mass error over the whole 5 s of the 10 test trajectories, written as one markdown table.
#
#   examples/tensegrity/compare.sh [BUILD]   (from the repository root; BUILD default build, with physid,
#                                             gen_superball and superball_com built; writes
#                                             examples/tensegrity/compare.md, data and fits under BUILD/tensegrity)
# env: NTRAIN (training trajectories, default 3 of the 10: the shared machine's budget; 10 is the paper's),
#      ROUTES (default recurrent,khz,feedforward,implicit,implicit10,progressive), OUT (the table's file),
#      PROG_ITERS (Adam iterations per progressive epoch, default 5: the budget again; identify's default is 10),
#      F (the folder of the fits, default BUILD/tensegrity/compare). The table lists every route whose fit is in F
#      (ROUTES=none only writes it).
#
# Every fit starts from the same perturbed parameters: the 24 cables' stiffness 8,000 (truth 10,000, -20 %) and
# damping 800 (1,000, -20 %), the five moving rods' mass 12 kg (10, +20 %), tied (one value each). The data are
# the non-contact set of examples/tensegrity/superball_fixed_nodyn.xml (rod r0 welded, no actuator dynamics:
# docs/tensegrity.md), made by gen_superball if BUILD/tensegrity/fixed_nodyn is missing. Routes:
#   recurrent    10 Hz data, 100 steps of 1 ms per observation (paper 002's recurrent training), Euler, LM
#   khz          1 kHz data (100x the samples), 1 step of 1 ms per observation, Euler, LM
#   feedforward  10 Hz data, one step of 100 ms per observation pair (no recurrence; paper 002 Fig. 4a), Euler, LM
#   implicit     10 Hz data, one implicit step of 100 ms per observation (stage 1 of Alg. 1 alone), LM
#   implicit10   10 Hz data, 10 implicit steps of 10 ms per observation, LM
#   progressive  paper 002's Alg. 1 (identify --progressive: implicit from 100 ms down to 1 ms, then Euler at
#                1 ms; Adam), NTRAIN trajectories fitted and one more validating
# Each fitted model is then rolled out by superball_com from the first state of each of the 10 test
# trajectories for 5 s with the recorded controls, at 1 ms Euler (the ground truth's integrator: what the
# parameters are for) and with the fit's own step and integrator.
set -u
B=${1:-build}
OUT=${OUT:-examples/tensegrity/compare.md}
NTRAIN=${NTRAIN:-3}
ROUTES=${ROUTES:-recurrent,khz,feedforward,implicit,implicit10,progressive}
M=examples/tensegrity/superball_fixed_nodyn.xml
D=$B/tensegrity
F=${F:-$D/compare}
mkdir -p "$F"
has() { case ",$ROUTES," in *",$1,"*) return 0 ;; esac; return 1; }
[ -d "$D/fixed_nodyn/test/10hz" ] || "$B/gen_superball" $M "$D/fixed_nodyn" noncontact || exit 1
# wide bounds for Levenberg-Marquardt (they only keep the values physical); Adam's (progressive) rate is in units
# of the bound's width, so its bounds are the ones of a researcher's prior: 1,000-30,000, 0-3,000, 1-40 kg
P="--param stiffness:*:init=8000:min=100:max=1e6 --param damping:*:init=800:min=0:max=1e5"
P="$P --param mass:r[1-5]:init=12:min=0.1:max=1000"
PA="--param stiffness:*:init=8000:min=1000:max=30000 --param damping:*:init=800:min=0:max=3000"
PA="$PA --param mass:r[1-5]:init=12:min=1:max=40"
TEST=$(ls "$D"/fixed_nodyn/test/10hz/traj*.csv)

# fit NAME DATA SUBSTEPS INTEGRATOR [identify options...]: identify, then the CoM errors of its model ($P: the
# parameters and bounds)
fit() {
  name=$1 data=$2 sub=$3 integ=$4
  shift 4
  # shellcheck disable=SC2086
  "$B/physid" identify $M "$data" $P --substeps "$sub" --integrator "$integ" --loss onestep "$@" \
    --out "$F/$name.json" --write-model "$F/$name.xml" > "$F/$name.txt" 2> "$F/$name.log" || return 1
  # shellcheck disable=SC2086
  "$B/superball_com" "$F/$name.xml" 100 euler $TEST > "$F/$name.com1ms" || return 1
  if [ "$data" = "${data%1khz}" ] && { [ "$sub" != 100 ] || [ "$integ" != euler ]; }; then
    # shellcheck disable=SC2086
    "$B/superball_com" "$F/$name.xml" "$sub" "$integ" $TEST > "$F/$name.comown" || return 1
  else
    echo "| (same) |" > "$F/$name.comown"
  fi
}

has recurrent && { fit recurrent "$D/fixed_nodyn/train/10hz" 100 euler --files "$NTRAIN" --iters 30 || exit 1; }
has khz && { fit khz "$D/fixed_nodyn/train/1khz" 1 euler --files "$NTRAIN" --iters 30 || exit 1; }
has feedforward && { fit feedforward "$D/fixed_nodyn/train/10hz" 1 euler --files "$NTRAIN" --iters 30 || exit 1; }
has implicit && { fit implicit "$D/fixed_nodyn/train/10hz" 1 implicit --files "$NTRAIN" --iters 30 || exit 1; }
has implicit10 && { fit implicit10 "$D/fixed_nodyn/train/10hz" 10 implicit --files "$NTRAIN" --iters 30 || exit 1; }
has progressive && {
  P=$PA
  fit progressive "$D/fixed_nodyn/train/10hz" 100 euler --files $((NTRAIN + 1)) --validation 1 --progressive \
    --optimizer adam --iters "${PROG_ITERS:-5}" || exit 1
}

# the table: one row per route that ran
{
  echo "# SUPERball, non-contact set: paper 002's comparisons (issue 16 item 5)"
  echo
  echo "\`sh examples/tensegrity/compare.sh\` ($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'));"
  echo "$NTRAIN training trajectories of 5 s, the 10 test trajectories; start stiffness 8000, damping 800, mass 12"
  echo "(truth 10000, 1000, 10). CoM error: |CoM predicted - CoM recorded| at the 50 samples of each test"
  echo "trajectory, rolled out for 5 s from its first state (the recorded CoM's path: $(cut -d'|' -f6 "$F/recurrent.com1ms" 2>/dev/null | tr -d ' ') m"
  echo "per trajectory on average, summed over the 10 Hz samples). See docs/tensegrity.md."
  echo
  echo "| route | data | step in the fit | stiffness | damping | mass (kg) | iterations, stop | fit (s) | CoM error at 1 ms Euler: mean / at 5 s / max (m) | CoM error with the fit's own step: mean / at 5 s / max (m) |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for r in recurrent khz feedforward implicit implicit10 progressive; do
    [ -f "$F/$r.json" ] || continue
    python3 - "$F/$r.json" "$F/$r.com1ms" "$F/$r.comown" "$r" "$F/$r.log" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
v = {p["name"].split(":")[0]: (p["value"][0] if isinstance(p["value"], list) else p["value"]) for p in j["params"]}
def com(path):
    c = open(path).read().split("|")
    return "(same)" if "(same)" in c[1] else " / ".join(x.strip() for x in c[2:5])
route = {"recurrent": ("recurrent", "10 Hz", "100 x 1 ms Euler"), "khz": ("recurrent", "1 kHz", "1 x 1 ms Euler"),
         "feedforward": ("feed-forward", "10 Hz", "1 x 100 ms Euler"),
         "implicit": ("implicit only", "10 Hz", "1 x 100 ms implicit"),
         "implicit10": ("implicit only", "10 Hz", "10 x 10 ms implicit"),
         "progressive": ("progressive (Alg. 1)", "10 Hz", "implicit 100 ms -> 1 ms, then 1 ms Euler")}[sys.argv[4]]
it = "%d, %s" % (j["iterations"], j["stop"])
epochs = sum(1 for line in open(sys.argv[5]) if line.startswith("progressive epoch"))
if epochs:
    it = "%d epochs of %d Adam iterations" % (epochs, j["iterations"])
print("| %s | %s | %s | %.6g | %.6g | %.6g | %s | %.1f | %s | %s |" % (route + (v["stiffness"], v["damping"], v["mass"], it,
      j["time"]["total"], com(sys.argv[2]), com(sys.argv[3]))))
EOF
  done
} > "$OUT"
