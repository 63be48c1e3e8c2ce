#!/usr/bin/env bash
# bench_superball.sh - issue 16 item 7: the SUPERball tensegrity's step and step gradient in physid against
# MuJoCo 2.2.2's mj_step on the same model and state (bench/bench_superball.c): callgrind instructions per call,
# every task in one run of this script. Writes bench/results/superball.md (and prints it).
#
# usage: scripts/bench_superball.sh
# env:   BUILD_DIR (default build), CG_SAMPLES (callgrind calls per task, default 5), OUT (default
#        bench/results/superball.md)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
cg_samples="${CG_SAMPLES:-5}"
out="${OUT:-$root/bench/results/superball.md}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target bench_superball >/dev/null
bin="$build/bench_superball"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$bin" --root "$root" --samples 1 > "$tmp/time.txt"   # the scenes' sizes and contact counts

instr() {  # task -> instructions per call (callgrind counts inside measured_* only)
  local cg="$tmp/cg.$1"
  valgrind --tool=callgrind --toggle-collect='measured_*' --callgrind-out-file="$cg" \
    "$bin" --root "$root" --samples "$cg_samples" --only "$1" >/dev/null 2>&1 || { echo "-"; return; }
  awk -v n="$cg_samples" '/^(summary|totals):/ { print int($2 / n); exit }' "$cg"
}
fmt() { awk -v x="$1" 'BEGIN { if (x == "-" || x == "") print "-"; else if (x >= 1e6) printf "%.2fM", x / 1e6; else if (x >= 1e3) printf "%.1fk", x / 1e3; else printf "%d", x }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

declare -A n
tasks="air_mj_step air_phys_step air_phys_jacobian air_phys_vjp floor_mj_step floor_phys_step_lcp floor_phys_step_penalty floor_phys_jacobian_lcp floor_phys_jacobian_penalty floor_phys_vjp_penalty"
for t in $tasks; do n[$t]="$(instr "$t")"; done
declare -A what=(
  [air_mj_step]="MuJoCo 2.2.2 \`mj_step\` (Euler, filter actuators)"
  [air_phys_step]="physid \`phys_step\` (filter actuators)"
  [air_phys_jacobian]="physid \`phys_step_jacobian\`: A (72x72), B (72x24), actuators without dynamics"
  [air_phys_vjp]="physid \`phys_step_vjp\` (one reverse step), actuators without dynamics"
  [floor_mj_step]="MuJoCo 2.2.2 \`mj_step\` (condim 6: sliding, torsional, rolling friction; soft constraints, PGS)"
  [floor_phys_step_lcp]="physid \`phys_step\`, contact lcp (sliding friction, 4-sided pyramid)"
  [floor_phys_step_penalty]="physid \`phys_step\`, contact penalty (the paper's kind of contact model)"
  [floor_phys_jacobian_lcp]="physid \`phys_step_jacobian\`, lcp, actuators without dynamics"
  [floor_phys_jacobian_penalty]="physid \`phys_step_jacobian\`, penalty, actuators without dynamics"
  [floor_phys_vjp_penalty]="physid \`phys_step_vjp\`, penalty, actuators without dynamics")
{
  echo "# The SUPERball's step and step gradient (issue 16 item 7)"
  echo
  echo "\`bash scripts/bench_superball.sh\` ($(date -u +%Y-%m-%d), commit ${COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')}, $(nproc) cores shared)."
  echo "$(head -1 "$tmp/time.txt" | sed 's/^# //')."
  echo "Scenes (bench/bench_superball.c): *air* is models/superball_fixed.xml (rod r0 welded, no floor) at the state"
  echo "MuJoCo reaches after 1 s at constant controls 0.3; *floor* is models/superball.xml lying on one cable triangle"
  echo "after 1 s from rest. Both engines start from the same state. Instructions: callgrind inside the measured"
  echo "call only, mean of $cg_samples calls. The physid Jacobians and VJPs run the same models with actuators without dynamics"
  echo "(examples/tensegrity/superball*_nodyn.xml): physid's step derivatives refuse activations (act) until the"
  echo "act Jacobians land."
  echo
  echo "| scene | task | instructions | x MuJoCo's step |"
  echo "|---|---|---|---|"
  for t in $tasks; do
    scene="${t%%_*}"
    echo "| $scene | ${what[$t]} | $(fmt "${n[$t]}") | $(ratio "${n[$t]}" "${n[${scene}_mj_step]}") |"
  done
} > "$out"
cat "$out"
