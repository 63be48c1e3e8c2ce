#!/usr/bin/env bash
# bench_torch.sh - issue 18 item 5: the cube with penalty contact and MuJoCo's humanoid (in the air) stepped forward
# plus backward in plain PyTorch with autograd (bench/torch_models.py) against physid through its Python binding
# (physid.torch.Step) and through the C API (bench/bench_torch.c), with the check that the torch models compute
# physid's physics (bench/bench_torch.py). Writes bench/results/torch.md (and prints it). Timing is information
# only: nothing here passes or fails; the goal (physid >= 100x faster) is reported as met or not.
#
# usage: scripts/bench_torch.sh
# env:   BUILD_DIR (default build), REPEATS (default 200), STEPS (agreement check, default 100), ROLLOUT_STEPS
#        (the horizons of the cube's rollout timing, default 20,100,500; 0: none), OUT (default
#        bench/results/torch.md), PYTHON (default /usr/bin/python3, Debian's, which has python3-torch), NO_BUILD=1
#        to use the build as it is, BEFORE (another checkout's python/ folder, e.g. a `git worktree add` of an older
#        commit: its binding timed against this one call by call, a before/after line under the table)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
out="${OUT:-$root/bench/results/torch.md}"
py="${PYTHON:-/usr/bin/python3}"

load0="$(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "${NO_BUILD:-}" ]; then cmake --build "$build" -j2 --target physid_shared physid_cli bench_torch >/dev/null; fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
PHYSID_LIBRARY="$build/libphysid.so" PYTHONPATH="$root/python" OMP_NUM_THREADS=1 \
  "$py" "$root/bench/bench_torch.py" --repeats "${REPEATS:-200}" --steps "${STEPS:-100}" \
  --bench "$build/bench_torch" --rollout-steps "${ROLLOUT_STEPS:-20,100,500}" ${BEFORE:+--before "$BEFORE"} | tee "$tmp/out.txt" >&2

