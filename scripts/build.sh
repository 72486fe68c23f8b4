#!/usr/bin/env bash
# Installs what is missing, then configures and builds everything into build/ (or $BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
source scripts/ccache_env.sh
BUILD_DIR="${BUILD_DIR:-build}"
# Two compiles more than cores: a build shares the host fairly with other work (a compile
# waiting on its disk, or beside other processes, leaves a core to the next one).
JOBS="${JOBS:-$(($(nproc) + 2))}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"
