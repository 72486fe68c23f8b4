#!/usr/bin/env bash
# Chaos run: keeps submitting jobs while killing agents and the master at random, then checks
# that nothing acknowledged was lost or duplicated, no core was held twice and no task ran
# twice. Usage: scripts/chaos.sh [SECONDS] [SEED]   (default 300 s). Last line: violations: N
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
exec "${BUILD_DIR:-build}/tests/chaos/snn-chaos" --seconds="${1:-300}" --seed="${2:-1}"
