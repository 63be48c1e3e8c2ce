#!/usr/bin/env bash
# scripts/segment_loss.sh - why fitted segment starts alone stop short of the truth on exact tosses (issue 12;
# docs/identification.md, *Defaults from the data*): 8 cube tosses physid simulates with friction 0.3, restitution
# 0.2 from the first states of data/cube_toss's tosses 0-7 (one step per sample, no noise; as
# scripts/velocity_defaults.sh's exact case), fitted by `identify --fit-start on` (the one-stage fit from the
# nominal 0.18 / 0.125); then bench/bench_segment_loss.c splits identify's loss by segment at that answer (starts at
# the samples and fitted) and follows the largest segment on the line to the truth (10 steps); last the staged
# default's answer and its split.
#
#   scripts/segment_loss.sh [BUILD]   (from the repository root; BUILD holds physid and bench_segment_loss,
#                                      default build)
set -euo pipefail
BUILD=${1:-build}
. "$(dirname "$0")/bench_lib.sh"
require_binaries segment_loss.sh "$BUILD/physid" "$BUILD/bench_segment_loss"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
sed 's/friction="0.18 0 0"/friction="0.3 0 0"/; s/data="0.125"/data="0.2"/' models/cube.xml > "$TMP/truth.xml"
mkdir "$TMP/exact"
for k in 0 1 2 3 4 5 6 7; do
  printf 'q0,q1,q2,q3,q4,q5,q6,v0,v1,v2,v3,v4,v5\n%s\n' "$(sed -n 2p "data/cube_toss/toss_00$k.csv" | cut -d, -f2-)" \
    > "$TMP/init.csv"
  "$BUILD/physid" simulate "$TMP/truth.xml" --init "$TMP/init.csv" --steps 100 --quiet --out "$TMP/exact/run$k.csv"
done
PARAMS=(--param friction:cube:max=2 --param restitution:cube)
values() {   # the fitted values of result.json $1, comma-separated, all digits
  python3 -c 'import json, sys; print(",".join(repr(p["value"]) for p in json.load(open(sys.argv[1]))["params"]))' "$1"
}
for mode in on auto; do
  "$BUILD/physid" identify models/cube.xml "$TMP/exact" "${PARAMS[@]}" --fit-start $mode --quiet --out "$TMP/r.json" \
    > /dev/null
  theta=$(values "$TMP/r.json")
  echo "== identify --fit-start $mode: friction, restitution $theta"
  if [ $mode = on ]; then
    "$BUILD/bench_segment_loss" models/cube.xml "$TMP/exact" friction:cube,restitution:cube "$theta" 0.3,0.2 10
  else
    "$BUILD/bench_segment_loss" models/cube.xml "$TMP/exact" friction:cube,restitution:cube "$theta"
  fi
done
