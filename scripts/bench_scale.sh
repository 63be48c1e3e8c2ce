#!/usr/bin/env bash
# bench_scale.sh - issue 19's scaling benchmark (bench/bench_scale.c): physid (lcp, cone, ccp, penalty) beside
# MuJoCo 2.2.2 on 10 and 50 spheres on a plane, an 8-box and a 27-box pile, 22_humanoids.xml and humanoid100.xml,
# all in MuJoCo's settled pose; instructions per step by callgrind (one engine, one scene, one task per run,
# instrumentation on only around the samples), their ratio to MuJoCo's, and physid's one-step VJP against its
# step. Prints markdown tables (OUT: also written there). Timing is information only: nothing here passes or fails.
#
# usage: scripts/bench_scale.sh [SCENE ...]   (spheres10 spheres50 boxes8 boxes27 humanoids22 humanoid100)
# env:   BUILD_DIR (default build), BIN (a bench_scale binary to run instead of building one: e.g. one built at
#        an earlier commit, for a before/after comparison), CG_SAMPLES (samples per callgrind run, default 1: every sample is the same
#        step from the same restored state), SAMPLES (wall-clock samples, default 1), MODELS (default
#        "lcp cone ccp penalty"), NO_VJP=1 to skip the VJP, OUT (a file for the tables), CG_MAX_US (default
#        1500000: a call whose wall-clock median exceeds it is not run under callgrind, which would take ~50x
#        as long; the table then gives its wall time, marked "wall")
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
cg_samples="${CG_SAMPLES:-1}"
samples="${SAMPLES:-1}"
models=(${MODELS:-lcp cone ccp penalty})
scenes=("$@")
[ ${#scenes[@]} -gt 0 ] || scenes=(spheres10 spheres50 boxes8 boxes27 humanoids22 humanoid100)

if [ -n "${BIN:-}" ]; then
  bin="$BIN"   # a bench_scale built elsewhere (another commit: before/after in one session), not rebuilt
else
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target bench_scale >/dev/null
  bin="$build/bench_scale"
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
sargs=(); for s in "${scenes[@]}"; do sargs+=(--scene "$s"); done
"$bin" --root "$root" --prepare "$tmp" "${sargs[@]}"

# wall clock (information) and the RESULT lines (contacts, iterations, warnings, status)
"$bin" --root "$root" --states "$tmp" --samples "$samples" "${sargs[@]}" | tee "$tmp/time.txt" >&2
[ -n "${NO_VJP:-}" ] || "$bin" --root "$root" --states "$tmp" --samples "$samples" --task vjp "${sargs[@]}" \
  | tee -a "$tmp/time.txt" >&2

field() { awk -F'\t' -v s="$1" -v e="$2" -v t="$3" -v k="$4" \
  '$1=="RESULT" && $2==s && $3==e && $4==t { for (i = 5; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }' \
  "$tmp/time.txt"; }
cg_max="${CG_MAX_US:-1500000}"
instr() {  # scene engine task -> instructions per call
  local out="$tmp/cg.$1.$2.$3" us
  us="$(field "$1" "$2" "$3" median_us)"
  if [ "$2" != mujoco ] && awk -v u="${us:-0}" -v c="$cg_max" 'BEGIN { exit !(u + 0 > c + 0) }'; then
    awk -v u="$us" 'BEGIN { printf "wall %.1f s", u / 1e6 }'; return
  fi
  valgrind --tool=callgrind --instr-atstart=no --toggle-collect='measured_*' --callgrind-out-file="$out" \
    "$bin" --root "$root" --states "$tmp" --samples "$cg_samples" --only "$2" --task "$3" --scene "$1" \
    >/dev/null 2>&1 || { echo "-"; return; }
  awk -v n="$cg_samples" '/^(summary|totals):/ { if ($2 > v) v = $2 } END { print int(v / n) }' "$out"   # summary is 0 with --instr-atstart=no
}
ratio() { [[ "$1" =~ ^[0-9]+$ && "$2" =~ ^[0-9]+$ && "$2" != 0 ]] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' || echo "-"; }

{
  head="| scene | nv | contacts MuJoCo / physid | MuJoCo instr/step |"; rule="|---|---|---|---|"
  for m in "${models[@]}"; do head+=" $m instr/step (x MuJoCo) |"; rule+="---|"; done
  vhead="| scene |"; vrule="|---|"
  for m in "${models[@]}"; do vhead+=" $m VJP instr (x its step) |"; vrule+="---|"; done
  rows=(); vrows=()
  for s in "${scenes[@]}"; do
    ref="$(instr "$s" mujoco step)"
    cons="$(field "$s" mujoco step ncon) /"
    row="| $s | $(field "$s" mujoco step nv) |"; vrow="| $s |"; cells=""
    for m in "${models[@]}"; do
      ir="$(instr "$s" "$m" step)"
      w="$(field "$s" "$m" step warnings)"; note=""; [ "${w:-0}" = 0 ] || note=", $w warn."
      cells+=" $ir ($(ratio "$ir" "$ref")$note) |"; cons+=" $(field "$s" "$m" step ncon)"
      if [ -z "${NO_VJP:-}" ]; then
        st="$(field "$s" "$m" vjp status)"
        if [ "$st" = ok ]; then vi="$(instr "$s" "$m" vjp)"; vrow+=" $vi ($(ratio "$vi" "$ir")) |"
        else vrow+=" refused: $st |"; fi
      fi
    done
    rows+=("$row $cons | $ref |$cells"); vrows+=("$vrow")
  done
  echo "$head"; echo "$rule"; printf '%s\n' "${rows[@]}"
  if [ -z "${NO_VJP:-}" ]; then echo; echo "$vhead"; echo "$vrule"; printf '%s\n' "${vrows[@]}"; fi
  echo
  echo "Instructions per call by callgrind ($cg_samples sample(s) of the same step from the same restored state,"
  echo "MuJoCo's settled pose; physid's contacts: lcp cone ccp penalty in order). x MuJoCo: ratio to MuJoCo 2.2.2's"
  echo "mj_step in the same run; warn.: warnings physid counted over its 2 steps from MuJoCo's state and the"
  echo "samples. VJP: phys_step_vjp at the same state, ratio to the same model's step. wall: not counted (its"
  echo "wall-clock median above CG_MAX_US on this machine), its wall time instead."
} | tee "${OUT:-/dev/null}"
