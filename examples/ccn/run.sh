#!/bin/sh
# examples/ccn/run.sh - issue 14 item 6: paper 004's experiments with the approaches physid has, errors against
# training-set size on a fixed test set, tables and an SVG plot.
#
#   examples/ccn/run.sh [PHYSID]      (from the repository root; default build/physid)
#
# Environment (defaults):
#   SCENARIOS="cube vortex gravity"   which experiments
#   SIZES="4 8 16 32 64 128 256"      training-set sizes (tosses 0..N-1)
#   APPROACHES="diffsim ccn"          fits run per size; also diffsim-kstep, diffsim-r, ccn-r, e2e (see below)
#   CUBE_DATA=../shared/data/cube_toss  the real cube tosses (ContactNets); TEST_SKIP=300 NTEST=50: test tosses
#   GFRACS="0.5 0.75 1.25 1.5" GSIZE=256  gravity scenario: the model's gravity as fractions of the data's 9.81,
#                                     one training-set size
#   EVAL_CONTACT=ccp                  contact model of every evaluation (DiffSim's, Anitescu: paper 004)
#   OUT=examples/ccn/results          tables (results.md, results.csv) and plots (*.svg)
#   WORK=build/ccn                    simulated data and fitted models (kept: a rerun reuses the data)
#   ITERS=100                         LM iterations per fit at most (the status column says how many ran and why
#                                     the fit stopped: max_iter means the cap ended it)
#   ITERS_ADAM=100                    Adam iterations of diffsim, diffsim-r, ccn-r (epochs of e2e)
#   REUSE=0                           1: a fit whose model and JSON are already in WORK is evaluated, not rerun
#   CKPT=0                            1: the LM and Adam fits (not ccn-r, diffsim-r, e2e) write WORK/TAG.ckpt after
#                                     every iteration and resume from it: a fit killed (the machine's share, the
#                                     job limit) goes on where it stopped when run.sh is called again, with the
#                                     same result bit for bit (identify --checkpoint --resume; s33)
#   VW=                               ccn's --violation-weights COMP,DISS,PEN; empty: the CLI's default (s29: 1,0.1,100
#                                     chosen on a validation split by examples/ccn/validate.sh; s28 ran 0.1,0.1,100;
#                                     paper 004's 0.001 for COMP, as we read its Table 2, lets far corners explain
#                                     angular noise and the inertia collapse: docs/identification.md)
#   VMETRIC=                          ccn's --violation-metric energy|velocity; empty: the CLI's default (s29: velocity)
#   FLOOR_Z=0                         the start model's table height (m); -0.00185: where the recorded cube rests
#   RREG=                             ccn-r's and diffsim-r's --residual-reg OUT,W (the network's output-norm and
#                                     weight-norm weights); empty: the CLI's 1e-4,1e-8; given, the rows are labelled
#                                     APPROACH@OUT/W (s30: 1e-11,1e-12, see docs/identification.md)
#   STARTS=0                          the starts of every fit: 0 is examples/ccn/start.xml itself (rows labelled
#                                     APPROACH); K > 0 draws the box's three half sizes and the friction each
#                                     uniformly in 0.5-1.5 times the authors' 0.0524 m and 0.18 (paper 004's
#                                     starting ranges, its appendix A.4) by Python's random.Random(K) (the same
#                                     start for every size, scenario and approach); its rows are labelled
#                                     APPROACH/sK and its start model's own row start/sK (s31)
#
# Scenarios (paper 004, section 5):
#   cube     the real cube tosses; truth: models/cube.xml (the data authors' 0.1048 m cube, 0.37 kg uniform,
#            friction 0.18: friction error against the authors' nominal value, not a measured truth)
#   vortex   tosses of models/cube.xml made by MuJoCo 2.2.2 (examples/ccn/make_tosses.c, build/make_tosses;
#            checked by tests/tools/test_oracle_make_tosses.c) in a force field
#            F = m (-a r + b e_z x r) around the vertical line (0.2, 0.2), a = b = 20 1/s^2; the model to fit
#            knows nothing of it; truth: models/cube.xml
#   gravity  tosses made by MuJoCo without the field, g = 9.81; the model to fit assumes g * FRAC
#   elbow    the real elbow tosses (ELBOW_DATA=../shared/data/elbow_toss: paper 004's articulated object, two
#            boxes on a passive hinge; s33); truth and nominal: examples/ccn/elbow.xml (the data's elbow.urdf
#            values, friction 0.3 on the floor geom: one scalar for both links); every fit starts from
#            examples/ccn/elbow_start.xml (both boxes and the inertias as the cube's start: sizes and friction
#            x 1.3; STARTS 0 only). Fitted: friction:floor, size and inertia (mass held) of both links (ccn-fs:
#            friction and size); same split (TEST_SKIP, NTEST) as the cube; approaches ccn, ccn-fs, diffsim.
#            The errors are the base link's position and rotation (the paper averages all bodies'); evaluate's
#            hinge error is in WORK's eval JSON
# Every fit starts from the same wrong model (examples/ccn/start.xml): the cube's box 1.3 times larger (0.068 m half size),
# friction 1.3 times the nominal (0.234; paper 004's starts lie within 0.5-1.5 times the true sizes and friction), the mass held at 0.37 kg (paper 004: mass is unobservable without measured forces) with the
# larger box's inertia. Fitted: friction:cube, size:cube, inertia:cube (log-Cholesky, component 0 fixed).
#   ccn      --loss violation (paper 004's violation-based implicit loss), LM
#   ccn-floor  ccn with the table's height fitted as well (--param height:floor; s29)
#   ccn-fs   ccn with friction and size only, the inertia held at the start's (s33: on the elbow, ccn's inertia
#            collapses: docs/identification.md, *Session 33*)
#   diffsim  --approach diffsim: paper 004's DiffSim, the one-step prediction loss through the ccp (Anitescu)
#            simulation, by Adam (ITERS_ADAM iterations; finite bounds: Adam's step is lr x bound width)
#   diffsim-kstep  --contact ccp with identify's default loss on these data (kstep, horizon 30, positions), LM:
#            a stronger prediction baseline than the paper's (until s27 this was the row called "diffsim")
#   ccn-r, diffsim-r  --approach ccn-r|diffsim-r: the loss with the paper's 2 x 128 ReLU residual network, Adam;
#            evaluated with `evaluate --residual NET` (ccn-r fits friction and size only: the network's force
#            has no inertia derivative in the violation loss)
#   e2e      --approach end-to-end (4 x 256 tanh next-velocity network), evaluated with `--end-to-end NET`
# Metrics (`physid evaluate --truth`): full rollouts of every test toss from its first sample, paper 004's
# trajectory position error (mm) and rotational error (deg) (per toss the mean over its samples, then the mean
# over tosses), volume error, friction error, inertia error (default characteristic length).
set -u
PHYSID=${1:-build/physid}
SCENARIOS=${SCENARIOS:-"cube vortex gravity"}
SIZES=${SIZES:-"4 8 16 32 64 128 256"}
APPROACHES=${APPROACHES:-"diffsim ccn"}
CUBE_DATA=${CUBE_DATA:-../shared/data/cube_toss}
ELBOW_DATA=${ELBOW_DATA:-../shared/data/elbow_toss}
TEST_SKIP=${TEST_SKIP:-300}
NTEST=${NTEST:-50}
GFRACS=${GFRACS:-"0.5 0.75 1.25 1.5"}
GSIZE=${GSIZE:-256}
EVAL_CONTACT=${EVAL_CONTACT:-ccp}
OUT=${OUT:-examples/ccn/results}
WORK=${WORK:-build/ccn}
ITERS=${ITERS:-100}
REUSE=${REUSE:-0}
VW=${VW:-}
VMETRIC=${VMETRIC:-}
FLOOR_Z=${FLOOR_Z:-0}
RREG=${RREG:-}
STARTS=${STARTS:-0}
CKPT=${CKPT:-0}
mkdir -p "$OUT" "$WORK"
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
CSV="$OUT/results.csv"
[ -f "$CSV" ] || echo "scenario,size,approach,position_mm,rotation_deg,volume,friction,inertia,fit_s,status,commit" > "$CSV"

