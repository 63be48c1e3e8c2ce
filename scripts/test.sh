#!/usr/bin/env bash
# Install, build and run the whole test suite: a release build, then an ASan+UBSan build of the tests, then the
# fuzz harnesses (tests/fuzz, clang-14 in build-fuzz/): each replays its regression corpus and fuzzes for 6 s.
# At the end (or at the first failing part) it prints each part's wall and CPU seconds (user + system of the
# part's processes, from bash's `times`: on a shared machine the CPU seconds are the figure to compare).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
tfile=$(mktemp)
trap 'rm -f "$tfile"' EXIT
table="part                      wall s    CPU s"
cpu_total=0
start_all=$(date +%s.%N)

# CPU seconds (user + system) of the waited-for children, from `times > "$tfile"` run just before in this shell
# (not in a subshell: a forked shell's children times start at 0)
children_cpu() {
  awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] }
                 printf "%.1f", s }' "$tfile"
}

# the table so far with the total (also after a failed part)
report() {
  local wall
  wall=$(awk -v a="$start_all" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
  echo "$table"
  printf '%-24s %7s %8.0f\n' "total" "$wall" "$cpu_total"
}

# part NAME COMMAND...: run it, add its wall and CPU seconds to the table; on failure print the table and stop
part() {
  local name=$1 w0 c0 c1 rc=0
  shift
  w0=$(date +%s.%N)
  times > "$tfile"
  c0=$(children_cpu)
  "$@" || rc=$?
  times > "$tfile"
  c1=$(children_cpu)
  local line
  line=$(awk -v n="$name" -v w0="$w0" -v w1="$(date +%s.%N)" -v c0="$c0" -v c1="$c1" \
           'BEGIN { printf "%-24s %7.0f %8.0f", n, w1 - w0, c1 - c0 }')
  table+=$'\n'"$line"
  cpu_total=$(awk -v a="$cpu_total" -v b="$c1" -v c="$c0" 'BEGIN { printf "%.1f", a + b - c }')
  if [ $rc -ne 0 ]; then
    echo "test.sh: part '$name' failed (exit $rc)" >&2
    report
    exit $rc
  fi
}

# (the parts chain their commands with &&: set -e does not act inside a function called as `f || rc=$?`)
release_build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPHYS_BENCH_DART=OFF >/dev/null && cmake --build build -j"$jobs"
}
release_tests() { (cd build && ctest --output-on-failure -j"$jobs"); }
# the sanitizer build at -O2: its tests take 24-25 % less CPU than at -O1 (test_oracle_fit 140 -> 105 s,
# test_violation 179 -> 136 s, session 32), for a somewhat longer build; ASan and UBSan instrument the same code
asan_build() {
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPHYS_SANITIZE=ON -DPHYS_BENCH_DART=OFF \
        -DCMAKE_C_FLAGS_DEBUG="-O2 -g" >/dev/null && cmake --build build-asan -j"$jobs"
}
asan_tests() {
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs")
}

part setup bash scripts/setup.sh
part "release build" release_build
part "release tests" release_tests
part "sanitizer build" asan_build
part "sanitizer tests" asan_tests
# 8 harnesses x 6 s of fuzzing, one harness per core; fails on any crash
part "fuzz (build + run)" env FUZZ_JOBS="$jobs" bash scripts/fuzz.sh "${FUZZ_SECONDS:-6}"
report
