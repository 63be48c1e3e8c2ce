#!/usr/bin/env bash
# bench_grad.sh - paper 001's Table II on this machine (bench/bench_table2.c): the step Jacobians A, B of
# Atlas on the ground, the half cheetah, the catapult and the jump-worm (lcp, in contact) analytically and by
# central differences of the same engine, the step and the one-step VJP for scale, and MuJoCo's humanoid in
# the air beside MuJoCo 2.2.2's mjd_transitionFD, and the lcp parameter Jacobian with size: parameters;
# microseconds (medians) and callgrind instructions per call.
# Writes the markdown table to bench/results/table2.md (and prints it). Timing is information only: nothing
# here passes or fails; the goals of issue 4 are reported as met or not.
#
# usage: scripts/bench_grad.sh
# env:   BUILD_DIR (default build-bench), SAMPLES (default 50), ROUNDS (default 3), CG_SAMPLES (callgrind
#        calls per task, default 3), NO_CALLGRIND=1 to skip instruction counts, OUT (default
#        bench/results/table2.md)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-bench}"
samples="${SAMPLES:-50}"
rounds="${ROUNDS:-3}"
cg_samples="${CG_SAMPLES:-3}"
out="${OUT:-$root/bench/results/table2.md}"

if [ -z "${NO_SETUP:-}" ]; then bash "$root/scripts/setup.sh"; fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target bench_table2 >/dev/null
bin="$build/bench_table2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# timings: every scene and task in one run
"$bin" --root "$root" --samples "$samples" --rounds "$rounds" | tee "$tmp/time.txt" >&2

# instructions per call: callgrind counts inside measured_* only, one scene and task per run
instr() {  # scene task -> instructions per call
  local cg="$tmp/cg.$RANDOM"
  if [ "${NO_CALLGRIND:-0}" = 1 ]; then echo "-"; return; fi
  valgrind --tool=callgrind --toggle-collect='measured_*' --callgrind-out-file="$cg" \
    "$bin" --root "$root" --samples "$cg_samples" --rounds 1 --scene "$1" --only "$2" >/dev/null 2>&1 || { echo "-"; return; }
  awk -v n="$cg_samples" '/^(summary|totals):/ { print int($2 / n); exit }' "$cg"
}

us() { awk -F'\t' -v s="$1" -v t="$2" '$1=="RESULT" && $2==s && $3==t { sub("median_us=", "", $4); print $4 }' "$tmp/time.txt"; }
info() { awk -F'\t' -v s="$1" -v k="$2" '$1=="INFO" && $2==s { for (i = 3; i <= NF; i++) { split($i, a, "="); if (a[1]==k) print a[2] } }' "$tmp/time.txt"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a == "" || b == "" || b == 0) print "-"; else printf "%.3g", a / b }'; }
fmt() { awk -v x="$1" 'BEGIN { if (x == "-" || x == "") print "-"; else if (x >= 1e6) printf "%.2fM", x / 1e6; else if (x >= 1e3) printf "%.1fk", x / 1e3; else printf "%d", x }'; }
ms() { awk -v x="$1" 'BEGIN { if (x == "") print "-"; else if (x >= 1000) printf "%.2f ms", x / 1000; else printf "%.1f us", x }'; }