# the start model examples/ccn/start.xml with its plane at FLOOR_Z, with gravity G if not empty, and for START K > 0
# the box's half sizes and friction drawn (STARTS above)
start_model() {   # OUT.xml [G] [K]
  python3 - "$1" "$FLOOR_Z" "${2:-}" "${3:-0}" <<'PY'
import random, sys
out, z, g, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
s = open("examples/ccn/start.xml").read()
s = s.replace('<geom name="floor" type="plane"', '<geom name="floor" type="plane" pos="0 0 %s"' % z)
if g:
    s = s.replace('gravity="0 0 -9.81"', 'gravity="0 0 -%s"' % g)
if k > 0:   # three half sizes, then friction, each 0.5-1.5 times the authors' value
    rng = random.Random(k)
    h = " ".join("%.6g" % (0.0524 * rng.uniform(0.5, 1.5)) for _ in range(3))
    mu = "%.6g" % (0.18 * rng.uniform(0.5, 1.5))
    s = s.replace('size="0.068 0.068 0.068"', 'size="%s"' % h).replace('friction="0.234 0 0"', 'friction="%s 0 0"' % mu)
open(out, "w").write(s)
PY
}

# simulated tosses, made once into WORK by build/make_tosses (PHYS_ORACLE builds it beside the CLI), else compiled
# here. The vortex folder is vortex2 since s30: the earlier generator applied the force at the previous sample's
# position (a one-step lag, found by tests/tools/test_oracle_make_tosses.c), so data in WORK/vortex are stale.
make_data() {   # NAME, then make_tosses arguments after OUTDIR N SAMPLES
  name=$1; shift
  [ -f "$WORK/$name/toss_349.csv" ] && return 0
  gen=$(dirname "$PHYSID")/make_tosses
  if [ ! -x "$gen" ]; then
    gen=$WORK/make_tosses
    cc -O2 -o "$gen" examples/ccn/make_tosses.c -lmujoco -lm || return 1
  fi
  "$gen" models/cube.xml "$WORK/$name" 350 100 "$@"
}

