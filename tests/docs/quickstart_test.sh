#!/usr/bin/env bash
# The guides' quick starts, run literally as a newcomer would: docs/operator-guide.md's as root on
# a host where the packages were just installed, then docs/user-guide.md's as an ordinary user.
# Everything runs in namespaces of its own (mount, network, PID): the system's directories are
# overlays whose changes stay in a temp dir, the network holds only a loopback of its own (so the
# shipped flag files' fixed ports are free), and every process ends with the namespace.
# usage: quickstart_test.sh BUILD_DIR SOURCE_DIR
# Exits 77 (ctest: skipped), saying why, where it cannot make the namespaces.
set -euo pipefail
BUILD="$(cd "$1" && pwd)"
SRC="$(cd "$2" && pwd)"
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the quick starts install packages and start services, which needs root"
  exit 77
fi
for tool in unshare mount ip python3 /usr/sbin/munged runuser useradd; do
  if ! command -v "$tool" >/dev/null; then echo "SKIP: $tool is not installed"; exit 77; fi
done
WORK="$(mktemp -d /tmp/snn-docs.XXXXXX)"
chmod 755 "$WORK"
status=0
# The agent's cgroups (v1 hierarchies) live on the host, outside the namespaces: it must remove
# them as it stops. Those there before are not ours.
agent_cgroups() { ls -d /sys/fs/cgroup/*/snn-"$(hostname)"-* 2>/dev/null | sort || true; }
cgroups_before="$(agent_cgroups)"
unshare --mount --net --pid --fork --mount-proc --propagation private \
  bash "$SRC/tests/docs/quickstart_inside.sh" "$BUILD" "$SRC" "$WORK" || status=$?
left="$(comm -13 <(echo "$cgroups_before") <(agent_cgroups))"
if [ -n "$left" ]; then
  echo "docs_quickstart: the agent left its cgroups on the host: $(echo $left)"
  [ "$status" -ne 0 ] || status=1
fi
if [ "$status" -eq 0 ]; then
  rm -rf "$WORK"
else
  echo "docs_quickstart: failed (exit $status); the daemons' logs and the scripts are in $WORK"
fi
exit "$status"