declare -A nimble=([atlas]="16.1 ms / 737 ms" [half_cheetah]="0.870 ms / 7.52 ms" [jump_worm]="0.484 ms / 3.08 ms" [catapult]="0.576 ms / 3.69 ms")
{
  echo "# Paper 001's Table II on this machine"
  echo
  echo "\`bash scripts/bench_grad.sh\` ($(date -u +%Y-%m-%d), commit ${COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')}, $(nproc) cores shared; $(head -1 "$tmp/time.txt" | sed 's/^# //'))."
  echo "All step Jacobians: A = dx+/dx and B = dx+/du (Nimble's five: dq+/dq, dq+/dv, dv+/dq, dv+/dv, dv+/dtau),"
  echo "analytic (\`phys_step_jacobian\`) against central differences of the same engine (\`phys_step_jacobian_fd\`,"
  echo "2 (2nv + nu) steps), contact model lcp, at one state in contact per scene; step and one-step VJP"
  echo "(\`phys_step_vjp\`) for scale. Microseconds: medians of $rounds x $samples samples (wall time drifts up to"
  echo "2x on this shared machine); instructions: callgrind, $cg_samples calls. Nimble's figures (paper 001"
  echo "Table II, analytic / central differences, its machine) for reference. The difference from the central"
  echo "differences is taken over the input columns where the differences at eps and 2 eps agree to 1e-4; the"
  echo "others straddle a contact's mode switch (a foot corner lifting off on one side) and are only counted."
  echo
  echo "| scene | nv | nu | contacts | analytic A, B | central FD | speedup (time / instr) | step | VJP | VJP / step (instr) | max rel diff vs FD (input columns) | Nimble |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for s in atlas half_cheetah catapult jump_worm humanoid_air; do
    [ -n "$(info "$s" nv)" ] || continue
    j="$(us "$s" jacobian)"; f="$(us "$s" fd)"; st="$(us "$s" step)"; v="$(us "$s" vjp)"
    ij="$(instr "$s" jacobian)"; if_="$(instr "$s" fd)"; ist="$(instr "$s" step)"; iv="$(instr "$s" vjp)"
    status="$(info "$s" jacobian)"
    jcell="$(ms "$j") / $(fmt "$ij")"
    [ "$status" = ok ] || jcell="refused ($(ms "$j"))"
    echo "| $s | $(info "$s" nv) | $(info "$s" nu) | $(info "$s" ncon) | $jcell | $(ms "$f") / $(fmt "$if_") | $(ratio "$f" "$j")x / $(ratio "$if_" "$ij")x | $(ms "$st") / $(fmt "$ist") | $(ms "$v") / $(fmt "$iv") | $(ratio "$iv" "$ist") | $(info "$s" maxrel_vs_fd) ($(info "$s" switch_columns) at a switch) | ${nimble[$s]:--} |"
    echo "$s $j $f $ij $if_ $ist $iv" >> "$tmp/rows.txt"
  done
  echo
  mf="$(us humanoid_air mj_fd_forward)"; mc="$(us humanoid_air mj_fd_centered)"; ms_="$(us humanoid_air mj_step)"
  imf="$(instr humanoid_air mj_fd_forward)"; imc="$(instr humanoid_air mj_fd_centered)"; ims="$(instr humanoid_air mj_step)"
  read -r _ hj _ hij _ _ _ < <(grep '^humanoid_air ' "$tmp/rows.txt")
  echo "Humanoid in the air (contacts and limits off in both engines), same run:"
  echo
  echo "| engine | task | time | instructions | instr. / MuJoCo forward FD |"
  echo "|---|---|---|---|---|"
  echo "| physid | analytic A, B | $(ms "$hj") | $(fmt "$hij") | $(ratio "$hij" "$imf") |"
  echo "| MuJoCo 2.2.2 | mjd_transitionFD forward | $(ms "$mf") | $(fmt "$imf") | 1 |"
  echo "| MuJoCo 2.2.2 | mjd_transitionFD centered | $(ms "$mc") | $(fmt "$imc") | $(ratio "$imc" "$imf") |"
  echo "| MuJoCo 2.2.2 | mj_step | $(ms "$ms_") | $(fmt "$ims") | $(ratio "$ims" "$imf") |"
  echo
  echo "The lcp parameter Jacobian with size parameters (\`phys_step_param_jacobian\`, size:GEOM of every named geom"
  echo "other than a plane in the state's contacts), same run: P's size columns take 2nv reverse passes at the step"
  echo "record's one linearization, which also holds lcp's local structures (built once, read by every pass):"
  echo
  echo "| scene | nv | size geoms | parameters | P = dx+/dtheta | P / (A, B) (instr) |"
  echo "|---|---|---|---|---|---|"
  for s in atlas half_cheetah catapult jump_worm; do
    [ "$(info "$s" param_size)" = ok ] || continue
    p="$(us "$s" param_size)"; ip="$(instr "$s" param_size)"; ij="$(awk -v s="$s" '$1==s { print $4 }' "$tmp/rows.txt")"
    echo "| $s | $(info "$s" nv) | $(info "$s" size_geoms) | $(info "$s" size_theta) | $(ms "$p") / $(fmt "$ip") | $(ratio "$ip" "$ij") |"
  done
  echo
  read -r _ aj af aij aif ast aiv < <(grep '^atlas ' "$tmp/rows.txt" || echo "atlas - - - - - -")
  echo "Goals of issue 4 (reported, never asserted):"
  echo
  echo "- Atlas Jacobians <= 1 ms: $(ms "$aj") ($(awk -v x="$aj" 'BEGIN { print (x != "-" && x <= 1000) ? "met" : "not met" }')); >= 100x faster than central FD: $(ratio "$af" "$aj")x in time, $(ratio "$aif" "$aij")x in instructions ($(awk -v a="$aif" -v b="$aij" 'BEGIN { print (a != "-" && b != "-" && a / b >= 100) ? "met" : "not met" }'))"
  echo "- humanoid A, B <= 0.1x MuJoCo forward FD instructions: $(ratio "$hij" "$imf")x ($(awk -v a="$hij" -v b="$imf" 'BEGIN { print (a != "-" && b != "-" && a / b <= 0.1) ? "met" : "not met" }'))"
  echo -n "- one-step VJP <= 3x the step (instructions):"
  while read -r s _ _ _ _ ist iv; do echo -n " $s $(ratio "$iv" "$ist")x;"; done < "$tmp/rows.txt"
  echo
} > "$tmp/table.md"
mkdir -p "$(dirname "$out")"
cp "$tmp/table.md" "$out"
cat "$out"