# log-Cholesky component 0 of the cube's inertia (mass 0.37 held): log(0.37)/2
A=-0.49712613667193356
B=1e6
PARAMS="--param friction:cube:min=0:max=2 --param size:cube \
--param inertia:cube:min=$A,-$B,-$B,-$B,-$B,-$B,-$B,-$B,-$B,-$B:max=$A,$B,$B,$B,$B,$B,$B,$B,$B,$B"
# Adam's (the ±1e6 above would make its first step 2e4 in log-Cholesky: no model, stop sim_failed)
PARAMS_ADAM="--param friction:cube:min=0:max=2 --param size:cube:min=0.01:max=0.2 \
--param inertia:cube:min=$A,-10,-10,-10,-1,-1,-1,-1,-1,-1:max=$A,2,2,2,1,1,1,1,1,1"
PARAMS_CCNR="--param friction:cube:min=0:max=2 --param size:cube:min=0.01:max=0.2"
PARAMS_FS="--param friction:cube:min=0:max=2 --param size:cube"
TRUTH=models/cube.xml
# the elbow's (scenario elbow): the same kinds for both links, friction on the floor (examples/ccn/elbow.xml)
elbow_params() {   # LM|ADAM|FS
  echo "--param friction:floor:min=0:max=2"
  for b in elbow_1 elbow_2; do
    if [ "$1" = FS ]; then
      echo "--param size:$b"
    elif [ "$1" = LM ]; then
      echo "--param size:$b --param inertia:$b:min=$A,-$B,-$B,-$B,-$B,-$B,-$B,-$B,-$B,-$B:max=$A,$B,$B,$B,$B,$B,$B,$B,$B,$B"
    else
      echo "--param size:$b:min=0.01:max=0.2 --param inertia:$b:min=$A,-10,-10,-10,-1,-1,-1,-1,-1,-1:max=$A,2,2,2,1,1,1,1,1,1"
    fi
  done
}
ITERS_ADAM=${ITERS_ADAM:-100}

