#!/usr/bin/env bash
# Chaos run: keeps submitting jobs while killing agents and the master at random, then checks
# that nothing acknowledged was lost or duplicated, no core was held twice and no task ran
# twice. Usage: scripts/chaos.sh [SECONDS] [SEED] [STRESS]   (default 300 s, seed 1, no
# stress). STRESS busy processes burn CPU beside the run, so the daemons run slow (a machine
# under load). Last line: violations: N
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
exec "${BUILD_DIR:-build}/tests/chaos/snn-chaos" --seconds="${1:-300}" --seed="${2:-1}" \
  --stress="${3:-0}"
