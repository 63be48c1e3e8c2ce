#!/usr/bin/env bash
# bench_pbd.sh - the pbd integrator's agreement table (issue 17 item 3): its joint error against the Euler engine
# and MuJoCo 2.2.2 as the substeps grow, with the instructions per step (callgrind) of every row, written as
# markdown to bench/results/pbd_agreement.md (or OUT=FILE). Information only: nothing here passes or fails.
#
# MODE=grad (issue 17 item 6): the pbd step's derivatives against the Euler step's and MuJoCo's transitionFD
# instead: accuracy against the cost of a step, of its Jacobian (A, B) and of its reverse mode (one cotangent), all
# instruction counts (callgrind) of one run of this script, written to bench/results/pbd_grad.md.
#
# usage: scripts/bench_pbd.sh        env: BUILD_DIR (default build), CG_STEPS (callgrind steps, default 50; the
#                                         derivatives: CG_DERIV, default 2), MODE (agreement, default, or grad),
#                                         OUT (default bench/results/pbd_agreement.md, pbd_grad.md with MODE=grad),
#                                         BAXTER (the URDF; default ../shared/models/baxter/baxter.urdf)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath -m "${BUILD_DIR:-$root/build}")"
cg_steps="${CG_STEPS:-50}"
mode="${MODE:-agreement}"
cg_deriv="${CG_DERIV:-2}"
default_out="$root/bench/results/pbd_agreement.md"
[ "$mode" = grad ] && default_out="$root/bench/results/pbd_grad.md"
out="$(realpath -m "${OUT:-$default_out}")"
cmake --build "$build" -j2 --target bench_pbd >/dev/null
bin="$build/bench_pbd"
cd "$root"   # the models by paths relative to the repository (they appear in the table)
baxter="${BAXTER:-../shared/models/baxter/baxter.urdf}"   # the issue's ../shared beside the repository
[ -f "$baxter" ] || baxter=/work/shared/models/baxter/baxter.urdf
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# instructions per step (or per derivative: N=$cg_deriv of them) of ENGINE on the configuration's options and
# model: callgrind inside measured_*
instr() {  # engine options... model
  local engine=$1; shift
  local cg="$tmp/cg.$RANDOM" n="${N:-$cg_steps}"
  valgrind --tool=callgrind --toggle-collect='measured_*' --callgrind-out-file="$cg" \
    "$bin" --cost "$engine" "$@" "$n" >/dev/null 2>&1 || { echo "-"; return; }
  awk -v n="$n" '/^(summary|totals):/ { printf "%d", $2 / n; exit }' "$cg"
}

# value of key=... in a tab-separated line
field() { tr '\t' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# one run of bench_pbd on the options and model (its rows in $tmp/rows.txt, its REFERENCE line in ref), then the
# section's heading: the title and the run's line "`bench_pbd ARGS`: dt, T, nv; " ending in TAIL
ref=""
run_heading() {  # title tail options... model
  local title=$1 tail=$2; shift 2
  "$bin" "$@" >"$tmp/rows.txt" 2>"$tmp/err.txt" || true
  ref="$(grep '^REFERENCE' "$tmp/rows.txt")"
  echo
  echo "### $title"
  echo
  echo "\`bench_pbd $*\`: dt $(field "$ref" dt) s, T = $(field "$ref" T) s, nv $(field "$ref" nv); $tail"
}

# one configuration: a title, then bench_pbd's options and model
table() {
  local title=$1; shift
  run_heading "$title" "the Euler engine and MuJoCo" "$@"
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

# MODE=grad: one model's rows (the agreement run's errors; SUBSTEPS the pbd rows) with the step's, the Jacobian's
# and the reverse mode's instructions
grad_table() {
  local title=$1; shift
  run_heading "$title" "errors against the Euler" "$@"
  echo "engine at dt 1e-5 (as pbd_agreement.md)."
  echo
  echo "| engine | substeps | max joint error at T, rad | instructions / step | / Jacobian (A, B) | / reverse mode (one cotangent) | Jacobian / step |"
  echo "|---|---|---|---|---|---|---|"
  while IFS= read -r line; do
    local eng sub step jac vjp
    eng="$(field "$line" engine)"; sub="$(field "$line" substeps)"
    case " ${SUBSTEPS:-1 4 16 64} " in *" $sub "*) ;; *) [ "$eng" = pbd ] && continue ;; esac
    if [ "$eng" = pbd ]; then
      step="$(instr "pbd:$sub" "$@")"; jac="$(N=$cg_deriv instr "pbdjac:$sub" "$@")"; vjp="$(N=$cg_deriv instr "pbdvjp:$sub" "$@")"
    elif [ "$eng" = euler ]; then
      step="$(instr euler "$@")"; jac="$(N=$cg_deriv instr eulerjac "$@")"; vjp="$(N=$cg_deriv instr eulervjp "$@")"
    else
      step="$(instr mujoco "$@")"; jac="$(N=$cg_deriv instr mujocofd "$@")"; vjp="-"
    fi
    local ratio="-"
    [[ "$step" =~ ^[0-9]+$ && "$jac" =~ ^[0-9]+$ ]] && ratio="$(awk -v a="$jac" -v b="$step" 'BEGIN { printf "%.1f", a / b }')"
    echo "| $eng | $sub | $(field "$line" err_euler) | $step | $jac | $vjp | $ratio |"
  done < <(grep '^RESULT' "$tmp/rows.txt")
}

if [ "$mode" = grad ]; then
  {
    echo "# The pbd step's derivatives against the Euler step's (issue 17 item 6)"
    echo
    echo "Written by scripts/bench_pbd.sh (MODE=grad, bench/bench_pbd.c) at commit $(git -C "$root" rev-parse --short HEAD)."
    echo "Accuracy against cost: each row's largest joint error at T against the Euler engine at dt 1e-5 (the"
    echo "agreement run of pbd_agreement.md, contacts off), and instructions (callgrind, one run of this script) of"
    echo "a step (mean of $cg_steps), of its Jacobian A, B (\`phys_step_jacobian\`; MuJoCo: \`mjd_transitionFD\`,"
    echo "centred differences) and of its reverse mode (\`phys_step_vjp\` of one cotangent), means of $cg_deriv"
    echo "derivatives along the rollout. The pbd derivatives are one complex step per input column (docs/derivatives.md):"
    echo "about 4 to 5 (2nv + nu) steps' work for the Jacobian and for the reverse mode alike."
    SUBSTEPS="1 4 16 64" grad_table "Double pendulum (tests/data/double_pendulum.xml) at the paper's dt 0.01" --dt 0.01 tests/data/double_pendulum.xml
    SUBSTEPS="1 4 16" grad_table "Baxter without joint limits (../shared/models/baxter: both arms and the head, nv 15, no actuators)" --no-limit "$baxter"
    echo
    echo "Baxter: the whole URDF (physid does not load one arm of it alone; the left arm is 7 of its 15 dofs), no"
    echo "actuators (nu 0: B is empty), MuJoCo 2.2.2 cannot load it (DAE meshes)."
  } >"$tmp/table.md"
  mv "$tmp/table.md" "$out"
  echo "wrote $out" >&2
  exit 0
fi

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
