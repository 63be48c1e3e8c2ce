#!/usr/bin/env bash
# bench_contact.sh - contact benchmark: physid (lcp, cone, ccp, penalty) beside MuJoCo 2.2.2 and DART 6.12 on
# the box resting and sliding, the half cheetah, the humanoid on the floor and Atlas on the ground; times
# one step (median, state restored before each sample) and counts instructions per step with callgrind;
# prints a markdown table. Timing is information only: nothing here passes or fails.
#
# usage: scripts/bench_contact.sh [SCENE ...]   (box_rest box_slide half_cheetah humanoid atlas; default all)
# env:   BUILD_DIR (default build-bench), SAMPLES (default 500), ROUNDS (default 3),
#        CG_SAMPLES (callgrind samples, default 50), NO_CALLGRIND=1 to skip instruction counts,
#        NO_SETUP=1 to skip scripts/setup.sh --bench (packages already installed)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-bench}"
samples="${SAMPLES:-500}"
rounds="${ROUNDS:-3}"
cg_samples="${CG_SAMPLES:-50}"
scenes=("$@")
[ ${#scenes[@]} -gt 0 ] || scenes=(box_rest box_slide half_cheetah humanoid atlas)

if [ -z "${NO_SETUP:-}" ]; then bash "$root/scripts/setup.sh" --bench; fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target bench_contact >/dev/null
dart=""
if grep -q '^PHYS_BENCH_DART:BOOL=ON' "$build/CMakeCache.txt"; then
  cmake --build "$build" -j2 --target bench_dart >/dev/null && dart="$build/bench_dart"
fi
bin="$build/bench_contact"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# timings: one run per program, engines interleaved per scene
sargs=(); for s in "${scenes[@]}"; do sargs+=(--scene "$s"); done
"$bin" --root "$root" --samples "$samples" --rounds "$rounds" "${sargs[@]}" | tee "$tmp/time.txt" >&2
dscenes=(); for s in "${scenes[@]}"; do case "$s" in box_rest|box_slide|atlas) dscenes+=(--scene "$s");; esac; done
if [ -n "$dart" ] && [ ${#dscenes[@]} -gt 0 ]; then
  dsamples=$samples; [ "$dsamples" -le 100 ] || dsamples=100   # DART's Atlas with FCL takes milliseconds a step
  "$dart" --samples "$dsamples" --rounds "$rounds" "${dscenes[@]}" | tee -a "$tmp/time.txt" >&2
fi

# instructions per step: callgrind counts only inside measured_* (one engine, one scene per run)
instr() {  # scene engine -> instructions per step
  local out="$tmp/cg.$RANDOM" n="$cg_samples"
  case "$2" in
    dart-*) [ -n "$dart" ] || { echo "-"; return; }
            valgrind --tool=callgrind --toggle-collect='measured_*' --callgrind-out-file="$out" \
              "$dart" --samples "$n" --rounds 1 --scene "$1" --collision "${2#dart-}" >/dev/null 2>&1 \
              || { echo "-"; return; } ;;
    *) valgrind --tool=callgrind --toggle-collect='measured_*' --callgrind-out-file="$out" \
         "$bin" --root "$root" --samples "$n" --rounds 1 --only "$2" --scene "$1" >/dev/null 2>&1 \
         || { echo "-"; return; } ;;
  esac
  awk -v n="$n" '/^(summary|totals):/ { print int($2 / n); exit }' "$out"
}

# value of key=... in a RESULT line
field() { tr '\t' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
ratio() { [ "$1" != "-" ] && [ -n "$2" ] && [ "$2" != "-" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' || echo "-"; }

echo
echo "| scene | engine / model | nv | contacts | us/step (median) | instr/step | time / MuJoCo | instr / MuJoCo |"
echo "|---|---|---|---|---|---|---|---|"
for scene in "${scenes[@]}"; do
  ref="$(awk -F'\t' -v s="$scene" '$1=="RESULT" && $2==s && $3=="mujoco"' "$tmp/time.txt")"
  ref_us="$(field "$ref" median_us)"; ref_ir="-"
  [ "${NO_CALLGRIND:-0}" = 1 ] || ref_ir="$(instr "$scene" mujoco)"
  for engine in mujoco lcp cone ccp penalty dart-fcl dart-bullet; do
    line="$(awk -F'\t' -v s="$scene" -v e="$engine" '$1=="RESULT" && $2==s && $3==e' "$tmp/time.txt")"
    [ -n "$line" ] || continue
    us="$(field "$line" median_us)"; nv="$(field "$line" nv)"; ncon="$(field "$line" ncon)"
    ir="-"
    if [ "$engine" = mujoco ]; then ir="$ref_ir"
    elif [ "${NO_CALLGRIND:-0}" != 1 ] && [ "$us" != "-" ]; then ir="$(instr "$scene" "$engine")"; fi
    name="$engine"; case "$engine" in lcp|cone|ccp|penalty) name="physid $engine";; mujoco) name="MuJoCo 2.2.2";;
      dart-*) name="DART 6.12 (${engine#dart-})";; esac
    echo "| $scene | $name | $nv | $ncon | $us | $ir | $(ratio "$us" "$ref_us") | $(ratio "$ir" "$ref_ir") |"
  done
done
echo
echo "Ratios are to MuJoCo 2.2.2's mj_step on the same scene in the same run. Each engine settles its own copy"
echo "of the scene, so contact counts can differ (physid keeps URDF meshes and fixed links as they are)."
