#!/bin/sh
# examples/ccn/s31.sh - session 31's (and 32's) runs of examples/ccn/run.sh (issue 14), in the order they ran: one run.sh
# call at a time at nice 10 (the machine is shared), each fit's wall seconds in results.csv's fit_s column and
# the load average at each call's start on stderr. REUSE=1: a fit already in WORK is evaluated, not rerun, so a
# rerun after an interruption goes on where it stopped.
#
#   examples/ccn/s31.sh [PHYSID] [STEP...]    (from the repository root; default build/physid, every step)
#
# Steps (docs/identification.md, *Session 31*):
#   cube8      real cube, 8 training tosses, start 0 (examples/ccn/start.xml): ccn, diffsim (the single-fit time
#              the rest was planned from)
#   cube8s     the same from the drawn starts 1 and 2 (run.sh's STARTS)
#   cube16s    16 tosses from starts 0, 1, 2
#   gravity    gravity mismatch, 8 tosses, the model's gravity x 0.75 and x 0.25, start 0: ccn, diffsim
#   vortex     vortex, 8 tosses, end-to-end (4 x 256 tanh, 100 epochs)
#   gravitys   gravity x 0.5 from starts 1 and 2: ccn, diffsim
# Session 32's steps (not in the default list; docs/identification.md, *Session 32*):
#   cube128    real cube, the first 128 training tosses, start 0: ccn, then diffsim
#   ccnr       ccn-r with the velocity metric (its default since s32), 8 and 16 tosses, start 0
# Session 33's steps (not in the default list; docs/identification.md, *Session 33*):
#   diffsim128 real cube, the first 128 training tosses, start 0: diffsim (ITERS_ADAM, default 100), checkpointed
#              (run.sh CKPT=1: a killed run resumes where it stopped when the step is run again)
#   bench256   issue 14 item 7 at 256 tosses: scripts/bench_violation.sh SIZES=256 CAP=256:$CAP256 (default 3) IR=0
#              into bench/results/violation_bench_s33.md (DATA: CUBE_DATA)
#   elbow      the real elbow tosses (run.sh's scenario elbow): ELBOW_SIZES (default 8) training tosses, ccn, ccn-fs
#              (friction and size only), diffsim
#   ccn256     real cube, the first 256 training tosses, start 0: ccn, checkpointed as diffsim128
set -u
PHYSID=${1:-build/physid}
[ $# -gt 0 ] && shift
STEPS=${*:-"cube8 cube8s cube16s gravity vortex gravitys"}
CUBE_DATA=${CUBE_DATA:-../shared/data/cube_toss}
ELBOW_DATA=${ELBOW_DATA:-../shared/data/elbow_toss}
ITERS_ADAM=${ITERS_ADAM:-100}
export CUBE_DATA ELBOW_DATA ITERS=40 ITERS_ADAM REUSE=1

# one run.sh call with the settings given as NAME=VALUE words
run() {
  echo "== $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg): $*" >&2
  t0=$(date +%s)
  env "$@" nice -n 10 sh examples/ccn/run.sh "$PHYSID"
  echo "== $(( $(date +%s) - t0 )) s wall" >&2
}

for s in $STEPS; do
  case $s in
    cube8) run SCENARIOS=cube SIZES=8 STARTS=0 APPROACHES="ccn diffsim" ;;
    cube8s) run SCENARIOS=cube SIZES=8 STARTS="1 2" APPROACHES="ccn diffsim" ;;
    cube16s) run SCENARIOS=cube SIZES=16 STARTS="0 1 2" APPROACHES="ccn diffsim" ;;
    gravity) run SCENARIOS=gravity GSIZE=8 GFRACS="0.75 0.25" STARTS=0 APPROACHES="ccn diffsim" ;;
    vortex) run SCENARIOS=vortex SIZES=8 STARTS=0 APPROACHES=e2e ;;
    gravitys) run SCENARIOS=gravity GSIZE=8 GFRACS=0.5 STARTS="1 2" APPROACHES="ccn diffsim" ;;
    cube128) run SCENARIOS=cube SIZES=128 STARTS=0 APPROACHES="ccn diffsim" ;;
    ccnr) run SCENARIOS=cube SIZES="8 16" STARTS=0 APPROACHES=ccn-r ;;
    diffsim128) run CKPT=1 SCENARIOS=cube SIZES=128 STARTS=0 APPROACHES=diffsim ;;
    bench256)
      echo "== $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg): bench_violation.sh 256" >&2
      SIZES=256 CAP="256:${CAP256:-3}" IR=0 OUT=bench/results/violation_bench_s33.md \
        nice -n 10 sh scripts/bench_violation.sh "$PHYSID" "$CUBE_DATA" ;;
    elbow) run SCENARIOS=elbow SIZES="${ELBOW_SIZES:-8}" STARTS=0 APPROACHES="ccn ccn-fs diffsim" ;;
    ccn256) run CKPT=1 SCENARIOS=cube SIZES=256 STARTS=0 APPROACHES=ccn ;;
    *) echo "s31.sh: unknown step $s" >&2; exit 2 ;;
  esac
done
