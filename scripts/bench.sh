#!/usr/bin/env bash
# bench.sh - build, time physid phys_step against MuJoCo mj_step side by side, count instructions per step
# with callgrind, and print a markdown table. Timing is information only: nothing here passes or fails.
#
# usage: scripts/bench.sh [MODEL.xml ...]      (default: MuJoCo's humanoid and models/arm7.xml)
# env:   BUILD_DIR (default build-bench), SAMPLES (default 2000), ROUNDS (default 3),
#        CG_SAMPLES (callgrind samples, default 200), NO_CALLGRIND=1 to skip instruction counts
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-bench}"
samples="${SAMPLES:-2000}"
rounds="${ROUNDS:-3}"
cg_samples="${CG_SAMPLES:-200}"
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=(/usr/share/mujoco/model/humanoid/humanoid.xml "$root/models/arm7.xml")
fi

bash "$root/scripts/setup.sh" 
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target bench_step >/dev/null
bin="$build/bench_step"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# timings: one run, all engines interleaved per model
"$bin" --samples "$samples" --rounds "$rounds" "${models[@]}" | tee "$tmp/time.txt" >&2

# instructions per step: callgrind counts only inside measured_* (one engine per run), total / calls
instr() {  # model engine -> instructions per step
  local out="$tmp/cg.$RANDOM"
  valgrind --tool=callgrind --toggle-collect='measured_*' --callgrind-out-file="$out" \
    "$bin" --samples "$cg_samples" --rounds 1 --only "$2" "$1" >/dev/null 2>&1 || { echo "-"; return; }
  awk -v n="$cg_samples" '/^(summary|totals):/ { print int($2 / n); exit }' "$out"
}

# value of key=... in a RESULT line
field() { tr '\t' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

echo
echo "| model | engine | nv | contacts | us/step (median) | instr/step | time ratio | instr ratio |"
echo "|---|---|---|---|---|---|---|---|"
for model in "${models[@]}"; do
  name="$(basename "$model")"
  ref_us=""; ref_ir=""
  for engine in mujoco-nocontact physid mujoco-contact; do
    line="$(awk -F'\t' -v m="$name" -v e="$engine" '$1=="RESULT" && $2==m && $3==e' "$tmp/time.txt")"
    [ -n "$line" ] || continue
    us="$(field "$line" median_us)"; nv="$(field "$line" nv)"; ncon="$(field "$line" ncon)"
    ir="-"
    [ "${NO_CALLGRIND:-0}" = 1 ] || ir="$(instr "$model" "$engine")"
    if [ "$engine" = mujoco-nocontact ]; then ref_us="$us"; ref_ir="$ir"; fi
    tr="-"; irr="-"
    [ -n "$ref_us" ] && tr="$(awk -v a="$us" -v b="$ref_us" 'BEGIN { printf "%.2f", a / b }')"
    [ -n "$ref_ir" ] && [ "$ir" != "-" ] && [ "$ref_ir" != "-" ] && \
      irr="$(awk -v a="$ir" -v b="$ref_ir" 'BEGIN { printf "%.2f", a / b }')"
    [ "$ncon" = "-1" ] && ncon="off"
    echo "| $name | $engine | $nv | $ncon | $us | $ir | $tr | $irr |"
  done
done
echo
echo "Ratios are relative to MuJoCo with contacts disabled on the same model, measured in the same run."
