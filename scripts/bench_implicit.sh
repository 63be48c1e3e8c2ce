#!/usr/bin/env bash
# bench_implicit.sh - the implicit integrator (issue 16 item 4) against semi-implicit Euler and MuJoCo 2.2.2 in
# one run: instructions per step (callgrind, the same step repeated from one state) and the largest stable
# timestep on a one-dof spring of mass 2 kg for stiffnesses 1e3..1e6 N/m (damping 1 N s/m). Prints markdown
# tables (docs/performance.md quotes them). Information only: nothing here passes or fails.
#
# usage: scripts/bench_implicit.sh [MODEL.xml ...]   (default: tests/data/cables.xml, tests/data/mixed.xml)
# env:   BUILD_DIR (default build), STEPS (callgrind steps, default 200)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
steps="${STEPS:-200}"
models=("$@")
if [ ${#models[@]} -eq 0 ]; then models=("$root/tests/data/cables.xml" "$root/tests/data/mixed.xml"); fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target bench_implicit >/dev/null
bin="$build/bench_implicit"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

instr() {  # engine model -> instructions per step
  local out="$tmp/cg.$RANDOM"
  valgrind --tool=callgrind --toggle-collect='measured_*' --callgrind-out-file="$out" \
    "$bin" steps "$1" "$2" "$steps" >/dev/null 2>&1 || { echo "-"; return; }
  awk -v n="$steps" '/^(summary|totals):/ { print int($2 / n); exit }' "$out"
}

echo "| model | physid euler | physid implicit | MuJoCo euler | MuJoCo implicit (velocity only) |"
echo "|---|---|---|---|---|"
for m in "${models[@]}"; do
  echo "| $(basename "$m") | $(instr physid-euler "$m") | $(instr physid-implicit "$m") | $(instr mujoco-euler "$m") | $(instr mujoco-implicit "$m") |"
done
echo
echo "| k (N/m), m = 2 kg | physid euler | physid implicit | MuJoCo euler | MuJoCo implicit |"
echo "|---|---|---|---|---|"
for k in 1e3 1e4 1e5 1e6; do
  sed "s/stiffness=\"50\" damping=\"3\"/stiffness=\"$k\" damping=\"1\"/" "$root/tests/data/springmass.xml" > "$tmp/k.xml"
  "$bin" stable "$tmp/k.xml" | awk -v k="$k" '{ sub(/^[^:]*: /, ""); sub(/largest stable dt /, ""); sub(/stable up to dt = 1 \(the range.s end\)/, ">= 1 s"); v[++n] = $0 }
    END { printf "| %s | %s | %s | %s | %s |\n", k, v[1], v[2], v[3], v[4] }'
done
