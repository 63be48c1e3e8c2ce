#!/usr/bin/env bash
# bench_solvers.sh - the contact solvers on settled piles (issue 19 item 3; bench/bench_solvers.c): instructions
# per step (callgrind), mean solver iterations and warnings, consecutive steps of the settled scene (warm) and
# steps without a warm start (cold), per contact model. Prints a markdown table. Information only.
#
# usage: scripts/bench_solvers.sh [SCENE ...]   (pile_sph10 pile_box8 pile_sph50 pile_box27: ../shared/peers/models)
# env:   BUILD_DIR (default build), BIN (the bench binary; default $BUILD_DIR/bench_solvers, e.g. an older build
#        to compare), MODELS (default /work/shared/peers/models), STATES (settled states, default /tmp/bench_solvers),
#        CONTACTS (default "lcp cone ccp"), MODES (default "warm cold"), STEPS (warm steps, default 10),
#        COLD_STEPS (default 2), WARMUP (default 20), SETTLE (lcp steps to settle, default 1500)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
models="${MODELS:-/work/shared/peers/models}"
states="${STATES:-/tmp/bench_solvers}"
scenes=("$@")
[ ${#scenes[@]} -gt 0 ] || scenes=(pile_sph10 pile_box8 pile_sph50 pile_box27)
if [ -z "${BIN:-}" ]; then
  cmake --build "$build" -j2 --target bench_solvers >/dev/null
  BIN="$build/bench_solvers"
fi
mkdir -p "$states"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
field() { tr '\t' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

echo "| scene | contact | mode | contacts | instr/step | iterations (mean / max) | warnings |"
echo "|---|---|---|---|---|---|---|"
for s in "${scenes[@]}"; do
  st="$states/$s.state"   # settled once with lcp (the state file is this build's binary layout)
  [ -f "$st" ] || "$BIN" "$models/$s.xml" --settle "${SETTLE:-1500}" --save "$st" --steps 0 >/dev/null
  for c in ${CONTACTS:-lcp cone ccp}; do
    for mode in ${MODES:-warm cold}; do
      n=${STEPS:-10}; cold=0
      [ "$mode" = warm ] || { n=${COLD_STEPS:-2}; cold=1; }
      out="$tmp/cg.$s.$c.$mode"
      res=$(valgrind --tool=callgrind --toggle-collect=measured_step --callgrind-out-file="$out" "$BIN" \
              "$models/$s.xml" --load "$st" --contact "$c" --warmup "${WARMUP:-20}" --steps "$n" --cold "$cold" \
              2>/dev/null | grep '^RESULT')
      instr=$(awk -v n="$n" '/^(summary|totals):/ { printf "%d", $2 / n; exit }' "$out")
      echo "| $s | $c | $mode | $(field "$res" ncon) | $instr | $(field "$res" iter_mean) / $(field "$res" iter_max) |" \
           "$(field "$res" warnings) |"
    done
  done
done
