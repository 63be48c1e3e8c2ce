#!/bin/sh
# examples/control/run.sh - issue 13 item 4 (paper 001's experiments): every task file here,
# examples/control/TASK_METHOD.json, planned by `physid optimize`; their cost per iteration against wall time
# gathered in one CSV (task,method,iteration,seconds,cost) so that methods added later (random, cem, mppi:
# drop a TASK_METHOD.json beside the ddp one) join the same table and plots.
#
#   examples/control/run.sh [PHYSID]     (run from the repository root; PHYSID defaults to build/physid)
#
# Tasks: cartpole and double pendulum swing-up (models/cartpole.xml, models/double_pendulum.xml, from hanging
# at rest to upright at rest), the jump-worm's jump (models/jumpworm.xml, lcp contact: the root's height at
# the final step pulled to 1 m), MuJoCo's humanoid jump (its root's height at the final step pulled to 2.4 m).
# TASK-aware_ddp.json: the same task with "complementarity": true (complementarity-aware DDP); humanoid_jump-control:
# with the control regularization (the default) instead of the state's.
# Writes examples/control/results.md (a table per task), examples/control/costs.csv and one SVG per task
# (cost against wall time and against iterations, plot_svg.py), outputs of each run under
# examples/control/out/. Set TASKS to a list of task file names to run only those.
set -eu
PHYSID=${1:-build/physid}
DIR=examples/control
OUT=$DIR/out
mkdir -p "$OUT"
TASKS=${TASKS:-$(cd $DIR && ls *_*.json)}
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo '?')

csv=$DIR/costs.csv
echo "task,method,iteration,seconds,cost" > "$csv"
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for f in $TASKS; do
  base=${f%.json}
  method=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['method'])" "$DIR/$f")
  task=${base%_"$method"}
  echo "run.sh: $f" >&2
  "$PHYSID" optimize "$DIR/$f" --quiet
  res=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['out']['result'])" "$DIR/$f")
  traj=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['out']['trajectory'])" "$DIR/$f")
  # the cost per iteration and the cumulative wall time (iteration 0: the initial guess's rollout)
  python3 - "$DIR/$res" "$task" "$method" >> "$csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = 0.0
for i, (c, t) in enumerate(zip(r["cost"], r["seconds"])):
    s += t
    print("%s,%s,%d,%.6g,%.17g" % (sys.argv[2], sys.argv[3], i, s, c))
PY
  # the summary row: iterations, stop, final cost, wall time, the final state and the highest root
  python3 - "$DIR/$res" "$DIR/$traj" "$task" "$method" >> "$rows" <<'PY'
import csv, json, sys
r = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))
head, x = rows[0], [[float(v) for v in row] for row in rows[1:]]
nq = sum(1 for h in head if h.startswith("q"))
last = x[-1]
task = sys.argv[3]
if task in ("cartpole", "double_pendulum"):
    ang = {"cartpole": [2], "double_pendulum": [1, 2]}[task]
    extra = "final q = (%s), final v = (%s)" % (", ".join("%.5f" % last[1 + i] for i in range(nq)),
                                                  ", ".join("%.2g" % last[1 + nq + i] for i in range(nq)))
else:   # the root's height: the jump-worm's root_z (q1) + 0.0395, the humanoid's q2
    zi, z0 = (2, 0.0395) if task.startswith("jumpworm") else (3, 0.0)
    vz = last[zi + nq]
    top = max(x, key=lambda row: row[zi])
    extra = "root height at the start %.4f m, final %.4f m (vertical velocity %.3f m/s, ballistic apex %.4f m), highest %.4f m at t = %.3f s" % (
        x[0][zi] + z0, last[zi] + z0, vz, last[zi] + z0 + max(vz, 0) ** 2 / (2 * 9.81), top[zi] + z0, top[0])
print("| %s | %s | %d | %s | %.6g | %.6g | %.3g s | %s |" % (
    task, sys.argv[4], r["iterations"], r["stop"], r["cost"][0], r["final_cost"], sum(r["seconds"]), extra))
PY
done
python3 $DIR/plot_svg.py "$csv" "$DIR"
{
  echo "# Trajectory optimization experiments (issue 13 item 4, paper 001)"
  echo
  echo "\`sh examples/control/run.sh\` ($(date -u +%Y-%m-%d), commit $COMMIT, $(nproc) cores shared with other jobs: wall"
  echo "times are indicative). Each row is one \`physid optimize\` of a task file here; the cost per iteration and"
  echo "the cumulative wall time are in \`costs.csv\`, plotted in \`TASK.svg\` (cost against wall time and iterations)."
  echo
  echo "| task | method | iterations | stop | initial cost | final cost | wall time | result |"
  echo "|---|---|---|---|---|---|---|---|"
  cat "$rows"
} > $DIR/results.md
cat $DIR/results.md
