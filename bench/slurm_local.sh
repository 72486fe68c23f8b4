#!/usr/bin/env bash
# Runs a command beside a throwaway one-node Slurm (slurmctld, slurmd and a munged of its own, all
# in a temp dir, on free loopback ports), with SLURM_CONF pointing at it, then stops it all:
#   bench/slurm_local.sh build/bench/submit_per_process
# so that `sbatch` is measured on the same host as snnctl. Needs Debian's slurm-wlm (and munge)
# installed and root (slurmd runs jobs as their users). Nothing outside the temp dir is changed.
set -euo pipefail

if [[ $# -eq 0 || $1 == --help ]]; then
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
for tool in slurmctld slurmd munged sbatch; do
  command -v "$tool" >/dev/null || {
    echo "slurm_local.sh: $tool not found; install Debian's slurm-wlm" >&2
    exit 1
  }
done
[[ $(id -u) -eq 0 ]] || {
  echo "slurm_local.sh: run as root (slurmd starts jobs as their users)" >&2
  exit 1
}

dir=$(mktemp -d /tmp/slurm-local.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
mkdir -p "$dir"/{state,spool,munge}
chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=128 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --foreground --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/socket" \
  --pid-file="$dir/munge/pid" --seed-file="$dir/munge/seed" --log-file="$dir/munge/log" \
  >"$dir/munged.out" 2>&1 &
pids+=($!)

cat >"$dir/slurm.conf" <<EOF
ClusterName=local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MaxJobCount=1000000
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$dir/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
pids+=($!)

# Until the node is up (a condition, not a delay: give up after a minute).
for _ in $(seq 600); do
  if sinfo -h -o %T 2>/dev/null | grep -qx idle; then break; fi
  sleep 0.1
done
sinfo -h -o %T 2>/dev/null | grep -qx idle || {
  echo "slurm_local.sh: the local Slurm did not come up; logs in $dir:" >&2
  tail -5 "$dir"/*.log >&2
  exit 1
}
"$@"
