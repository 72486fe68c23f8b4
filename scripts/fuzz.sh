#!/usr/bin/env bash
# Builds the fuzz harnesses (fuzz/) with clang-14 as libFuzzer targets, with ASan and UBSan, into
# build-fuzz/ (or $FUZZ_BUILD_DIR), and runs each for FUZZ_SECONDS (default 5) from its seed
# corpus. Crashes are kept in FUZZ_BUILD_DIR/crashes/NAME/; add each to fuzz/regressions/NAME/
# once fixed, so that every build replays it.
#   scripts/fuzz.sh                     every harness, 5 s each (what CI runs)
#   FUZZ_SECONDS=600 scripts/fuzz.sh model frame    named harnesses, 10 minutes each
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
DIR="${FUZZ_BUILD_DIR:-build-fuzz}"
SECONDS_EACH="${FUZZ_SECONDS:-5}"
source scripts/ccache_env.sh
# -O1 and line tables only: what libFuzzer and the sanitizers' reports need, and faster to compile
# than -O2 -g (this second build of the tree is most of what the test command costs).
# Compiled in batches as the main tree is (cmake/unity.cmake; FUZZ_UNITY=OFF: file by file).
CC=clang-14 CXX=clang++-14 cmake -S . -B "$DIR" -DSNN_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSNN_UNITY="${FUZZ_UNITY:-ON}" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" >/dev/null
cmake --build "$DIR" -j "${JOBS:-$(($(nproc) + 2))}" --target fuzzers  # as build.sh
NAMES=("$@")
if [ ${#NAMES[@]} -eq 0 ]; then NAMES=(frame master_request job_file model boards policy_file swf); fi
failed=0
for name in "${NAMES[@]}"; do
  work="$DIR/corpus/$name" crashes="$DIR/crashes/$name"
  mkdir -p "$work" "$crashes"
  log="$DIR/$name.log"
  # The seeds and every regression first; new inputs go to the scratch corpus, not the source.
  if ASAN_OPTIONS=detect_leaks=0 "$DIR/fuzz/${name}_fuzz" -max_total_time="$SECONDS_EACH" \
       -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$crashes/" \
       "$work" "fuzz/corpus/$name" "fuzz/regressions/$name" >"$log" 2>&1; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    echo "fuzz $name: ${SECONDS_EACH} s, $execs runs, no crash"
  else
    echo "fuzz $name: CRASH (see $log and $crashes)"
    tail -30 "$log"
    failed=1
  fi
done
exit $failed
