#!/bin/sh
# examples/ccn/cpu_per_iter.sh - CPU seconds per LM iteration of run.sh's ccn fit (start 0, friction, size and
# inertia of the cube) on the first N real tosses: user CPU of `identify --iters 3` minus that of `--iters 1`, over
# 2 (loading, the first evaluation and the intervals cancel). Session 32 (docs/identification.md, *Session 32*):
# 2.65 s at f583fa1, 1.43 s from 7888c96 (LM's Jacobian takes the accepted trial's inner solutions), N = 16.
#
#   examples/ccn/cpu_per_iter.sh [PHYSID] [N]      (from the repository root; default build/physid, 16)
#
# APPROACH=diffsim (s33): the same for run.sh's diffsim fit (`--approach diffsim`, its bounds: CPU per Adam
# iteration); s33 on 16 tosses: 4.04 CPU s (1 iteration), 6.04 (3): 1.00 CPU s per iteration (main f8205aa).
set -eu
PHYSID=${1:-build/physid}
N=${2:-16}
CUBE_DATA=${CUBE_DATA:-../shared/data/cube_toss}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
sed 's/<geom name="floor" type="plane"/<geom name="floor" type="plane" pos="0 0 0"/' examples/ccn/start.xml > "$T/start.xml"
A=-0.49712613667193356
B=1e6
if [ "${APPROACH:-ccn}" = diffsim ]; then   # run.sh's PARAMS_ADAM
  FIT="--approach diffsim --param friction:cube:min=0:max=2 --param size:cube:min=0.01:max=0.2
--param inertia:cube:min=$A,-10,-10,-10,-1,-1,-1,-1,-1,-1:max=$A,2,2,2,1,1,1,1,1,1"
else
  FIT="--loss violation --param friction:cube:min=0:max=2 --param size:cube
--param inertia:cube:min=$A,-$B,-$B,-$B,-$B,-$B,-$B,-$B,-$B,-$B:max=$A,$B,$B,$B,$B,$B,$B,$B,$B,$B"
fi
for it in 1 3; do
  # shellcheck disable=SC2086
  /usr/bin/time -f "%U" -o "$T/cpu$it" nice -n 10 "$PHYSID" identify "$T/start.xml" "$CUBE_DATA" --files "$N" --iters $it \
    --quiet $FIT > "$T/out$it"
done
python3 -c "import sys; a, b = float(open(sys.argv[1]).read()), float(open(sys.argv[2]).read()); \
print('%s tosses: %.2f CPU s (1 iteration), %.2f (3): %.2f CPU s per iteration' % (sys.argv[3], a, b, (b - a) / 2))" \
  "$T/cpu1" "$T/cpu3" "$N"
