#!/usr/bin/env bash
# scripts/fit_start.sh - issue 12 item 5: identify with each kstep segment's start state fitted (--fit-start on, the
# default for kstep on positions with differenced velocities) against the recorded samples (--fit-start off)
# (docs/identification.md, *Segment start states*). Cases, each with kstep on positions:
#   real cube   the main job: the first 12 ContactNets tosses of data/cube_toss, friction and restitution
#   elbow       the first 10 elbow tosses (ELBOW folder), friction and restitution of both links against the floor
#               under lcp from the nominal values, declared differenced (their alpha 0.768 is just outside the
#               threshold: the default there is onestep), then `physid evaluate` of each identified model on 30
#               tosses it was not fitted on (--skip 100 --files 30): full-rollout errors
#   cube, 100   with a third argument (the ContactNets tosses, e.g. ../shared/data/cube_toss): the first 100 tosses
#               with the starts fitted (about 10 minutes)
# Prints identify's result lines and evaluate's table for each setting.
#
#   scripts/fit_start.sh [PHYSID] [ELBOW] [CUBE100]   (from the repository root; defaults build/physid and
#                                                     ../shared/data/elbow_toss; CUBE100: none)
set -euo pipefail
PHYSID=${1:-build/physid}
ELBOW=${2:-../shared/data/elbow_toss}
if [ ! -x "$PHYSID" ] || [ ! -d "$ELBOW" ]; then
  echo "fit_start.sh: $PHYSID (built physid) or $ELBOW (the elbow tosses) not found" >&2
  exit 2
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for fs in off on; do
  echo "== real cube, 12 tosses, --fit-start $fs"
  "$PHYSID" identify models/cube.xml data/cube_toss --param friction:cube:max=2 --param restitution:cube \
    --fit-start "$fs" --quiet
done
E="tests/data/elbow/elbow.urdf --floating --add models/floor.xml"
PE="--param friction:elbow_1 --param friction:elbow_2 --param restitution:elbow_1 --param restitution:elbow_2"
for fs in off on; do
  echo "== elbow, 10 tosses, lcp, --velocities differenced --fit-start $fs"
  # shellcheck disable=SC2086
  "$PHYSID" identify $E "$ELBOW" --files 10 --contact lcp $PE --velocities differenced --fit-start "$fs" --quiet \
    --write-model "$TMP/elbow_$fs.xml"
  "$PHYSID" evaluate "$TMP/elbow_$fs.xml" "$ELBOW" --skip 100 --files 30 --contact lcp
done
if [ $# -ge 3 ]; then
  echo "== real cube, 100 tosses, --fit-start on"
  "$PHYSID" identify models/cube.xml "$3" --files 100 --param friction:cube:max=2 --param restitution:cube \
    --fit-start on --quiet
fi
