#!/usr/bin/env bash
# quickstart_test.sh's second half, run inside its namespaces (this shell is their PID 1: when it
# exits, every process it started ends). Makes the host the guides assume (the packages
# installed, munged running, systemd's part played by tests/docs/systemctl_standin.py), then
# runs each guide's quick start exactly as the guide shows it.
# usage: quickstart_inside.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
BUILD="$1" SRC="$2" WORK="$3"
CLEAN_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

report() {
  local status=$?
  # The agent stopped as systemd stops it, so it removes its task cgroups from the host (ending
  # with this shell, it would be killed and leave them: cgroups are not in our namespaces).
  systemctl stop snn-agent >/dev/null 2>&1 || true
  if [ "$status" -ne 0 ]; then
    mkdir -p "$WORK/logs"
    cp /run/standin-systemd/*.log "$WORK/logs/" 2>/dev/null || true
    for log in "$WORK"/logs/*.log; do
      [ -e "$log" ] || continue
      echo "---- last lines of $(basename "$log")"
      tail -n 20 "$log"
    done
  fi
}
trap report EXIT

ip link set lo up

# The system's directories as overlays: what the quick starts change stays in $WORK.
mkdir -p "$WORK/layers"
mount -t tmpfs tmpfs "$WORK/layers"
for dir in /etc /usr /var; do
  mkdir -p "$WORK/layers$dir/upper" "$WORK/layers$dir/work"
  mount -t overlay overlay \
    -o "lowerdir=$dir,upperdir=$WORK/layers$dir/upper,workdir=$WORK/layers$dir/work" "$dir"
done
mount -t tmpfs tmpfs /run

echo "== the packages, as apt would install them: their files from the build, then their scripts"
for component in master agent cli python; do
  cmake --install "$BUILD" --prefix /usr --component "$component" >/dev/null
done
sh "$SRC/packaging/snn-master/postinst" configure
sh "$SRC/packaging/snn-agent/postinst" configure
install -m 755 "$SRC/tests/docs/systemctl_standin.py" /usr/bin/systemctl

echo "== munge, as its package leaves it: a key, and munged on its default socket"
mkdir -p /etc/munge /run/munge
dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
chmod 600 /etc/munge/munge.key
/usr/sbin/munged --force --key-file=/etc/munge/munge.key --socket=/run/munge/munge.socket.2 \
  --pid-file=/run/munge/munged.pid --seed-file="$WORK/munged.seed" --log-file="$WORK/munged.log"
for _ in $(seq 1 300); do
  if munge --no-input >/dev/null 2>&1; then break; fi
  sleep 0.1
done
munge --no-input >/dev/null

python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/operator-guide.md" "Quick start" \
  >"$WORK/operator.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" "Quick start" >"$WORK/user.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" \
  "From a notebook or another host: the HTTP API" >"$WORK/user-http.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" "Inputs and results" \
  >"$WORK/user-results.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" "Interactive sessions" \
  >"$WORK/user-sessions.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" "Experiment services" \
  >"$WORK/user-services.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" "When will my job start?" \
  >"$WORK/user-start.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" \
  "Boards with what your job needs: constraints" >"$WORK/user-constraints.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" "Sweeps: job arrays" \
  >"$WORK/user-arrays.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" \
  "A NIR network on your own host" >"$WORK/user-nir.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" \
  "A NIR network from a notebook" >"$WORK/user-nir-notebook.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/operator-guide.md" "Advance reservations" \
  >"$WORK/operator-reservations.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" "Running in a reservation" \
  >"$WORK/user-reservation.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/user-guide.md" \
  "Many commands in a row: a shared connection" >"$WORK/user-connection.sh"
python3 "$SRC/tests/docs/doc_blocks.py" "$SRC/docs/operator-guide.md" "Marking boards" \
  >"$WORK/operator-marks.sh"
chmod 644 "$WORK/operator.sh" "$WORK/user.sh" "$WORK/user-http.sh" "$WORK/user-results.sh" \
  "$WORK/user-sessions.sh" "$WORK/user-services.sh" "$WORK/user-start.sh" \
  "$WORK/user-constraints.sh" "$WORK/user-arrays.sh" "$WORK/user-nir.sh" \
  "$WORK/user-nir-notebook.sh" \
  "$WORK/operator-reservations.sh" "$WORK/user-reservation.sh" "$WORK/user-connection.sh" \
  "$WORK/operator-marks.sh"

echo "== docs/operator-guide.md, Quick start (as root)"
(cd /root && env -i PATH="$CLEAN_PATH" HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 \
  bash -euo pipefail -x "$WORK/operator.sh")

# run_as_root SCRIPT OUT: an operator's section as root, in its home, with a clean environment.
run_as_root() {
  (cd /root && env -i PATH="$CLEAN_PATH" HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 \
    bash -euo pipefail -x "$1") | tee "$2"
}
# run_as_alice SCRIPT OUT: a guide's section as alice, in her home, with a clean environment.
run_as_alice() {
  (cd /home/alice && runuser -u alice -- env -i PATH="$CLEAN_PATH" HOME=/home/alice USER=alice \
    LOGNAME=alice LANG=C.UTF-8 bash -euo pipefail -x "$1") | tee "$2"
}
# expect OUT PATTERN WHY: the guide's promised output is in OUT, or the test fails saying WHY.
expect() {
  grep -q -- "$2" "$1" || {
    echo "docs_quickstart: $3"
    exit 1
  }
}

echo "== docs/user-guide.md, Quick start (as alice, a new user)"
useradd --create-home --shell /bin/bash alice
run_as_alice "$WORK/user.sh" "$WORK/user.out"
# What the user guide says the last command prints.
expect "$WORK/user.out" "^hello from task 0 of job 1 on $(hostname)" \
  "snnctl logs 1 did not print the job's greeting"

echo "== docs/user-guide.md, the HTTP API (as alice)"
run_as_alice "$WORK/user-http.sh" "$WORK/user-http.out"
# What the guide says: the submit answers job 2, and the show names it.
expect "$WORK/user-http.out" '"tenant_job_id": "2"' "the HTTP submit did not answer job 2"
expect "$WORK/user-http.out" '"name": "hello"' "the HTTP show did not show the job"
expect "$WORK/user-http.out" "^COMPLETED hello from task 0 of job 3" \
  "the Python client did not print the job's end and output"
# The token the guide makes is alice's alone.
if [ "$(stat -c %a /home/alice/.snn-token)" != 600 ]; then
  echo "quickstart: ~/.snn-token is mode $(stat -c %a /home/alice/.snn-token), not 600" >&2
  exit 1
fi

echo "== docs/user-guide.md, inputs and results (as alice)"
run_as_alice "$WORK/user-results.sh" "$WORK/user-results.out"
# What the guide says: the count comes back, and the Python call returns its files and usage.
expect "$WORK/user-results.out" "^count.txt" "snnctl results 4 did not list count.txt"
expect "$WORK/user-results.out" "^5$" "results/count.txt did not hold 5"
expect "$WORK/user-results.out" "^COMPLETED sim-v1 42 1 core$" \
  "submit_job did not print what the guide says"

echo "== docs/user-guide.md, interactive sessions (as alice)"
run_as_alice "$WORK/user-sessions.sh" "$WORK/user-sessions.out"
expect "$WORK/user-sessions.out" "^Granted session 6 (keepalive 5m): task 0 on" \
  "snnctl alloc did not grant session 6"
expect "$WORK/user-sessions.out" "^step on cores " "the step did not print its line"
expect "$WORK/user-sessions.out" "^Renewed session 6" "snnctl alloc --renew 6 did not renew it"
expect "$WORK/user-sessions.out" "^Cancelled job 6" "snnctl cancel 6 did not end the session"

echo "== docs/user-guide.md, experiment services (as alice)"
run_as_alice "$WORK/user-services.sh" "$WORK/user-services.out"
expect "$WORK/user-services.out" "^experiment 1: DONE, 5\.[0-9]* ms of board time on " \
  "the experiment did not run as the guide says"
expect "$WORK/user-services.out" "^1       out             1$" "the output spike is not there"
expect "$WORK/user-services.out" "^Cancelled job 8" "snnctl cancel 8 did not end the service"

echo "== docs/user-guide.md, when will my job start? (as alice)"
run_as_alice "$WORK/user-start.sh" "$WORK/user-start.out"
expect "$WORK/user-start.out" "^10 .* second .* - *- *held$" "jobs --start did not show job 10 held"
expect "$WORK/user-start.out" "^Cancelled job 9" "snnctl cancel 9 did not cancel job 9"
echo "== docs/user-guide.md, boards with what your job needs: constraints (as alice)"
run_as_alice "$WORK/user-constraints.sh" "$WORK/user-constraints.out"
expect "$WORK/user-constraints.out" "firmware=2.10,rev=3" \
  "snnctl pool status did not list the second board's attributes"
expect "$WORK/user-constraints.out" "^Constraints: *rev >= 3 && firmware >= '2.4'$" \
  "snnctl show 11 did not print the job's constraints"
expect "$WORK/user-constraints.out" "task 0 on $(hostname)/board1 " \
  "job 11 did not run on the one board that meets its constraints"
echo "== docs/user-guide.md, sweeps: job arrays (as alice)"
run_as_alice "$WORK/user-arrays.sh" "$WORK/user-arrays.out"
expect "$WORK/user-arrays.out" "4 elements: 4 started (4 completed, 0 failed, 0 cancelled)" \
  "snnctl show 12 did not say all four elements completed"
expect "$WORK/user-arrays.out" "^seed 3 of 4$" "snnctl logs 12_3 did not print element 3's line"
expect "$WORK/user-arrays.out" "^analysed seed 2$" \
  "snnctl logs 17_2 did not print the after_corr element's line"
echo "== docs/user-guide.md, a NIR network on your own host (as alice)"
run_as_alice "$WORK/user-nir.sh" "$WORK/user-nir.out"
expect "$WORK/user-nir.out" "^spike rate: *49.0 ksps (48960 spikes/s) with inputs at 10 Hz" \
  "snnctl estimate did not measure the rate the guide quotes"
expect "$WORK/user-nir.out" "^Simulated 20 steps of 0.1 ms (NIR dynamics): 89 spikes in all" \
  "snnctl simulate did not print what the guide says"
expect "$WORK/user-nir.out" "^3,lif2,0,1$" "out.csv does not start as the guide says"
echo "== docs/operator-guide.md, advance reservations (as root)"
run_as_root "$WORK/operator-reservations.sh" "$WORK/operator-reservations.out"
expect "$WORK/operator-reservations.out" "^Reservation course: .* for 2h, boards " \
  "reservation create did not create course"
expect "$WORK/operator-reservations.out" "^nightly .*WAITING.*maint,daily,ignore_jobs$" \
  "reservation list did not list nightly with its flags"
echo "== docs/user-guide.md, running in a reservation (as alice)"
run_as_alice "$WORK/user-reservation.sh" "$WORK/user-reservation.out"
expect "$WORK/user-reservation.out" "^Reason: *waiting for reservation course to start at " \
  "snnctl show 22 did not say the job waits for the reservation"
expect "$WORK/user-reservation.out" "^Cancelled job 22" "snnctl cancel 22 did not cancel job 22"
echo "== docs/user-guide.md, a shared connection (as alice)"
run_as_alice "$WORK/user-connection.sh" "$WORK/user-connection.out"
expect "$WORK/user-connection.out" "^Sharing connections to .* through /tmp/snnctl-" \
  "snnctl connection start did not start the shared connection"
expect "$WORK/user-connection.out" "requests relayed: 1;" \
  "snnctl jobs did not go through the shared connection"
expect "$WORK/user-connection.out" "^Stopped the shared connection" \
  "snnctl connection stop did not stop it"
echo "== docs/operator-guide.md, marking boards (as root)"
run_as_root "$WORK/operator-marks.sh" "$WORK/operator-marks.out"
expect "$WORK/operator-marks.out" "^Board $(hostname)/0 marks: calibrated_at=2026-11-28T03:00Z$" \
  "snnctl board mark did not mark board 0"
expect "$WORK/operator-marks.out" " calibrated_at=2026-11-28T03:00Z,firmware=" \
  "snnctl pool status did not show the mark beside the driver's attributes"
expect "$WORK/operator-marks.out" " calibrated_at$" \
  "snnctl pool status did not name the mark in its MARKS column"
expect "$WORK/operator-marks.out" "^Board $(hostname)/0 marks: none$" \
  "snnctl board unmark did not remove the mark"
echo "== docs/user-guide.md, a NIR network from a notebook (as alice)"
run_as_alice "$WORK/user-nir-notebook.sh" "$WORK/user-nir-notebook.out"
expect "$WORK/user-nir-notebook.out" "^COMPLETED 2 cores$" \
  "submit_nir did not run the NIR export on 2 cores"
expect "$WORK/user-nir-notebook.out" "^most active output neuron: " \
  "the uploaded network's job did not print what the board gave"
echo "docs_quickstart: both quick starts, the HTTP API, the results, the sessions, the experiment services, the start forecast, the constraints, the arrays, the NIR, the NIR from a notebook, the reservation, the shared connection and the board marks sections ran as written"
