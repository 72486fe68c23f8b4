#!/usr/bin/env bash
# Installs what is missing, builds, checks the formatting, runs the whole test suite with ctest,
# then each fuzz harness for a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/check_format.sh
BUILD_DIR="${BUILD_DIR:-build}"
(cd "$BUILD_DIR" && ctest --output-on-failure -j "${JOBS:-2}" --timeout 600 "$@")
# A short libFuzzer run of every harness (a clang build of its own); longer runs: see docs/development.md.
bash scripts/fuzz.sh
