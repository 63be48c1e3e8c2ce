#!/bin/sh
# examples/catapult/run.sh - issue 13 item 4, paper 001's catapult (Nimble, RSS 2021, section VII-D): the arm
# of models/catapult.xml bats the ball, resting on the floor against its paddle, so that the ball's centre
# (site 'ball') is at the target (1.5, 0, 0.0495) at step 250 (t = 0.5 s): 0.83 m from its start, sliding on
# the floor with friction 0.5 after the hit. One task (task.json: a final site term of weight 1000, control
# effort 1e-3, the motors' +-5 N m bounds, 250 steps of 2 ms, zero controls to start) solved by
#   ms       multiple shooting (Ipopt, L-BFGS Hessian) from the rollout of zero controls
#   ms-gn    the same with the objective's Gauss-Newton Hessian
#   ddp      control-limited iLQR from zero controls
#   cem, mppi, random   stochastic search (src/control/sampling.c), SAMPLES rollouts x ITERATIONS around zero
#            controls, sigma 1 N m, 2 threads, seed 0 (their "options" replace the task's)
# METHODS selects and orders them (the task's "method" is replaced).
#
#   examples/catapult/run.sh [PHYSID]      (run from the repository root)
#
# Writes examples/catapult/results.md: per method the iterations, the wall time, the final cost of the
# controls' rollout (what simulate --ctrl-file replays), the ball's final position and its distance to the
# target, the largest defect (ms) and the largest |u|.
set -eu
PHYSID=${1:-build/physid}
METHODS=${METHODS:-"ms ms-gn ddp cem mppi random"}
SAMPLES=${SAMPLES:-64}
ITERATIONS=${ITERATIONS:-100}
OUT=${OUT:-examples/catapult/results.md}
DIR=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp "$DIR/../../models/catapult.xml" "$TMP/catapult.xml"

{
  echo "# Catapult: bat the ball to (1.5, 0, 0.0495) at step 250"
  echo
  echo "\`examples/catapult/run.sh\` at commit $(git -C "$DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
       "$(date -u +%Y-%m-%d), task \`examples/catapult/task.json\`."
  echo
  echo "| method | iterations (returned) | time s | final cost | ball x | ball z | distance to target mm | max defect | max abs u |"
  echo "|---|---|---|---|---|---|---|---|---|"
} > "$OUT"

for meth in $METHODS; do
  m=${meth%-gn}
  opt='"maxiter": 300'
  [ "$meth" = "ms-gn" ] && opt='"maxiter": 300, "hessian": "gauss-newton"'
  case $m in cem|mppi|random) opt="\"samples\": $SAMPLES, \"iterations\": $ITERATIONS, \"sigma\": 1, \"threads\": 2";; esac
  sed -e "s#\"../../models/catapult.xml\"#\"catapult.xml\"#" -e "s#\"method\": \"ms\"#\"method\": \"$m\"#" \
      -e "s#\"maxiter\": 300#$opt#" "$DIR/task.json" > "$TMP/task.json"
  echo "== $meth" >&2
  if ! "$PHYSID" optimize "$TMP/task.json" --quiet; then
    echo "| $meth | failed | | | | | | | |" >> "$OUT"
    continue
  fi
  python3 - "$TMP" "$meth" >> "$OUT" <<'PY'
import csv, json, math, sys
tmp, meth = sys.argv[1], sys.argv[2]
r = json.load(open(tmp + "/r.json"))
rows = list(csv.reader(open(tmp + "/x.csv")))
head, last = rows[0], rows[-1]
bx = 0.6695 + float(last[head.index("q3")])
bz = 0.0495 + float(last[head.index("q4")])
dist = 1000 * math.hypot(bx - 1.5, bz - 0.0495)
umax = max(abs(float(v)) for row in list(csv.reader(open(tmp + "/u.csv")))[1:] for v in row[1:])
its = str(r["iterations"])
if "returned_iteration" in r and r["returned_iteration"] != r["iterations"]:
    its += " (%d)" % r["returned_iteration"]
t = r.get("time", sum(r["seconds"]))
defect = "%.2g" % r["defect"] if "defect" in r else "0 (rollout)"
print("| %s | %s | %.2f | %.4g | %.5f | %.5f | %.3f | %s | %.3f |" % (meth, its, t, r["final_cost"], bx, bz, dist,
      defect, umax))
PY
done
cat "$OUT"
