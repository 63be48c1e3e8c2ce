#!/bin/sh
# examples/tensegrity/profile_contact.sh - why the SUPERball's rollouts under lcp, cone and ccp with condim 6 cost
# so much more than under penalty (issue 16; session 33).
# The ground truth's own model (models/superball.xml: condim 6, friction 1 1 1, filter actuators; physid's default
# contact model lcp, and the same file with <custom> physid:contact cone / ccp / penalty) is rolled out by
# superball_com (100 substeps of 1 ms per 10 Hz sample, Euler) from the recorded state of test trajectory 00 of
# the condim-6 data (gen_superball ... contact) with its recorded controls:
#   1. CPU seconds (user, /usr/bin/time) of the 1 s windows starting at 0, 1, 2, 3 and 4 s under each contact
#      model (WINDOWS, MODELS),
#   2. callgrind on the first 0.3 s of the window at 1 s under lcp (CG=0 skips it): the instructions per function
#      and the calls that count the work per step: frictionloss_solve (once per step with contacts),
#      phys_friction_block_solve (once per sweep of the friction block against the contact problem,
#      step.c's frictionloss_coupled) and phys_solve_lcp (the contact problem: once per step plus once per sweep),
#      and block_project (once per iteration of the friction block's FISTA, angular.c's block_fista, plus once
#      per call).
# Writes OUT (default examples/tensegrity/profile_contact.md); scratch in BUILD/tensegrity/prof.
#
#   sh examples/tensegrity/profile_contact.sh [BUILD]   (from the repository root; superball_com, gen_superball built)
# env: WINDOWS (default "0 1 2 3 4"), MODELS (default "penalty lcp cone ccp"), CG (default 1; 0: reuse the
# callgrind output of an earlier run), TIMES (default 1; 0: keep the timing table of an earlier run's OUT), OUT
set -u
B=${1:-build}
WINDOWS=${WINDOWS:-0 1 2 3 4}
MODELS=${MODELS:-penalty lcp cone ccp}
OUT=${OUT:-examples/tensegrity/profile_contact.md}
D=$B/tensegrity
P=$D/prof
mkdir -p "$P"
if [ ! -f "$D/contact/test/10hz/traj00.csv" ]; then
  "$B/gen_superball" models/superball.xml "$D/contact" contact || exit 1
fi
T=$D/contact/test/10hz/traj00.csv
for c in $MODELS; do   # the truth's model under contact model c (lcp: physid's default, the file as it is)
  if [ "$c" = lcp ]; then cp models/superball.xml "$P/superball_$c.xml"
  else sed "s|</mujoco>|  <custom>\n    <text name=\"physid:contact\" data=\"$c\"/>\n  </custom>\n</mujoco>|" \
    models/superball.xml > "$P/superball_$c.xml"; fi
done
for a in $WINDOWS; do
  awk -F, -v a="$a" 'NR == 1 || ($1 >= a - 1e-9 && $1 <= a + 1 + 1e-9)' "$T" > "$P/w$a.csv" || exit 1
done
if [ "${TIMES:-1}" = 0 ] && [ -f "$OUT" ]; then   # (TIMES=0: the timing table of an earlier run's OUT)
  sed '/^## callgrind/,$d' "$OUT" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' > "$OUT.tmp"
else { echo "# SUPERball: rollout cost by contact model, condim 6 (issue 16, session 33)"
  echo
  echo "\`sh examples/tensegrity/profile_contact.sh\` ($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'));"
  echo "models/superball.xml (condim 6) under each contact model, test trajectory 00 of the condim-6 data, 1 s"
  echo "windows (1,000 steps of 1 ms) from the recorded state with the recorded controls. CPU seconds (user) on a"
  echo "machine shared with other jobs (CPU time, not wall). See docs/tensegrity.md."
  echo
  printf '| contact model |'
  for a in $WINDOWS; do printf ' %s-%s s |' "$a" "$((a + 1))"; done
  echo ' total (s CPU) | per step (ms) |'
  printf '|---|'
  for a in $WINDOWS; do printf -- '---|'; done
  echo '---|---|'
  for c in $MODELS; do
    printf '| %s |' "$c"
    tot=0 n=0
    for a in $WINDOWS; do
      u=$( { /usr/bin/time -f "%U" "$B/superball_com" "$P/superball_$c.xml" 100 euler "$P/w$a.csv" > /dev/null; } 2>&1 | tail -1)
      printf ' %s |' "$u"
      tot=$(echo "$tot + $u" | bc -l) n=$((n + 1))
    done
    printf ' %.2f | %.3f |\n' "$tot" "$(echo "$tot / $n" | bc -l)"
  done; } > "$OUT.tmp" || exit 1
fi
if [ "${CG:-1}" = 1 ] || [ ! -s "$P/cg_lcp.out" ]; then   # (CG=0: the callgrind output of an earlier run)
  awk -F, 'NR == 1 || ($1 >= 1 - 1e-9 && $1 <= 1.3 + 1e-9)' "$T" > "$P/w1s.csv" || exit 1
  valgrind --tool=callgrind --callgrind-out-file="$P/cg_lcp.out" "$B/superball_com" "$P/superball_lcp.xml" 100 \
    euler "$P/w1s.csv" > /dev/null 2> "$P/cg.log" || exit 1
fi
if [ -s "$P/cg_lcp.out" ]; then
  callgrind_annotate --inclusive=yes "$P/cg_lcp.out" > "$P/cg_incl.txt" 2> /dev/null
  callgrind_annotate --inclusive=yes --tree=caller "$P/cg_lcp.out" > "$P/cg_tree.txt" 2> /dev/null
  calls() {   # the calls of function $1: the (Nx) counts of its callers' lines above its "*" line
    awk -v f="$1" '/^ *$/ { n = 0; next } /  < / { b[++n] = $0; next }
      /  \*  / && (index($0, ":" f " [") || $0 ~ (":" f "$")) { for (i = 1; i <= n; i++) if (match(b[i], /\([0-9,]+x\)/)) {
        c = substr(b[i], RSTART + 1, RLENGTH - 3); gsub(",", "", c); s += c } }
      END { print s + 0 }' "$P/cg_tree.txt"
  }
  { echo
    echo "## callgrind, lcp, the first 0.3 s of the window at 1 s (300 steps)"
    echo
    echo "| what | count | per step |"
    echo "|---|---|---|"
    for f in frictionloss_solve phys_friction_block_solve phys_solve_lcp block_project; do
      k=$(calls "$f")
      printf '| calls of %s | %s | %.1f |\n' "$f" "$k" "$(echo "$k / 300" | bc -l)"
    done
    echo
    echo "Instructions (inclusive) of the largest functions:"
    echo
    echo '```'
    grep -E "PROGRAM TOTALS|:(phys_step|frictionloss_solve|phys_friction_block_solve|block_project|phys_solve_lcp|impulse_energy|phys_friction_rows_assemble) " \
      "$P/cg_incl.txt" | grep -v "=>" | sed 's|/[^ ]*/src/|src/|; s| \[.*||' | head -20
    echo '```'; } >> "$OUT.tmp"
fi
mv "$OUT.tmp" "$OUT"
