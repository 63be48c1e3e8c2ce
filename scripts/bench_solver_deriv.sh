#!/bin/sh
# scripts/bench_solver_deriv.sh - instructions per call of the step Jacobian (A, B), the one-step VJP and the
# size-parameter Jacobian (param_size: 2nv reverse passes at one linearization) under the cone and ccp contact
# models, on Table II's scenes in contact (bench/bench_table2.c --contact), by callgrind. With a second
# bench_table2 binary (e.g. built from the commit before a change) every count is made with both, one after the
# other, and the relative change is printed. Instruction counts, not wall time: nothing here passes or fails.
#
#   scripts/bench_solver_deriv.sh [BENCH_TABLE2 [BENCH_TABLE2_BEFORE]]   (from the repository root;
#                                                                       default build/bench_table2)
#   env: SCENES ("half_cheetah catapult jump_worm atlas"), TASKS ("jacobian vjp param_size"), MODELS
#        ("cone ccp"), CG_SAMPLES (calls per count, 2)
# Prints a markdown table (scene, model, task, instructions per call after [and before, change]).
set -eu
BIN=${1:-build/bench_table2}
BEFORE=${2:-}
SCENES=${SCENES:-"half_cheetah catapult jump_worm atlas"}
TASKS=${TASKS:-"jacobian vjp param_size"}
MODELS=${MODELS:-"cone ccp"}
N=${CG_SAMPLES:-2}
for b in "$BIN" $BEFORE; do
  if [ ! -x "$b" ]; then
    echo "bench_solver_deriv.sh: $b not found or not executable: build first (cmake --build build)" >&2
    exit 2
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# instr BIN SCENE MODEL TASK: instructions per call inside measured_* ("-" if the run failed)
instr() {
  cg=$tmp/cg.out
  rm -f "$cg"
  if valgrind --tool=callgrind --toggle-collect='measured_*' --callgrind-out-file="$cg" "$1" --root . \
      --samples "$N" --rounds 1 --scene "$2" --contact "$3" --only "$4" >/dev/null 2>&1; then
    awk -v n="$N" '/^(summary|totals):/ { print int($2 / n); exit }' "$cg"
  else
    echo "-"
  fi
}

echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $N calls per count"
echo
if [ -n "$BEFORE" ]; then
  echo "| scene | model | task | instructions | before | change |"
  echo "|---|---|---|---:|---:|---:|"
else
  echo "| scene | model | task | instructions |"
  echo "|---|---|---|---:|"
fi
for scene in $SCENES; do
  for model in $MODELS; do
    for task in $TASKS; do
      a=$(instr "$BIN" "$scene" "$model" "$task")
      if [ -n "$BEFORE" ]; then
        b=$(instr "$BEFORE" "$scene" "$model" "$task")
        c=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%+.1f %%", 100 * (a - b) / b }')
        echo "| $scene | $model | $task | $a | $b | $c |"
      else
        echo "| $scene | $model | $task | $a |"
      fi
    done
  done
done
