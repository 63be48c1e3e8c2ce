#!/usr/bin/env bash
# Install, build and run the whole test suite: a release build, then an ASan+UBSan build of the tests, then the
# fuzz harnesses (tests/fuzz, clang-14 in build-fuzz/): each replays its regression corpus and fuzzes for 6 s.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPHYS_BENCH_DART=OFF >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPHYS_SANITIZE=ON -DPHYS_BENCH_DART=OFF -DCMAKE_C_FLAGS_DEBUG="-O1 -g" >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs")
FUZZ_JOBS=1 bash scripts/fuzz.sh "${FUZZ_SECONDS:-6}"   # 8 harnesses x 6 s = 48 s of fuzzing; fails on any crash
