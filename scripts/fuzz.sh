#!/usr/bin/env bash
# scripts/fuzz.sh SECONDS [HARNESS...] - build the libFuzzer harnesses of tests/fuzz with clang-14 in build-fuzz/
# (-DPHYS_FUZZ=ON: libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer) and, for each harness (default: all),
# replay its regression corpus tests/fuzz/regress/HARNESS/ (every input that ever crashed; must pass), then fuzz it
# for SECONDS. Prints executions, coverage and crashes per harness; crashing inputs are kept in
# build-fuzz/crashes/HARNESS/. The working corpus is build-fuzz/corpus/HARNESS/ (kept between runs), started from
# tests/fuzz/seeds/HARNESS/, the seeds this script lists from the source tree, and the regression inputs; nothing
# is written into the source tree. After a crash the harness is restarted until its SECONDS are used.
# Exit status: 0 if no replay failed and no harness crashed, 1 otherwise, 2 for a bad command line.
#
# Environment: FUZZ_JOBS=N harnesses at a time (default 1); FUZZ_NICE=N niceness (default 19);
# FUZZ_RESULTS=FILE also writes the table as markdown to FILE; FUZZ_BUILD=0 skips the build.
set -uo pipefail
cd "$(dirname "$0")/.."
all=(mjcf urdf stl obj traj data_csv data_npy job)
usage() { echo "usage: scripts/fuzz.sh SECONDS [HARNESS...]   (harnesses: ${all[*]})" >&2; exit 2; }
[ $# -ge 1 ] && [[ "$1" =~ ^[0-9]+$ ]] || usage
secs=$1; shift
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all[@]}")
for h in "${harnesses[@]}"; do [[ " ${all[*]} " == *" $h "* ]] || usage; done
B=build-fuzz
jobs=${FUZZ_JOBS:-1}
nice=${FUZZ_NICE:-19}

if [ "${FUZZ_BUILD:-1}" != 0 ]; then
  cmake -S . -B $B -DPHYS_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
        -DCMAKE_BUILD_TYPE=Release -DPHYS_ORACLE=OFF >/dev/null || exit 1
  cmake --build $B -j"$(nproc 2>/dev/null || echo 2)" --target fuzz_all >/dev/null || exit 1
fi

