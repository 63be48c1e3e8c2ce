#!/bin/sh
# scripts/bench_identify_robots.sh - issue 12's benchmark (scripts/bench_identify.sh's sibling, which times the
# cube tosses): `physid identify` on
#  (a) the arm case of tests/sysid/test_oracle_fit.c: models/arm7.xml simulated by MuJoCo 2.2.2 under held PD +
#      random controls, 8 runs x 200 samples at 100 Hz (the test's data maker: MAKER --write), the masses of l3,
#      l5 and the dampings of j2, j4 started 30 % off (x1.3, x0.7, x1.3, x0.7), from the recorded controls (u
#      columns) and from the measured joint torques (tau columns); identify's defaults, which choose 5 substeps
#      from the model's 2 ms step (given explicitly too, so the figures do not depend on that rule; one 10 ms
#      step per sample ends 100 % off);
#  (b) the elbow: friction and restitution of elbow_1 and elbow_2 against a floor (tests/data/elbow/elbow.urdf
#      --floating --add models/floor.xml, docs/cli.md) from the first NTRAIN (100) tosses of DATA, identify's
#      defaults from the nominal values (friction 1, restitution 0), per contact model; then `physid evaluate`
#      on the tosses after them (--skip NTRAIN: 300 held-out tosses), nominal and identified, full rollouts
#      and 10-sample rollouts (--horizon 10).
# Reported: wall time, the fit's forward / gradient seconds (result.json), LM iterations, the fitted values and,
# with valgrind installed (CALLGRIND=0 skips it), the instructions of one whole `physid identify` process
# (callgrind) for the arm (u) and the elbow (lcp). Nothing is asserted: the accuracy checks are the tests.
# KEEP=1 keeps the temporary folder (data, result.json files) and prints its name.
#
#   scripts/bench_identify_robots.sh [PHYSID] [DATA] [MAKER]   (from the repository root; defaults build/physid,
#        ../shared/data/elbow_toss, build/sysid_test_oracle_fit; NTRAIN=100, MODELS="lcp cone ccp penalty")
#
# Writes bench/results/identify_robots.md (OUT=FILE writes FILE instead: two runs with different MODELS side by side).
set -u
PHYSID=${1:-build/physid}
DATA=${2:-../shared/data/elbow_toss}
MAKER=${3:-build/sysid_test_oracle_fit}
NTRAIN=${NTRAIN:-100}
MODELS=${MODELS:-"lcp cone ccp penalty"}
CALLGRIND=${CALLGRIND:-1}
OUT=${OUT:-bench/results/identify_robots.md}
ELBOW="tests/data/elbow/elbow.urdf --floating --add models/floor.xml"
for f in "$PHYSID" "$MAKER"; do
  if [ ! -x "$f" ]; then
    echo "bench_identify_robots.sh: $f not found or not executable: build first (cmake --build build) or pass its path" >&2
    exit 2
  fi
done
if [ ! -d "$DATA" ]; then
  echo "bench_identify_robots.sh: $DATA: no such folder (the elbow tosses; pass their path)" >&2
  exit 2
fi
command -v valgrind > /dev/null || CALLGRIND=0
TMP=$(mktemp -d)
# the commit the run starts at (a merge during a long run must not relabel it)
git rev-parse --short HEAD > "$TMP/commit" 2> /dev/null || echo "?" > "$TMP/commit"
if [ "${KEEP:-0}" = 1 ]; then
  echo "keeping $TMP" >&2
else
  trap 'rm -rf "$TMP"' EXIT
fi
mkdir -p bench/results "$TMP/arm"

# timed NAME CMD...: run CMD, its stdout to $TMP/NAME.txt, stderr to $TMP/NAME.log, "rc t0 t1" to NAME.status
timed() {
  name=$1
  shift
  t0=$(date +%s.%N)
  "$@" > "$TMP/$name.txt" 2> "$TMP/$name.log"
  echo "$? $t0 $(date +%s.%N)" > "$TMP/$name.status"
  echo "$name: exit $(cut -d' ' -f1 "$TMP/$name.status"), $(tail -1 "$TMP/$name.txt")" >&2
}

# callgrind NAME CMD...: instructions of the whole process, to $TMP/NAME.instr
callgrind() {
  name=$1
  shift
  [ "$CALLGRIND" = 1 ] || return 0
  valgrind --tool=callgrind --callgrind-out-file="$TMP/$name.cg" "$@" > /dev/null 2> "$TMP/$name.vg"
  sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$TMP/$name.vg" > "$TMP/$name.instr"
  echo "$name: $(cat "$TMP/$name.instr") instructions" >&2
}