r() { awk -F'\t' -v s="$1" -v t="$2" '$1=="RESULT" && $2==s && $3==t { print $4 }' "$tmp/out.txt"; }
c() { awk -F'\t' -v s="$1" -v k="$2" '$1=="CHECK" && $2==s { for (i = 3; i <= NF; i++) { split($i, a, "="); if (a[1]==k) print a[2] } }' "$tmp/out.txt"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3g", a / b }'; }
us() { awk -v x="$1" 'BEGIN { if (x >= 1000) printf "%.2f ms", x / 1000; else printf "%.1f us", x }'; }
{
  echo "# PyTorch autograd against physid: one step forward plus backward"
  echo
  echo "\`bash scripts/bench_torch.sh\` ($(date -u +%Y-%m-%d), commit ${COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')}, $(nproc) cores shared"
  echo "by several sessions; load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end). torch $("$py" -c 'import torch; print(torch.__version__)'), float64, CPU, torch.set_num_threads(1)"
  echo "for every route. Times are the process's **CPU time** (not wall time: waiting for a core on the shared machine"
  echo "is not counted; with wall time the torch step's 5-6 ms of work read as 12-23 ms under load, which inflated"
  echo "earlier ratios). One step forward plus the backward pass of loss = next state . a fixed random vector to the"
  echo "state, the controls and one physical parameter; the leaves made once, their gradients cleared before every"
  echo "call. torch / binding is measured side by side in one process: ${REPEATS:-200} repetitions, each one torch call"
  echo "and 20 (humanoid: 200) binding calls back to back, the order alternating; the table gives the median time and"
  echo "the median, quartiles and extremes of the per-repetition ratios. C API: medians of 1000 (bench/bench_torch.c):"
  echo
  echo "- **torch**: the step written directly in PyTorch (bench/torch_models.py), backward by autograd through"
  echo "  every operation (the route of papers 000 and 003);"
  echo "- **binding**: physid.torch.Step (one phys_step_batch, backward one phys_step_vjp_batch_qpos, through ctypes);"
  echo "  **floor**: the same loss and backward around a trivial step (q * theta, v): torch's own cost per call, which"
  echo "  no binding avoids (the leaves' gradients, the loss's nodes, the autograd engine);"
  echo "- **C API**: phys_step, then phys_step_vjp and phys_step_param_vjp at the same state (bench/bench_torch.c);"
  echo "  **C batch calls**: the binding's two calls, phys_step_batch and phys_step_vjp_batch, from C (one row)."
  echo
  echo "Scenes: **cube** = models/cube.xml under penalty contact (as \`--contact penalty\`: spring-damper normal"
  echo "force with restitution damping, regularized Coulomb friction, linearly implicit step with re-solves), tossed"
  echo "5 mm into the table, sliding and spinning; parameter friction:cube, no controls. **humanoid** = MuJoCo's"
  echo "humanoid (27 dofs, 21 motors) in the air, contacts and limits disabled (as bench/bench_grad.c), random joint"
  echo "angles, velocities and controls; parameter damping:right_hip_y; the torch model is RNEA + mass matrix from"
  echo "the dofs' spatial vectors with implicit joint damping, joint springs, armature and motors."
  echo
  echo "Same physics, checked first: ${STEPS:-100} steps of each from the same start, largest difference of qpos /"
  echo "qvel; and the largest difference of the gradients (state, controls, parameter) of the two routes at the start:"
  echo
  echo "| scene | max qpos diff | max qvel diff | max gradient diff |"
  echo "|---|---|---|---|"
  for s in cube humanoid; do echo "| $s | $(c $s max_dq) | $(c $s max_dv) | $(c $s grad_max_diff) |"; done
  echo
  echo "| scene | torch forward | torch forward + backward | binding forward + backward | floor | C API step | C API forward + backward | C batch calls | torch / binding (q25-q75, min-max) | torch / C API |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for s in cube humanoid; do
    tf="$(r $s torch_fwd)"; t="$(r $s torch_fwd_bwd)"; b="$(r $s binding_fwd_bwd)"; cs="$(r $s c_step)"; cf="$(r $s c_fwd_bwd)"
    cb="$(r $s c_batch_fwd_bwd)"; fl="$(r $s floor_fwd_bwd)"
    q() { awk -F'\t' -v s="$1" -v k="$2" -v tag="$3" '$1==tag && $2==s { for (i = 3; i <= NF; i++) { split($i, a, "="); if (a[1]==k) print a[2] } }' "$tmp/out.txt"; }
    echo "| $s | $(us "$tf") | $(us "$t") | $(us "$b") | $(us "$fl") | $(us "$cs") | $(us "$cf") | $(us "$cb") | **$(q $s median RATIO)x** ($(q $s q25 RATIO)-$(q $s q75 RATIO), $(q $s min RATIO)-$(q $s max RATIO)) | $(ratio "$t" "$cf")x |"
    echo "$s $(q $s median RATIO) $t $cf" >> "$tmp/rows.txt"
  done
  echo
  if grep -q '^BEFORE' "$tmp/out.txt"; then
    b() { awk -F'\t' -v s="$1" -v k="$2" '$1=="BEFORE" && $2==s { for (i = 3; i <= NF; i++) { split($i, a, "="); if (a[1]==k) print a[2] } }' "$tmp/out.txt"; }
    echo "Before / after (\`BEFORE=$BEFORE\`): the other checkout's binding and this one, the same forward + backward,"
    echo "$((20 * ${REPEATS:-200})) calls each, alternating call by call (no torch call between: warm caches):"
    echo
    for s in cube humanoid; do
      echo "- $s: before $(us "$(b $s before_us)"), now $(us "$(b $s now_us)"), before / now **$(b $s ratio)** (q25-q75 $(b $s q25)-$(b $s q75))"
    done
    echo
  fi
  horizons="$(awk -F'\t' '$1=="RRATIO" && $2=="cube" { split($3, a, "="); printf "%s ", a[2] }' "$tmp/out.txt")"
  if [ -n "$horizons" ]; then
    rq() { awk -F'\t' -v n="$1" -v k="$2" '$1=="RRATIO" && $2=="cube" && $3=="steps="n { for (i = 4; i <= NF; i++) { split($i, a, "="); if (a[1]==k) print a[2] } }' "$tmp/out.txt"; }
    echo "A rollout as one autograd node (physid.torch.Step.rollout_fn: forward one phys_rollout_batch, backward one"
    echo "phys_rollout_states_vjp) against the same number of torch steps chained by autograd, the cube from the same"
    echo "start, loss = the states . fixed random vectors, backward to the start and friction; $((${REPEATS:-200} / 10 > 5 ? ${REPEATS:-200} / 10 : 5)) repetitions per horizon, each one"
    echo "torch rollout and 2 binding rollouts, interleaved; times per step:"
    echo
    echo "| horizon (steps) | torch per step | binding per step | torch / binding (q25-q75) | gradient max diff |"
    echo "|---|---|---|---|---|"
    for n in $horizons; do
      echo "| $n | $(us "$(r cube rollout${n}_torch_per_step)") | $(us "$(r cube rollout${n}_binding_per_step)") | **$(rq "$n" median)x** ($(rq "$n" q25)-$(rq "$n" q75)) | $(c cube rollout${n}_grad_max_diff) |"
      echo "$n $(rq "$n" median)" >> "$tmp/rollrows.txt"
    done
    echo
  fi
  echo "Goal of issue 18 item 5, physid >= 100x faster than PyTorch autograd (reported, never asserted):"
  echo
  while read -r s rb t cf; do
    echo "- $s: C API $(ratio "$t" "$cf")x ($(awk -v a="$t" -v b="$cf" 'BEGIN { print (a / b >= 100) ? "met" : "not met" }')), binding ${rb}x ($(awk -v a="$rb" 'BEGIN { print (a >= 100) ? "met" : "not met" }'))"
  done < "$tmp/rows.txt"
  if [ -f "$tmp/rollrows.txt" ]; then
    while read -r h rr; do
      echo "- cube, a rollout of $h steps as one autograd node, per step: binding ${rr}x ($(awk -v a="$rr" 'BEGIN { print (a >= 100) ? "met" : "not met" }'))"
    done < "$tmp/rollrows.txt"
  fi
} > "$tmp/table.md"
mkdir -p "$(dirname "$out")"
cp "$tmp/table.md" "$out"
cat "$out"
