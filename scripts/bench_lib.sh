# bench_lib.sh - shell functions shared by the benchmark scripts that compare one or two physid binaries
# (scripts/bench_sampling.sh, scripts/bench_shooting.sh). Source it: . "$(dirname "$0")/bench_lib.sh"

# require_binaries SCRIPT BIN...: exit 2 with a message naming SCRIPT unless every BIN is an executable file
require_binaries() {
  script=$1
  shift
  for b in "$@"; do
    if [ ! -x "$b" ]; then
      echo "$script: $b not found or not executable: build first (cmake --build build)" >&2
      exit 2
    fi
  done
}
