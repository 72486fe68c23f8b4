#!/usr/bin/env bash
# Checks the shipped systemd units with systemd-analyze verify, pointing ExecStart at the built
# binaries (the units name their installed paths, which do not exist on a build machine).
set -euo pipefail
src="$1" master_bin="$2" agent_bin="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
sed "s#/usr/bin/snn-master#$master_bin#" "$src/etc/systemd/snn-master.service" >"$tmp/snn-master.service"
sed "s#/usr/bin/snn-agent#$agent_bin#" "$src/etc/systemd/snn-agent.service" >"$tmp/snn-agent.service"
grep -q "ExecStart=$master_bin " "$tmp/snn-master.service"
grep -q "ExecStart=$agent_bin " "$tmp/snn-agent.service"
out="$(systemd-analyze verify "$tmp/snn-master.service" "$tmp/snn-agent.service" 2>&1)" || {
  echo "$out"; exit 1; }
if [ -n "$out" ]; then echo "systemd-analyze verify printed warnings:"; echo "$out"; exit 1; fi
echo "systemd units verified"
