#!/usr/bin/env bash
# Runs the system on this machine: installs what is missing, builds, sets up the cluster's
# secrets in a temp dir (a MUNGE key and its own munged, a CA and the master's certificate),
# starts a master and two agents on 127.0.0.1 (boards from etc/boards/) that enrol with one-time
# join tokens and a third whose (emulated) Ethernet board a driver runs pass-through, submits the
# jobs in etc/examples/ and a pass-through job, shows the pool while they run and the job list
# once they are done, shows what a user without rights is refused and what the HTTP API and the
# web page answer, then stops every process it started. With --keep it leaves the cluster running
# (the web page open to a browser) until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
KEEP=0
case "${1:-}" in
  --keep) KEEP=1 ;;
  "") ;;
  *) echo "usage: scripts/demo.sh [--keep]  (--keep: leave the cluster running until Ctrl-C)" >&2
     exit 2 ;;
esac
bash scripts/build.sh
BIN="${BUILD_DIR:-build}"
WORK="$(mktemp -d /tmp/snn-demo.XXXXXX)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  echo "demo: stopped every process it started; logs and task output are in $WORK"
}
trap cleanup EXIT
chmod 755 "$WORK"

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what="$2"; shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then echo "demo: timed out waiting for $what" >&2; exit 1; fi
    sleep 0.2
  done
}

echo "== the cluster's secrets: a MUNGE key with its own munged, a CA and the master's certificate"
# An operator does this once per cluster: the munge package's key in /etc/munge on every host,
# and snn-ca's files in /etc/snn/tls (docs/operator-guide.md, Security).
mkdir -p "$WORK/munge" && chmod 755 "$WORK/munge"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$WORK/munge/munge.key"
/usr/sbin/munged --foreground --force --socket="$WORK/munge/socket" \
  --key-file="$WORK/munge/munge.key" --pid-file="$WORK/munge/munged.pid" \
  --seed-file="$WORK/munge/munged.seed" --log-file="$WORK/munge/munged.log" &
PIDS+=($!)
export SNN_MUNGE_SOCKET="$WORK/munge/socket" SNN_CA_FILE="$WORK/tls/ca.crt"
wait_for 20 "munged" sh -c "munge --socket='$SNN_MUNGE_SOCKET' --no-input >/dev/null"
"$BIN/cli/snn-ca" init "$WORK/tls"
"$BIN/cli/snn-ca" master "$WORK/tls" --host 127.0.0.1

echo "== starting snn-master (state in $WORK/master)"
"$BIN/master/snn-master" --listen=127.0.0.1:0 --port_file="$WORK/master.port" \
  --policy_file=etc/policy.yaml --tls_dir="$WORK/tls" --munge_socket="$SNN_MUNGE_SOCKET" \
  --data_dir="$WORK/master" --metrics_listen=127.0.0.1:0 --metrics_port_file="$WORK/master.metrics_port" \
  --http_listen=127.0.0.1:0 --http_port_file="$WORK/master.http_port" \
  >"$WORK/master.log" 2>&1 &
PIDS+=($!)
wait_for 20 "the master's port" test -s "$WORK/master.port"
export SNN_MASTER="127.0.0.1:$(cat "$WORK/master.port")"
echo "   master at $SNN_MASTER"
wait_for 20 "the HTTP API's port" test -s "$WORK/master.http_port"
API="https://127.0.0.1:$(cat "$WORK/master.http_port")"
echo "   HTTP API at $API/v1/ (its OpenAPI document: $API/v1/openapi.json)"

# Tasks find the example programs (snn-example-relay, snn-example-nir) on the PATH the agents
# give them (--task_path): tasks never inherit the agent's own environment.
SNNCTL="$BIN/cli/snnctl"
for node in node1 node2; do
  echo "== snnctl node token $node (the admin), then snn-agent $node enrols with it"
  mkdir -p "$WORK/$node.tls" && cp "$WORK/tls/ca.crt" "$WORK/$node.tls/"
  # The token approves what the node may declare: its boards file, as an operator would give it.
  "$SNNCTL" node token "$node" --ttl 10m --parsable --boards "etc/boards/$node.yaml" \
    >"$WORK/$node.token"
  # The demo's jobs may be root's: these agents run root's tasks (production agents do not).
  "$BIN/nodeagent/snn-agent" --master="$SNN_MASTER" --node_name="$node" \
    --boards_file="etc/boards/$node.yaml" --data_dir="$WORK/$node" --kill_grace_ms=1000 --stop_tasks_on_exit=true \
    --task_path="$PWD/$BIN/examples:/usr/local/bin:/usr/bin:/bin" \
    --tls_dir="$WORK/$node.tls" --join_token_file="$WORK/$node.token" \
    --allow_root_tasks --metrics_listen=127.0.0.1:0 \
    >"$WORK/$node.log" 2>&1 &
  PIDS+=($!)