# evaluate MODEL on the test tosses of DATA against TRUTH and append a CSV row
row() {   # SCENARIO SIZE APPROACH MODEL DATA FIT_S STATUS [EVALUATE OPTIONS]
  j="$WORK/eval_$(echo "$1_$2_$3" | tr /@ -+).json"
  # shellcheck disable=SC2086
  if [ -f "$4" ] && "$PHYSID" evaluate "$4" "$5" --skip "$TEST_SKIP" --files "$NTEST" --contact "$EVAL_CONTACT" \
       --horizon 0 --quiet --truth "$TRUTH" --json "$j" ${8:-} > /dev/null 2>> "$WORK/eval.err"; then
    python3 - "$j" "$1" "$2" "$3" "$6" "$7" "$COMMIT" >> "$CSV" <<'PY'
import json, sys
j, scen, size, appr, secs, status, commit = sys.argv[1:8]
d = json.load(open(j))
p = d["parameter_errors"]
if appr.startswith("e2e"):   # no physical parameters: the start model's errors would be reported
    p = {"volume": None, "friction": None, "inertia": None}
f = lambda x, s=1: "" if x is None else "%.6g" % (x * s)
print(",".join([scen, size, appr, f(d["position_m"]["traj_mean"], 1000), f(d["rotation_deg"]["traj_mean"]),
                f(p["volume"]), f(p["friction"]), f(p["inertia"]), secs, status, commit]))
PY
  else
    echo "$1,$2,$3,,,,,,$6,$7 (no model or evaluate failed),$COMMIT" >> "$CSV"
  fi
}

# fit METHOD on the first SIZE tosses of DATA from START, row LABEL; then evaluate
fit() {   # SCENARIO SIZE LABEL METHOD START DATA
  tag=$(echo "$1_$2_$3" | tr /@ -+)   # a file name (labels may carry @OUT/W)
  model="$WORK/$tag.xml"
  net="$WORK/$tag.net.json"
  meth=$4 it=$ITERS out="--out $WORK/$tag.json" wm="--write-model $model" ev=""
  case $meth in
    ccn) extra="--loss violation ${VW:+--violation-weights $VW} ${VMETRIC:+--violation-metric $VMETRIC} $PARAMS" ;;
    ccn-fs) extra="--loss violation ${VW:+--violation-weights $VW} ${VMETRIC:+--violation-metric $VMETRIC} $PARAMS_FS" ;;
    ccn-floor) extra="--loss violation ${VW:+--violation-weights $VW} ${VMETRIC:+--violation-metric $VMETRIC} $PARAMS \
--param height:floor" ;;
    diffsim-kstep) extra="--contact ccp $PARAMS" ;;
    diffsim) extra="--approach diffsim $PARAMS_ADAM" it=$ITERS_ADAM ;;
    diffsim-r) extra="--approach diffsim-r --network-out $net $PARAMS_ADAM ${RREG:+--residual-reg $RREG}" it=$ITERS_ADAM
               out="" ev="--residual $net" ;;
    ccn-r) extra="--approach ccn-r --network-out $net $PARAMS_CCNR ${RREG:+--residual-reg $RREG}" it=$ITERS_ADAM out=""
           ev="--residual $net" ;;
    e2e) extra="--approach end-to-end --network-out $net" it=$ITERS_ADAM out="" wm="" ev="--end-to-end $net"
         model=$5 ;;
    *) echo "run.sh: unknown approach $meth" >&2; return ;;
  esac
  [ "$CKPT" = 1 ] && [ -n "$out" ] && extra="$extra --checkpoint $WORK/$tag.ckpt --resume"
  if [ "$REUSE" = 1 ] && [ -f "$WORK/$tag.secs" ]; then
    st=0; secs=$(cat "$WORK/$tag.secs")
  else
    t0=$(date +%s)
    # shellcheck disable=SC2086
    "$PHYSID" identify "$5" "$6" --files "$2" --iters "$it" --quiet $out $wm $extra > "$WORK/$tag.txt" \
      2> "$WORK/$tag.err"
    st=$?
    secs=$(( $(date +%s) - t0 ))
    [ "$st" != 0 ] || echo "$secs" > "$WORK/$tag.secs"
  fi
  if [ -n "$out" ]; then   # the JSON result: iterations and why the fit stopped
    its=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%d it. %s" % (d["iterations"], d["stop"]))' \
          "$WORK/$tag.json" 2> /dev/null)
  else                     # the networks' approaches print "...: LOSS a -> b in N iterations|epochs"
    its=$(sed -n '1s/.* in \([0-9]*\) \(iterations\|epochs\).*/\1 \2/p' "$WORK/$tag.txt")
  fi
  echo "== $tag: exit $st, ${secs} s, $its" >&2
  row "$1" "$2" "$3" "$model" "$6" "$secs" "exit $st; $its" "$ev"
}

