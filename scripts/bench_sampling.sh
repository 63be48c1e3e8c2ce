#!/bin/sh
# scripts/bench_sampling.sh - issue 13 item 5's second benchmark: rollouts per second of the sampling methods
# (random shooting, CEM, MPPI; src/control/sampling.c) with 1 and 2 threads on this 2-core machine.
#
# For each scene and method, `physid optimize` runs the scene's task (examples/control) with the method, SAMPLES
# samples and ITERS iterations; the result JSON's seconds per iteration (wall time of each iteration: its
# rollouts and the sample-order reductions) give rollouts per second = samples x iterations / their sum, and
# steps per second = that x the horizon. The controls written with 1 and 2 threads are compared byte for byte
# (the methods promise the same bits for any thread count). Wall time on a shared machine drifts up to 2x:
# nothing here passes or fails, and the load average at the end is recorded. With a second binary (e.g. the
# commit before a change) every run is made with both, one after the other, in the same pass, and their
# controls are compared byte for byte too.
#
#   scripts/bench_sampling.sh [PHYSID [PHYSID_BEFORE]]   (from the repository root; default build/physid)
#   env: SAMPLES (64), ITERS (10), METHODS ("random cem mppi"), OUT (bench/results/sampling.md)
#
# Scenes: the cartpole swing-up (2 dofs, 300 steps, no contact) and MuJoCo's humanoid jump (27 dofs, 120
# steps, lcp contacts with the floor) of examples/control.
set -eu
PHYSID=${1:-build/physid}
BEFORE=${2:-}
SAMPLES=${SAMPLES:-64}
ITERS=${ITERS:-10}
METHODS=${METHODS:-"random cem mppi"}
OUT=${OUT:-bench/results/sampling.md}
. "$(dirname "$0")/bench_lib.sh"
require_binaries bench_sampling.sh "$PHYSID" $BEFORE
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows=$tmp/rows

# task SCENE METHOD THREADS BIN [ITERATIONS]: a copy of the scene's ddp task with the method and its options,
# outputs in tmp (BIN: 1 the binary measured, 2 the one before)
task() {
  python3 - "$1" "$2" "$3" "$SAMPLES" "${5:-$ITERS}" "$tmp" "$4" <<'EOF'
import json, os, sys
scene, method, threads, samples, iters, tmp, b = sys.argv[1:]
src = os.path.join("examples/control", scene + "_ddp.json")
t = json.load(open(src))
if not os.path.isabs(t["model"]):
    t["model"] = os.path.abspath(os.path.join("examples/control", t["model"]))
t["method"] = method
t["options"] = {"samples": int(samples), "iterations": int(iters), "sigma": 1, "seed": 0, "threads": int(threads)}
base = os.path.join(tmp, "%s_%s_%s_%s" % (scene, method, threads, b))
t["out"] = {"controls": base + "_u.csv", "result": base + ".json"}
json.dump(t, open(base + "_task.json", "w"))
print(base)
EOF
}

for scene in cartpole humanoid_jump; do
  for method in $METHODS; do
    for threads in 1 2; do
      b=0
      for bin in "$PHYSID" $BEFORE; do
        b=$((b + 1))
        base=$(task "$scene" "$method" "$threads" "$b")
        "$bin" optimize --quiet "${base}_task.json"
        python3 - "$base.json" "$scene" "$method" "$threads" "$SAMPLES" "$ITERS" "$bin" >> "$rows" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
scene, method, threads, samples, iters = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
secs = sum(r["seconds"][1:])          # iteration 0 is the initial guess's rollout
n = samples * iters
print("%s|%s|%d|%s|%d|%d|%.3f|%.0f|%.0f|%.6g" % (scene, method, threads, sys.argv[7], r["horizon"], n, secs, n / secs,
      n * r["horizon"] / secs, r["final_cost"]))
EOF
      done
    done
    same=yes
    for f in "${scene}_${method}_2_1" "${scene}_${method}_1_2" "${scene}_${method}_2_2"; do
      if [ -f "$tmp/${f}_u.csv" ] && ! cmp -s "$tmp/${scene}_${method}_1_1_u.csv" "$tmp/${f}_u.csv"; then same=NO; fi
    done
    echo "$scene|$method|same|$same" >> "$rows"
  done
done

# threads started per solve and instructions per rollout: callgrind on the cartpole by random shooting, 2
# threads (user-space instructions of the whole solve: the rollouts, the reductions and the thread management)
CG_ITERS=${CG_ITERS:-10}
cgrows=$tmp/cgrows
b=0
for bin in "$PHYSID" $BEFORE; do
  b=$((b + 1))
  base=$(task cartpole random 2 "cg$b" "$CG_ITERS")
  valgrind --tool=callgrind --toggle-collect=phys_sampling_solve --callgrind-out-file="$tmp/cg.$b" \
    "$bin" optimize --quiet "${base}_task.json" 2>/dev/null
  python3 - "$tmp/cg.$b" "$bin" "$SAMPLES" "$CG_ITERS" >> "$cgrows" <<'EOF'
import re, sys
names, cfn, created, total = {}, None, 0, 0
for line in open(sys.argv[1]):
    m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
    if m:
        if m.group(2): names[m.group(1)] = m.group(2).strip()
        if line.startswith("cfn="): cfn = names.get(m.group(1), "")
        continue
    if line.startswith("calls=") and cfn.startswith("pthread_create"):
        created += int(line.split()[0][6:])
    if line.startswith("summary:") or line.startswith("totals:"):
        total = int(line.split()[1])
n = int(sys.argv[3]) * int(sys.argv[4]) + 3   # and the initial guess's, the last mean's and the result's
print("%s|%d|%d|%.0f" % (sys.argv[2], created, total, total / n))
EOF
done

{
  echo "# Sampling methods: rollouts per second (issue 13, item 5)"
  echo
  echo "Generated by \`scripts/bench_sampling.sh\` at commit $COMMIT; $SAMPLES samples x $ITERS iterations per run, σ 1, seed 0;"
  echo "wall time from the result JSON (the iterations' seconds, the initial rollout excluded). Load average at the end:"
  echo "$(cut -d' ' -f1-3 /proc/loadavg). Nothing here is a pass/fail test.${BEFORE:+ Each run made with \`$PHYSID\` and \`$BEFORE\` one after the other.}"
  echo
  echo "| scene | method | threads | binary | horizon | rollouts | seconds | rollouts/s | steps/s | final cost | same controls (1 and 2 threads${BEFORE:+, both binaries}) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F'|' '$3 == "same" { same[$1 "|" $2] = $4; next } { line[++n] = $0; key[n] = $1 "|" $2 }
    END { for (i = 1; i <= n; i++) { split(line[i], f, "|");
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], same[key[i]] } }' "$rows"
  echo
  echo "Threads started and instructions (callgrind, inside phys_sampling_solve) for the cartpole by random shooting, 2 threads,"
  echo "$SAMPLES samples x $CG_ITERS iterations:"
  echo
  echo "| binary | threads started | instructions | instructions/rollout |"
  echo "|---|---|---|---|"
  awk -F'|' '{ printf "| %s | %s | %.1fM | %s |\n", $1, $2, $3 / 1e6, $4 }' "$cgrows"
} > "$OUT"
cat "$OUT"