done
wait_for 20 "both agents to register" sh -c "'$SNNCTL' pool status | grep -c ' UP ' | grep -qx 3"

echo "== node3: an Ethernet board (snn-board-emu on 127.0.0.2) run by snn-driver-ether, pass-through"
# The emulated board answers on two UDP ports of 127.0.0.2; the driver's boards file names them.
"$BIN/drivers/snn-board-emu" --address=127.0.0.2 --port_file="$WORK/eth0.ports" --serial=demo-0 \
  >"$WORK/eth0.log" 2>&1 &
PIDS+=($!)
wait_for 20 "the emulated board" test -s "$WORK/eth0.ports"
read -r ETH_MGMT ETH_DATA <"$WORK/eth0.ports"
printf 'boards:\n  - {id: eth0, management: "127.0.0.2:%s", data: "127.0.0.2:%s", firmware: fw-2.4}\n' \
  "$ETH_MGMT" "$ETH_DATA" >"$WORK/ether-boards.yaml"
cat >"$WORK/node3.yaml" <<BOARDS
boards:
  - {type: ether-v1, mesh: 1x1, ksps: 1000, streams: 1, driver: ether, board: eth0}
drivers:
  ether:
    command: ["$PWD/$BIN/drivers/snn-driver-ether", "--boards=$WORK/ether-boards.yaml"]
    aliases: {SLURM_FPGA_IPS: hosts}
BOARDS
mkdir -p "$WORK/node3.tls" && cp "$WORK/tls/ca.crt" "$WORK/node3.tls/"
"$SNNCTL" node token node3 --ttl 10m --parsable --boards "$WORK/node3.yaml" >"$WORK/node3.token"
"$BIN/nodeagent/snn-agent" --master="$SNN_MASTER" --node_name=node3 \
  --boards_file="$WORK/node3.yaml" --data_dir="$WORK/node3" --kill_grace_ms=1000 --stop_tasks_on_exit=true \
  --tls_dir="$WORK/node3.tls" --join_token_file="$WORK/node3.token" \
  --allow_root_tasks >"$WORK/node3.log" 2>&1 &
PIDS+=($!)
wait_for 20 "node3 to register" sh -c "'$SNNCTL' pool status | grep -c ' UP ' | grep -qx 4"

echo "== snnctl estimate etc/models/chain.json --board-type sim-v1"
"$SNNCTL" estimate etc/models/chain.json --board-type sim-v1

echo "== NIR models exported by Rockpool, Sinabs and a Braille reader: snnctl estimate FILE.nir"
# Each at the step it was trained with (the Braille reader: snnTorch at 0.1 ms).
for spec in lif_rockpool:1 cnn_sinabs:1 braille_noDelay_bias_zero:0.1; do
  "$SNNCTL" estimate "etc/models/nir/${spec%%:*}.nir" --dt "${spec##*:}" --board-type sim-v1
done