# a row's approach label: the residual approaches with RREG carry it (APPROACH@OUT/W); SUFFIX after it
label() {   # APPROACH [SUFFIX]
  case $1 in
    ccn-r|diffsim-r) if [ -n "$RREG" ]; then echo "$1@$(echo "$RREG" | tr , /)${2:-}"; else echo "$1${2:-}"; fi ;;
    *) echo "$1${2:-}" ;;
  esac
}

# a start's label suffix: none for start 0 (examples/ccn/start.xml), /sK else
sfx() {   # K
  [ "$1" = 0 ] || echo "/s$1"
}

for scen in $SCENARIOS; do
  case $scen in
    cube) data=$CUBE_DATA ;;
    vortex) make_data vortex2 20 20 0.2 0.2 > /dev/null || exit 1; data="$WORK/vortex2" ;;
    gravity) make_data gravity --gravity 9.81 > /dev/null || exit 1; data="$WORK/gravity" ;;
    elbow) (   # a subshell: the elbow's TRUTH and PARAMS end with it
             data=$ELBOW_DATA TRUTH=examples/ccn/elbow.xml PARAMS=$(elbow_params LM) PARAMS_ADAM=$(elbow_params ADAM) \
               PARAMS_FS=$(elbow_params FS)
             row elbow 0 nominal "$TRUTH" "$data" 0 ok
             row elbow 0 start examples/ccn/elbow_start.xml "$data" 0 ok
             for n in $SIZES; do
               for ap in $APPROACHES; do fit elbow "$n" "$ap" "$ap" examples/ccn/elbow_start.xml "$data"; done
             done
           )
           continue ;;
    *) echo "unknown scenario $scen" >&2; exit 2 ;;
  esac
  if [ "$scen" = gravity ]; then
    row gravity "$GSIZE" nominal models/cube.xml "$data" 0 ok   # the true model with the data's gravity
    for fr in $GFRACS; do
      g=$(python3 -c "print('%.6g' % (9.81 * $fr))")
      for k in $STARTS; do
        sm=$WORK/start_g$fr$(sfx "$k" | tr / _).xml
        start_model "$sm" "$g" "$k"
        row gravity "$GSIZE" "start_g$fr$(sfx "$k")" "$sm" "$data" 0 ok
        for ap in $APPROACHES; do fit gravity "$GSIZE" "$(label "$ap" "_g$fr$(sfx "$k")")" "$ap" "$sm" "$data"; done
      done
    done
    continue
  fi
  row "$scen" 0 nominal models/cube.xml "$data" 0 ok
  for k in $STARTS; do
    sm=$WORK/start$(sfx "$k" | tr / _).xml
    start_model "$sm" "" "$k"
    row "$scen" 0 "start$(sfx "$k")" "$sm" "$data" 0 ok
  done
  for n in $SIZES; do
    for k in $STARTS; do
      sm=$WORK/start$(sfx "$k" | tr / _).xml
      for ap in $APPROACHES; do fit "$scen" "$n" "$(label "$ap" "$(sfx "$k")")" "$ap" "$sm" "$data"; done
    done
  done
done
python3 examples/ccn/tables.py "$CSV" "$OUT"
