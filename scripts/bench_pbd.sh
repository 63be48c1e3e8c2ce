#!/usr/bin/env bash
# bench_pbd.sh - the pbd integrator's agreement table (issue 17 item 3): its joint error against the Euler engine
# and MuJoCo 2.2.2 as the substeps grow, with the instructions per step (callgrind) of every row, written as
# markdown to bench/results/pbd_agreement.md (or OUT=FILE). Information only: nothing here passes or fails.
#
# usage: scripts/bench_pbd.sh        env: BUILD_DIR (default build), CG_STEPS (callgrind steps, default 50),
#                                         OUT (default bench/results/pbd_agreement.md), BAXTER (the URDF;
#                                         default ../shared/models/baxter/baxter.urdf)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath -m "${BUILD_DIR:-$root/build}")"
cg_steps="${CG_STEPS:-50}"
out="$(realpath -m "${OUT:-$root/bench/results/pbd_agreement.md}")"
cmake --build "$build" -j2 --target bench_pbd >/dev/null
bin="$build/bench_pbd"
cd "$root"   # the models by paths relative to the repository (they appear in the table)
baxter="${BAXTER:-../shared/models/baxter/baxter.urdf}"   # the issue's ../shared beside the repository
[ -f "$baxter" ] || baxter=/work/shared/models/baxter/baxter.urdf
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# instructions per step of ENGINE on the configuration's options and model: callgrind inside measured_*
instr() {  # engine options... model
  local engine=$1; shift
  local cg="$tmp/cg.$RANDOM"
  valgrind --tool=callgrind --toggle-collect='measured_*' --callgrind-out-file="$cg" \
    "$bin" --cost "$engine" "$@" "$cg_steps" >/dev/null 2>&1 || { echo "-"; return; }
  awk -v n="$cg_steps" '/^(summary|totals):/ { printf "%d", $2 / n; exit }' "$cg"
}

# value of key=... in a tab-separated line
field() { tr '\t' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# one configuration: a title, then bench_pbd's options and model
table() {
  local title=$1; shift
  "$bin" "$@" >"$tmp/rows.txt" 2>"$tmp/err.txt" || true
  local ref; ref="$(grep '^REFERENCE' "$tmp/rows.txt")"
  echo
  echo "### $title"
  echo
  echo "\`bench_pbd $*\`: dt $(field "$ref" dt) s, T = $(field "$ref" T) s, nv $(field "$ref" nv); the Euler engine and MuJoCo"
  local gap; gap="$(field "$ref" ref_gap)"
  if [ "$gap" = nan ]; then
    echo "at dt 1e-5: MuJoCo not run ($(sed -n 's/^bench_pbd: //p' "$tmp/err.txt" | head -1))."
  else
    echo "at dt 1e-5 differ by $gap rad at T."
  fi
  echo
  echo "| engine | substeps | max joint error vs Euler (dt 1e-5), rad | vs MuJoCo 2.2.2 (dt 1e-5), rad | instructions / step |"
  echo "|---|---|---|---|---|"
  while IFS= read -r line; do
    local eng sub ir cost_eng
    eng="$(field "$line" engine)"; sub="$(field "$line" substeps)"
    cost_eng="$eng"; [ "$eng" = pbd ] && cost_eng="pbd:$sub"
    ir="$(instr "$cost_eng" "$@")"
    echo "| $eng | $sub | $(field "$line" err_euler) | $(field "$line" err_mujoco) | $ir |"
  done < <(grep '^RESULT' "$tmp/rows.txt")
}

{
  echo "# The pbd integrator against the Euler engine and MuJoCo 2.2.2 (issue 17 item 3)"
  echo
  echo "Written by scripts/bench_pbd.sh (bench/bench_pbd.c) at commit $(git -C "$root" rev-parse --short HEAD)."
  echo "Each row rolls the model out from its start state (keyframe 0, else qpos0 + 0.3 rad on every joint, at rest),"
  echo "contacts off, and gives the largest joint error at T against the Euler engine and against MuJoCo 2.2.2, both"
  echo "at dt 1e-5 (first order: their own error there is about 1e-5/dt of the Euler rows'). \`pbd\` rows: the pbd"
  echo "step at the row's substeps (Gauss-Seidel, one sweep); \`euler\`, \`mujoco\`: those engines at the row's dt."
  echo "Instructions per step: callgrind inside the step over $cg_steps steps (one engine per run)."
  table "Double pendulum (tests/data/double_pendulum.xml) at the paper's dt 0.01" --dt 0.01 tests/data/double_pendulum.xml
  table "arm7 (models/arm7.xml, armature 0.01)" models/arm7.xml
  table "arm7 without armature" --no-armature models/arm7.xml
  table "Baxter (../shared/models/baxter, both arms and the head, no contacts)" "$baxter"
  table "Baxter without joint limits" --no-limit "$baxter"
  echo
  echo "Reading: the pbd step is semi-implicit Euler on its substeps, so where the models agree its error halves"
  echo "per doubling of the substeps (double pendulum, arm7 without armature, Baxter without limits). It stops at"
  echo "the model difference where there is one: arm7's armature (pbd: the child's inertia about the axis, exact"
  echo "only on the world; MuJoCo couples the child's and the parent's rotation), and Baxter's joint limits (pbd:"
  echo "inelastic positional limits inside the substeps; the Euler engine: velocity-level limit rows with"
  echo "Baumgarte correction once per step), where the limit impacts differ. MuJoCo 2.2.2 cannot load the Baxter"
  echo "URDF (its collision meshes are DAE files)."
} >"$tmp/table.md"
mv "$tmp/table.md" "$out"   # (out was made absolute before the cd)
echo "wrote $out" >&2
