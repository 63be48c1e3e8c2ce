#!/bin/sh
# scripts/bench_identify_mpi.sh - issue 21 item 4: `physid identify` of the real cube's friction and restitution on
# NTRAIN ContactNets tosses (default all 400) on 1 process x 1 thread, 1 process x 2 threads and 2 processes x 1
# thread (mpirun), the same fit each time (result.json compared but for "time"): wall time, speed-up and parallel
# efficiency T1 / (2 T2) (goal >= 80 % at 2; wall clock: run it on an idle machine), and the fit's evaluations.
# The fit is bench_identify.sh's: kstep over 10 samples, weights 1000/m, 100/rad, velocities 0, LM, lcp.
#
#   scripts/bench_identify_mpi.sh [PHYSID] [DATA]   (from the repository root; defaults build/physid and
#                                                    ../shared/data/cube_toss; NTRAIN=400)
#
# Writes bench/results/identify_mpi.md.
set -eu
PHYSID=${1:-build/physid}
DATA=${2:-../shared/data/cube_toss}
NTRAIN=${NTRAIN:-400}
OUT=${OUT:-bench/results/identify_mpi.md}
if [ ! -x "$PHYSID" ]; then
  echo "bench_identify_mpi.sh: $PHYSID not found or not executable: build it first" >&2
  exit 2
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$(dirname "$OUT")"
FIT="identify models/cube.xml $DATA --files $NTRAIN --contact lcp --param friction:cube:min=0:max=2
     --param restitution:cube:min=0:max=1 --loss kstep --horizon 10 --weights 1000,100,0 --quiet"
# run NAME LAUNCHER THREADS: the fit's wall time (s) into $TMP/NAME.wall, its result into $TMP/NAME.json
run() {
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  $2 "$PHYSID" $FIT --threads "$3" --out "$TMP/$1.json" > /dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l > "$TMP/$1.wall"
}
run p1t1 "" 1
run p1t2 "" 2
run p2t1 "mpirun --oversubscribe --allow-run-as-root -np 2" 1
strip() { sed '/"time":/,$d' "$TMP/$1.json"; }   # result.json but for its time
for v in p1t2 p2t1; do
  if [ "$(strip p1t1)" != "$(strip "$v")" ]; then echo "bench_identify_mpi.sh: $v's result differs from one process's" >&2; exit 1; fi
done
w1=$(cat "$TMP/p1t1.wall"); wt=$(cat "$TMP/p1t2.wall"); wp=$(cat "$TMP/p2t1.wall")
row() { printf '| %s | %.1f s | %.2fx | %.0f %% |\n' "$1" "$2" "$(echo "$w1 / $2" | bc -l)" "$(echo "100 * $w1 / (2 * $2)" | bc -l)"; }
{
  echo "# identify on processes and threads (scripts/bench_identify_mpi.sh)"
  echo
  echo "$NTRAIN real cube tosses, friction and restitution, kstep 10, LM, lcp; $(nproc) cores, $(git rev-parse --short HEAD 2>/dev/null || echo '?');"
  echo "the three results are identical but for their time (checked). Load average at the start: $(cut -d' ' -f1 /proc/loadavg)."
  echo
  echo "| run | wall | speed-up | efficiency at 2 |"
  echo "|---|---|---|---|"
  printf '| 1 process, 1 thread | %.1f s | 1 | - |\n' "$w1"
  row "1 process, 2 threads" "$wt"
  row "2 processes (mpirun), 1 thread each" "$wp"
} > "$OUT"
cat "$OUT"