# seeds of harness $1 listed from the source tree (into $B/seeds/$1, rewritten every run)
list_seeds() {
  local d=$B/seeds/$1
  rm -rf "$d" && mkdir -p "$d"
  case $1 in
    mjcf)   # named after their folders: models/ and tests/data/ both have a double_pendulum.xml
      for f in tests/data/*.xml tests/data/contact/*.xml models/*.xml; do cp "$f" "$d/$(echo "$f" | tr / _)"; done ;;
    urdf) cp tests/data/elbow/elbow.urdf tests/data/baxter/baxter.urdf "$d"/ ;;
    data_csv)   # the first rows of a real cube toss and of an elbow toss
      head -n 6 data/cube_toss/toss_000.csv > "$d"/cube_toss_000_head.csv
      head -n 6 tests/data/elbow/toss_000.csv > "$d"/elbow_toss_000_head.csv ;;
  esac
}

# a libFuzzer dictionary for harness $1 ($B/dict/$1.dict), made from the string literals of the reader it
# fuzzes (element, attribute, key and column names), so it follows the sources; none for the binary formats
make_dict() {
  local src
  case $1 in
    mjcf) src=(src/model/mjcf*.c) ;;
    urdf) src=(src/model/urdf.c) ;;
    data_csv) src=(src/sysid/dataset.c) ;;
    job) src=(tools/cmd_identify.c) ;;
    *) return 1 ;;
  esac
  mkdir -p $B/dict
  { grep -ho '"[A-Za-z_:]\{1,32\}"' "${src[@]}" | sort -u
    case $1 in
      mjcf|urdf) printf '"%s"\n' '<' '</' '/>' '=\"' '<?xml version=\"1.0\"?>' '<!--' '-->' ;;
      job) printf '"%s"\n' '{' '}' '[' ']' ':' ',' 'true' 'false' 'null' ;;
    esac
  } > $B/dict/$1.dict
}

# replay the regression corpus of harness $1, then fuzz it for $secs; summary line in $B/logs/$1.summary:
# "harness seconds execs coverage corpus crashes replay"
run_harness() {
  local h=$1 bin=$B/tests/fuzz/fuzz_$1 log=$B/logs/$1.log
  local corpus=$B/corpus/$h crashes=$B/crashes/$h tmp=$B/tmp/$h
  mkdir -p "$corpus" "$crashes" "$tmp"
  list_seeds "$h"
  : > "$log"
  local replay=ok dirs=("$corpus" "$B/seeds/$h")
  [ -d tests/fuzz/seeds/$h ] && dirs+=(tests/fuzz/seeds/$h)
  if [ -d tests/fuzz/regress/$h ] && [ -n "$(ls -A tests/fuzz/regress/$h)" ]; then
    dirs+=(tests/fuzz/regress/$h)
    TMPDIR=$tmp "$bin" tests/fuzz/regress/$h/* >>"$log" 2>&1 || replay=FAILED
  fi
  local dict=()
  make_dict "$h" && dict=(-dict="$B/dict/$h.dict")
  local before after execs=0 cov=0 start=$SECONDS left
  before=$(ls "$crashes" | wc -l)
  while left=$((secs - (SECONDS - start))); [ "$left" -gt 0 ]; do
    TMPDIR=$tmp nice -n "$nice" "$bin" -max_total_time="$left" -timeout=20 -close_fd_mask=2 -print_final_stats=1 \
      -artifact_prefix="$crashes/" "${dict[@]}" "${dirs[@]}" > "$log.run" 2>&1
    local rc=$?
    cat "$log.run" >> "$log"
    local n
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log.run" | tail -1)
    execs=$((execs + ${n:-0}))
    n=$(grep -o 'cov: [0-9]*' "$log.run" | tail -1 | cut -d' ' -f2)
    [ -n "$n" ] && [ "$n" -gt "$cov" ] && cov=$n
    [ $rc -eq 0 ] && break
  done
  rm -rf "$tmp"
  after=$(ls "$crashes" | wc -l)
  echo "$h $secs $execs $cov $(ls "$corpus" | wc -l) $((after - before)) $replay" > "$B/logs/$h.summary"
}

mkdir -p $B/logs
for h in "${harnesses[@]}"; do
  rm -f "$B/logs/$h.summary"
  run_harness "$h" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
done
wait

status=0
table="| harness | seconds | executions | exec/s | coverage (edges) | corpus | new crashes | regression replay |
|---|---|---|---|---|---|---|---|"
for h in "${harnesses[@]}"; do
  read -r name s execs cov corpus crashes replay < "$B/logs/$h.summary" || { echo "$h: no summary" >&2; status=1; continue; }
  table+=$'\n'"| $name | $s | $execs | $((execs / (s > 0 ? s : 1))) | $cov | $corpus | $crashes | $replay |"
  if [ "$crashes" -gt 0 ] || [ "$replay" != ok ]; then status=1; fi
done
echo "$table"
[ $status -eq 0 ] || echo "fuzz: crashing inputs in $B/crashes/, logs in $B/logs/" >&2
if [ -n "${FUZZ_RESULTS:-}" ]; then
  {
    echo "# Fuzzing results"
    echo
    echo "\`FUZZ_JOBS=$jobs scripts/fuzz.sh $secs ${harnesses[*]}\`, $(date -u '+%Y-%m-%d %H:%M UTC'), $(clang-14 --version | head -1),"
    echo "$(nproc) cores shared with other work, harnesses under \`nice -n $nice\`; each harness ran $secs s"
    echo "(executions summed over restarts after a crash; coverage: libFuzzer's edge count)."
    echo
    echo "$table"
  } > "$FUZZ_RESULTS"
fi
exit $status
