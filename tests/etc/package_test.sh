#!/usr/bin/env bash
# Builds the Debian packages with cpack and checks them: four packages (the Python client's too), dependencies computed
# from the linked libraries, /etc/snn files as conffiles. As root, installs them, checks the
# installed units with systemd-analyze verify, runs the installed master as its system user,
# and purges them, leaving nothing behind. Exit 77 (skipped) when not root.
set -euo pipefail
build="$1"
tmp="$(mktemp -d)" && chmod 755 "$tmp"
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then dpkg --purge snn-master snn-agent snnctl python3-snn >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log"; fail "cpack failed"; }
master_deb=$(ls "$tmp"/out/snn-master_*.deb) || fail "no snn-master package"
agent_deb=$(ls "$tmp"/out/snn-agent_*.deb) || fail "no snn-agent package"
cli_deb=$(ls "$tmp"/out/snnctl_*.deb) || fail "no snnctl package"
python_deb=$(ls "$tmp"/out/python3-snn_*_all.deb) || fail "no python3-snn package"
echo "built: $(cd "$tmp/out" && ls *.deb | tr '\n' ' ')"

depends=$(dpkg-deb -f "$master_deb" Depends)
for lib in libprotobuf libssl3 libmunge libsystemd0 libprometheus-cpp-pull libgoogle-glog adduser; do
  [[ "$depends" == *"$lib"* ]] || fail "snn-master does not depend on $lib: $depends"
done
[[ "$(dpkg-deb -f "$agent_deb" Depends)" == *libc6* ]] || fail "snn-agent has no computed Depends"
dpkg-deb -I "$master_deb" conffiles | grep -qx /etc/snn/snn-master.flags || fail "master conffiles"
dpkg-deb -I "$master_deb" conffiles | grep -qx /etc/snn/policy.yaml || fail "master conffiles"
dpkg-deb -I "$agent_deb" conffiles | grep -qx /etc/snn/snn-agent.flags || fail "agent conffiles"
dpkg-deb -c "$cli_deb" >"$tmp/cli.contents"
grep -q "usr/share/bash-completion/completions/snnctl" "$tmp/cli.contents" ||
  fail "snnctl has no bash completion"
grep -q "usr/share/man/man1/snnctl-submit.1" "$tmp/cli.contents" || fail "snnctl has no man pages"
# Listed to a file first: with pipefail, grep -q leaving early kills dpkg-deb with SIGPIPE and
# the check fails although the file is there (red once beside two busy loops).
dpkg-deb -c "$python_deb" >"$tmp/python.contents"
grep -q "usr/lib/python3/dist-packages/snn/client.py" "$tmp/python.contents" ||
  fail "python3-snn has no snn/client.py"
echo "dependencies and conffiles: ok"

if [ "$(id -u)" != 0 ]; then echo "not root: install not tested"; exit 77; fi
if dpkg-query -W snn-master >/dev/null 2>&1; then fail "snn-master is already installed here"; fi

installed=1
dpkg -i "$cli_deb" "$master_deb" "$agent_deb" "$python_deb" >"$tmp/dpkg.log" 2>&1 ||
  { cat "$tmp/dpkg.log"; fail "dpkg -i"; }
# The client imports from the installed package alone (-I: no source tree, no user site).
(cd / && /usr/bin/python3 -I -c "import snn; assert snn.Client and snn.Executor") ||
  fail "the installed python3-snn does not import"
for f in /usr/bin/snn-master /usr/bin/snn-agent /usr/bin/snn-shepherd /usr/bin/snnctl \
         /usr/bin/snn-nir-import \
         /usr/bin/snn-ca /lib/systemd/system/snn-master.service \
         /lib/systemd/system/snn-agent.service /etc/snn/snn-master.flags /etc/snn/policy.yaml \
         /etc/snn/snn-agent.flags /etc/snn/boards.yaml; do
  [ -e "$f" ] || fail "$f not installed"
done
getent passwd snn >/dev/null || fail "no system user snn"
# Each command's man page, made from the command table: only its own options.
man -P cat snnctl-submit >"$tmp/man.txt" 2>&1 || { cat "$tmp/man.txt"; fail "man snnctl-submit"; }
grep -q -- "--reset" "$tmp/man.txt" || fail "man snnctl-submit does not show submit's --reset"
! grep -q -- "--pools" "$tmp/man.txt" || fail "man snnctl-submit shows another command's option"
/usr/bin/snnctl --version | grep -Eq '^snnctl [0-9.]+ \(commit ' || fail "snnctl --version"
# Every packaged example job can run as shipped: its model files and its command are installed.
for job in /usr/share/doc/snnctl/examples/*.yaml; do
  for m in $(sed -n 's/^ *model: *\([^ #]*\).*/\1/p' "$job"); do
    [ -e "$(dirname "$job")/$m" ] || fail "$job names model $m, which is not packaged"
  done
  for c in $(sed -n 's/^ *command: *\([^ #]*\).*/\1/p' "$job"); do
    PATH=/usr/local/bin:/usr/bin:/bin command -v "$c" >/dev/null ||
      fail "$job runs $c, which is not packaged"
  done
done
out="$(systemd-analyze verify /lib/systemd/system/snn-master.service \
       /lib/systemd/system/snn-agent.service 2>&1)" || { echo "$out"; fail "systemd-analyze verify"; }
[ -z "$out" ] || { echo "$out"; fail "systemd-analyze verify warned"; }
echo "installed; units verified"

# The installed master runs as its user with the installed libraries, and stops on SIGTERM.
state="$tmp/state" && mkdir -p "$state" && chown snn "$state"
setpriv --reuid=snn --regid=snn --init-groups /usr/bin/snn-master --auth=none --listen=127.0.0.1:0 --metrics_listen= --http_listen= \
  --data_dir="$state/master" --port_file="$state/port" >"$tmp/master.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$state/port" ] && break; sleep 0.1; done
[ -s "$state/port" ] || { cat "$tmp/master.log"; fail "the installed master did not start"; }
SNN_AUTH=none /usr/bin/snnctl --master "127.0.0.1:$(cat "$state/port")" pool status >/dev/null ||
  fail "snnctl cannot reach the installed master"
kill -TERM "$pid" && wait "$pid" || fail "the installed master did not stop cleanly"
echo "the installed master ran as snn"

dpkg --purge snnctl snn-agent snn-master python3-snn >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "purge"; }
installed=0
for f in /usr/bin/snn-master /usr/bin/snn-agent /usr/bin/snnctl /etc/snn/snn-master.flags \
         /etc/snn/policy.yaml /lib/systemd/system/snn-master.service \
         /usr/share/bash-completion/completions/snnctl /usr/lib/python3/dist-packages/snn; do
  [ ! -e "$f" ] || fail "$f left after purge"
done
! getent passwd snn >/dev/null || fail "user snn left after purge"
echo "purged: nothing left"
