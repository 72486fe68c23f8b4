#!/usr/bin/env bash
# Installs what is missing, builds, checks the formatting, and runs the whole test suite with
# ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/check_format.sh
BUILD_DIR="${BUILD_DIR:-build}"
cd "$BUILD_DIR"
ctest --output-on-failure -j "${JOBS:-2}" --timeout 600 "$@"
