#!/usr/bin/env bash
# scripts/velocity_defaults.sh - issue 12 item 5: what identify's default loss gives against the one-step loss on
# data whose velocity columns are differenced positions and on data whose velocities are measured
# (docs/identification.md, *Defaults from the data*). Cases:
#   real cube      the ContactNets tosses (DATA, the first 12 and 100): velocity columns that are backward
#                  differences of the poses (lightly smoothed)
#   physid exact   8 cube tosses simulated by physid with friction 0.3, restitution 0.2 from the first states of
#                  tosses 0-7, one step per sample: velocities = the positions' backward differences exactly
#   physid noisy   the same with 1 mm of position noise, velocities its backward differences (simulate --noise)
#   physid every5  the same noise-free tosses at a 5 times shorter timestep, written every 5 steps: measured
#                  velocities (the state's at the sample times), fitted with the model at that timestep
# Each fitted from friction 0.18, restitution 0.125 with identify's defaults, with --loss onestep and, on the
# every5 data (the others' default is that loss), with kstep on positions (--loss kstep --horizon 30 --weights
# 1000,100,0); the table
# (markdown) on stdout with the chosen loss, the values, their 95 % intervals and the fit's time.
#
#   scripts/velocity_defaults.sh [PHYSID] [DATA]   (from the repository root; defaults build/physid and
#                                                   ../shared/data/cube_toss)
set -euo pipefail
PHYSID=${1:-build/physid}
DATA=${2:-../shared/data/cube_toss}
if [ ! -x "$PHYSID" ] || [ ! -d "$DATA" ]; then
  echo "velocity_defaults.sh: $PHYSID (built physid) or $DATA (a folder of cube tosses) not found" >&2
  exit 2
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
sed 's/friction="0.18 0 0"/friction="0.3 0 0"/; s/data="0.125"/data="0.2"/' models/cube.xml > "$TMP/truth.xml"
FIFTH='s/timestep="0.006756756756756757"/timestep="0.0013513513513513514"/'
sed "$FIFTH" "$TMP/truth.xml" > "$TMP/truth5.xml"
sed "$FIFTH" models/cube.xml > "$TMP/cube5.xml"
mkdir "$TMP/exact" "$TMP/noisy" "$TMP/every5" "$TMP/real12" "$TMP/real100"
i=0
for f in $(ls "$DATA"/*.csv | head -n 100); do
  if [ $i -lt 12 ]; then ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$TMP/real12/"; fi
  ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$TMP/real100/"
  if [ $i -lt 8 ]; then
    { echo "q0,q1,q2,q3,q4,q5,q6,v0,v1,v2,v3,v4,v5"; sed -n 2p "$f" | cut -d, -f2-; } > "$TMP/init$i.csv"
    "$PHYSID" simulate "$TMP/truth.xml" --init "$TMP/init$i.csv" --steps 100 --quiet --out "$TMP/exact/run$i.csv"
    "$PHYSID" simulate "$TMP/truth.xml" --init "$TMP/init$i.csv" --steps 100 --noise 0.001 --seed "$i" --quiet \
      --out "$TMP/noisy/run$i.csv"
    "$PHYSID" simulate "$TMP/truth5.xml" --init "$TMP/init$i.csv" --steps 500 --every 5 --quiet \
      --out "$TMP/every5/run$i.csv"
  fi
  i=$((i + 1))
done
echo "| data | loss | friction [95 %] | restitution [95 %] | fit |"
echo "|---|---|---|---|---|"
for d in real12 real100 exact noisy every5; do
  model=models/cube.xml
  [ $d = every5 ] && model="$TMP/cube5.xml"
  for opt in default onestep kstep; do
    [ $opt = kstep ] && [ $d != every5 ] && continue   # the default there (the same fit)
    [ $opt = onestep ] && [ $d = every5 ] && continue   # the default there (the same fit)
    extra=()
    [ $opt = onestep ] && extra=(--loss onestep)
    [ $opt = kstep ] && extra=(--loss kstep --horizon 30 --weights 1000,100,0)
    "$PHYSID" identify "$model" "$TMP/$d" --param friction:cube:max=2 --param restitution:cube \
      "${extra[@]}" --out "$TMP/r.json" > "$TMP/out.txt" 2> "$TMP/err.txt"
    loss=$(sed -n 's/.*; loss \([a-z]*\), contact.*/\1/p' "$TMP/err.txt")
    row=$(python3 - "$TMP/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cells = ["%.4g [%.3g, %.3g]" % (p["value"], p["lower95"], p["upper95"]) for p in r["params"]]
print(" | ".join(cells) + " | %.2f s" % r["time"]["total"])
PY
)
    echo "| $d | $loss$([ $opt = default ] && echo ' (default)') | $row |"
  done
done