echo "== submitting the example jobs"
RELAY_ID=""
for job in etc/examples/*.yaml; do
  printf '   %-28s ' "$job"
  answer="$("$SNNCTL" submit "$job")"
  echo "$answer"
  if [ "$job" = etc/examples/relay.yaml ]; then RELAY_ID="$(echo "$answer" | grep -o '[0-9]\+' | head -1)"; fi
done

echo "== snnctl pool status (jobs running)"
sleep 1
"$SNNCTL" pool status

echo "== snnctl jobs --start (when each job still pending should start, by the scheduler's plan)"
"$SNNCTL" jobs --start

echo "== the packed gang (etc/examples/gang.yaml): how close its replicas run (snnctl show, while it runs)"
for job in $("$SNNCTL" jobs --format id,name | awk '$2 == "gang-of-three" {print $1}'); do
  "$SNNCTL" show "$job" | sed -n '/^Gang:/,/^[A-Z]/p' | grep -v '^History' || true
done

echo "== waiting for every job to finish"
wait_for 120 "the jobs to finish" sh -c "test \$('$SNNCTL' jobs --state PENDING,RUNNING | wc -l) -eq 1"
echo "== snnctl jobs"
"$SNNCTL" jobs
echo "== snnctl show 1"
"$SNNCTL" show 1
echo "== output of job 1's task: snnctl logs 1"
"$SNNCTL" logs 1 || true

echo "== the spike plane: job $RELAY_ID ran snn-example-relay against etc/models/relay.json"
"$SNNCTL" show "$RELAY_ID" | grep -E "^(State|Spikes):|task 0 on|spikes "
"$SNNCTL" logs "$RELAY_ID" || true

echo "== NIR models on the simulated board (etc/examples/nir-*.yaml ran snn-example-nir)"
for job in $("$SNNCTL" jobs --format id,name | awk '$2 ~ /^nir-/ {print $1}'); do
  "$SNNCTL" show "$job" | grep -E "^(Name|State):"
  "$SNNCTL" logs "$job" 2>/dev/null | grep -E "^(model|injected|most)" || true
done

echo "== a pass-through job on node3's Ethernet board: the task's own code talks to the board"
cat >"$WORK/pass-through.yaml" <<'JOB'
name: ether-hello
task:
  command: /usr/bin/python3
  args:
    - -c
    - |
      import os, socket
      print("SNN_BOARD_ENDPOINTS=" + os.environ["SNN_BOARD_ENDPOINTS"])
      print("SLURM_FPGA_IPS=" + os.environ["SLURM_FPGA_IPS"])
      host, port = os.environ["SNN_BOARD_ENDPOINTS"].split("//")[1].rsplit(":", 1)
      board = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
      board.settimeout(10)
      board.connect((host, int(port)))
      for request in (b"PING", b"LOAD weights 0.5,0.25", b"RUN"):
          board.send(request)
          print(request.decode(), "->", board.recv(1000).decode())
  resources: {board_type: ether-v1, cores: 1, ksps: 100}
JOB
PASS_ID="$("$SNNCTL" submit "$WORK/pass-through.yaml" | grep -o '[0-9]\+' | head -1)"
wait_for 30 "the pass-through job" sh -c "'$SNNCTL' show $PASS_ID | grep -q 'COMPLETED'"
"$SNNCTL" logs "$PASS_ID"
echo "   when it ended its board was released (reset: the next tenant finds nothing) and checked"

echo "== a core fails: snnctl sim kill-core node2/0 8,8, then pool status"
"$SNNCTL" sim kill-core node2/0 8,8
"$SNNCTL" pool status

echo "== the scheduling policy (etc/policy.yaml): snnctl policy show"
"$SNNCTL" policy show

echo "== identity: the user 'daemon' (uid 1) is no admin and no member of lab-a"
AS_DAEMON=(setpriv --reuid=daemon --regid=daemon --init-groups)
"${AS_DAEMON[@]}" "$SNNCTL" node drain node1 || true
"${AS_DAEMON[@]}" "$SNNCTL" --tenant lab-a jobs || true
"${AS_DAEMON[@]}" "$SNNCTL" --tenant root cancel 1 || true
echo "   master log of the refusals:"
grep "refused" "$WORK/master.log" | sed 's/^/   /' | tail -3

echo "== the HTTP API: a token (snnctl token create), then job 1 and the pool over HTTPS"
"$SNNCTL" token create --note demo --parsable --out "$WORK/token"
CURL=(curl -sS --cacert "$WORK/tls/ca.crt" -H "Authorization: Bearer $(cat "$WORK/token")")
"${CURL[@]}" "$API/v1/jobs/1" | grep -E '"(name|state|reason)"' | sed 's/^/   /' || true
"${CURL[@]}" "$API/v1/pool" | grep -cE '"state": "UP"' | sed 's/^/   boards and nodes UP: /' || true
echo "   the same read without a token:"
curl -sS --cacert "$WORK/tls/ca.crt" "$API/v1/jobs/1" | sed 's/^/   /' || true
echo "   (the API: $API/v1/ ; docs/reference/http-api.md)"
echo "== the web page: $API/ (sign in with the token in $WORK/token; the browser must trust"
echo "   $WORK/tls/ca.crt, the demo cluster's CA)"
curl -sS --cacert "$WORK/tls/ca.crt" "$API/" | grep -o '<title>[^<]*</title>' | sed 's/^/   /' || true

TRACE=../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz
if [ -f "$TRACE" ]; then
  for policy in fcfs easy default; do
    echo "== snn-sim --policy=$policy on $(basename "$TRACE")"
    "$BIN/sim/snn-sim" --trace="$TRACE" --policy="$policy" | grep -E "^(jobs|replay s|mean|utilization|max wait)"
  done
fi

if [ "$KEEP" = 1 ]; then
  echo "== the cluster runs on (--keep): the web page at $API/ , token in $WORK/token;"
  echo "   snnctl with: SNN_MASTER=$SNN_MASTER SNN_MUNGE_SOCKET=$SNN_MUNGE_SOCKET \\"
  echo "   SNN_CA_FILE=$SNN_CA_FILE $SNNCTL pool status. Ctrl-C stops it."
  while true; do sleep 3600; done
fi