# (a) the arm
"$MAKER" --write "$TMP/arm" > "$TMP/arm_maker.txt" 2>&1 || { cat "$TMP/arm_maker.txt" >&2; exit 1; }
# "truth: l3 A, l5 B kg; j2 C, j4 D N m s/rad"
# shellcheck disable=SC2046
set -- $(sed -n 's/^truth: l3 \([^,]*\), l5 \([^ ]*\) kg; j2 \([^,]*\), j4 \([^ ]*\) .*/\1 \2 \3 \4/p' "$TMP/arm_maker.txt")
[ $# -eq 4 ] || { echo "bench_identify_robots.sh: no truth line from $MAKER" >&2; exit 1; }
echo "$1 $2 $3 $4" > "$TMP/arm_truth"
ARMP=$(awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" 'BEGIN { printf "--param mass:l3:init=%.6g --param mass:l5:init=%.6g --param damping:j2:init=%.6g --param damping:j4:init=%.6g", 1.3 * a, 0.7 * b, 1.3 * c, 0.7 * d }')
echo "physid identify models/arm7.xml DATA $ARMP --substeps 5" > "$TMP/arm_cmd"
for s in u tau; do
  # shellcheck disable=SC2086
  timed "arm_$s" "$PHYSID" identify models/arm7.xml "$TMP/arm/$s" $ARMP --substeps 5 --quiet --out "$TMP/arm_$s.json"
done
# shellcheck disable=SC2086
callgrind arm_u "$PHYSID" identify models/arm7.xml "$TMP/arm/u" $ARMP --substeps 5 --quiet

# (b) the elbow
PE="--param friction:elbow_1 --param friction:elbow_2 --param restitution:elbow_1 --param restitution:elbow_2"
echo "physid identify $ELBOW DATA --files $NTRAIN --contact C $PE" > "$TMP/elbow_cmd"
for c in $MODELS; do
  # shellcheck disable=SC2086
  timed "elbow_$c" "$PHYSID" identify $ELBOW "$DATA" --files "$NTRAIN" --contact "$c" $PE --quiet \
    --out "$TMP/elbow_$c.json" --write-model "$TMP/elbow_$c.xml"
  for h in 0 10; do
    # shellcheck disable=SC2086
    "$PHYSID" evaluate $ELBOW "$DATA" --skip "$NTRAIN" --contact "$c" --horizon "$h" --quiet \
      --json "$TMP/ev_nominal_${c}_$h.json" > /dev/null 2>&1
    [ -f "$TMP/elbow_$c.xml" ] && "$PHYSID" evaluate "$TMP/elbow_$c.xml" "$DATA" --skip "$NTRAIN" --contact "$c" \
      --horizon "$h" --quiet --json "$TMP/ev_fit_${c}_$h.json" > /dev/null 2>&1
  done
done
# shellcheck disable=SC2086
callgrind elbow_lcp "$PHYSID" identify $ELBOW "$DATA" --files "$NTRAIN" --contact lcp $PE --quiet

python3 - "$TMP" "$OUT" "$NTRAIN" "$MODELS" "$(nproc)" "$(uptime | sed 's/.*load average: //')" <<'PY'
import json, os, sys
tmp, out, ntrain, models, ncpu, load = sys.argv[1:7]
ntrain = int(ntrain)
rd = lambda n: open(os.path.join(tmp, n)).read().strip()

def run(name):
    """(wall s, result dict or None, exit code) of a timed run"""
    rc, t0, t1 = rd(name + ".status").split()
    jf = os.path.join(tmp, name + ".json")
    r = json.load(open(jf)) if rc == "0" and os.path.exists(jf) else None
    return float(t1) - float(t0), r, rc

def instr(name):
    f = os.path.join(tmp, name + ".instr")
    s = open(f).read().strip() if os.path.exists(f) else ""
    return "%.1fM" % (int(s) / 1e6) if s else "-"

def timing(wall, r):
    t = r["time"]
    return "%.1f | %.2f / %.2f | %d (%s)" % (wall, t["forward"], t["gradient"], r["iterations"], r["stop"])

B = ["# Identification benchmark, issue 12: the arm and the elbow\n",
     "Generated by `scripts/bench_identify_robots.sh` at commit %s, on this %s-core machine shared with other jobs "
     "(load average at the end: %s; wall times are upper bounds). wall: the whole `physid identify` process; "
     "forward / gradient: result.json's seconds of simulation and of residual Jacobians; instructions: callgrind, "
     "the whole process (loading, fit, uncertainty), one run. Nothing here is a pass/fail test.\n"
     % (rd("commit"), ncpu, load),
     "## The arm (tests/sysid/test_oracle_fit.c's case)\n",
     "models/arm7.xml simulated by MuJoCo 2.2.2 (the test's data maker, `build/sysid_test_oracle_fit --write DIR`): "
     "8 runs x 200 samples at 100 Hz, positions with 1e-4 rad and velocities with 1e-2 rad/s noise; four "
     "parameters started 30 % off; identify's defaults (loss {loss}, LM) and `--substeps 5`:\n",
     "    " + rd("arm_cmd") + "\n",
     "| inputs | wall s | forward / gradient s | LM iterations | instructions | mass:l3 | mass:l5 | damping:j2 | damping:j4 | largest error |",
     "|---|---|---|---|---|---|---|---|---|---|"]
truth = [float(x) for x in rd("arm_truth").split()]
loss = "?"
for s, label in (("u", "controls (`u0..u6`)"), ("tau", "joint torques (`tau0..tau6`)")):
    wall, r, rc = run("arm_" + s)
    if r is None:
        B.append("| %s | %.1f | failed (exit %s) | | | | | | | |" % (label, wall, rc)); continue
    loss = r["loss_kind"]
    vals = [p["value"] for p in r["params"]]
    errs = [abs(v / t - 1) for v, t in zip(vals, truth)]
    B.append("| %s | %s | %s | %s | %.3f %% |" % (label, timing(wall, r),
             instr("arm_u") if s == "u" else "-",
             " | ".join("%.5g (%.2f %%)" % (v, 100 * e) for v, e in zip(vals, errs)), 100 * max(errs)))
B = [b.replace("{loss}", loss) for b in B]
B.append("\nTruth (MuJoCo's model): l3 %.6g kg, l5 %.6g kg, j2 %.6g and j4 %.6g N m s/rad.\n" % tuple(truth))

B += ["## The elbow: %d tosses\n" % ntrain,
      "Friction and restitution of the elbow's two links against a floor (docs/cli.md, *Models*: "
      "`elbow.urdf --floating --add models/floor.xml`), identify's defaults from the nominal values (friction 1, "
      "restitution 0), fitted on the first %d tosses of ../shared/data/elbow_toss:\n" % ntrain,
      "    " + rd("elbow_cmd") + "\n",
      "| contact | wall s | forward / gradient s | LM iterations | instructions | loss0 -> loss | friction:elbow_1 | friction:elbow_2 | restitution:elbow_1 | restitution:elbow_2 |",
      "|---|---|---|---|---|---|---|---|---|---|"]
E = ["\nHeld out: `physid evaluate` on the tosses after the first %d (`--skip %d`), nominal -> identified, mean "
     "over all predicted samples (hinge: modulo 2 pi):\n" % (ntrain, ntrain),
     "| contact | tosses | full rollout: position | rotation | hinge | 10-sample rollouts: position | rotation | hinge |",
     "|---|---|---|---|---|---|---|---|"]
for c in models.split():
    wall, r, rc = run("elbow_" + c)
    if r is None:
        B.append("| %s | %.1f | failed (exit %s) | | | | | | | |" % (c, wall, rc)); continue
    B.append("| %s | %s | %s | %.4g -> %.4g | %s |" % (c, timing(wall, r), instr("elbow_lcp") if c == "lcp" else "-",
             r["loss0"], r["loss"], " | ".join("%.4g%s" % (p["value"], " (at bound)" if p["value"] in (p["min"], p["max"]) else "")
                                               for p in r["params"])))
    row, ntraj = [], "-"
    for h in (0, 10):
        try:
            n = json.load(open(os.path.join(tmp, "ev_nominal_%s_%d.json" % (c, h))))
            f = json.load(open(os.path.join(tmp, "ev_fit_%s_%d.json" % (c, h))))
        except (OSError, ValueError):
            row += ["failed"] * 3; continue
        ntraj = "%d" % f["trajectories"]
        row += ["%.1f -> %.1f mm" % (1e3 * n["position_m"]["mean"], 1e3 * f["position_m"]["mean"]),
                "%.1f -> %.1f deg" % (n["rotation_deg"]["mean"], f["rotation_deg"]["mean"]),
                "%.1f -> %.1f deg" % (n["hinge_deg"]["mean"], f["hinge_deg"]["mean"])]
    E.append("| %s | %s | %s |" % (c, ntraj, " | ".join(row)))
text = "\n".join(B + E) + "\n"
open(out, "w").write(text)
print(text)
PY
