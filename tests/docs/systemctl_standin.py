#!/usr/bin/python3
"""A stand-in for systemctl inside the docs test's private namespace (no systemd runs there).

It does what the guides ask of systemd with the units the packages install
(/lib/systemd/system/NAME.service): `enable --now`, `start`, `stop`, `restart`, `is-active`,
`daemon-reload`. A start runs the unit's ExecStart as its User/Group with its Environment and
StateDirectory, and for Type=notify waits, as systemd does, for READY=1 on NOTIFY_SOCKET (or the
daemon's exit, or TimeoutStartSec, 90 s by default). What it does not do: sandboxing
(ProtectSystem, PrivateTmp), restarts, the watchdog, cgroups. Logs go to /run/standin-systemd/.
"""
import os
import pwd
import grp
import shlex
import signal
import socket
import sys
import time

UNIT_DIR = "/lib/systemd/system"
RUN_DIR = "/run/standin-systemd"


def fail(message):
    print("systemctl: " + message, file=sys.stderr)
    sys.exit(1)


def read_unit(name):
    path = os.path.join(UNIT_DIR, name if name.endswith(".service") else name + ".service")
    if not os.path.exists(path):
        fail("Unit %s not found." % os.path.basename(path))
    service = {"Environment": []}
    section = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                section = line
                continue
            if section != "[Service]" or "=" not in line:
                continue
            key, value = line.split("=", 1)
            if key == "Environment":
                service["Environment"].extend(shlex.split(value))
            else:
                service[key] = value
    return os.path.basename(path)[: -len(".service")], service


def pid_file(unit):
    return os.path.join(RUN_DIR, unit + ".pid")


def running_pid(unit):
    try:
        with open(pid_file(unit)) as f:
            pid = int(f.read())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def start(name):
    unit, service = read_unit(name)
    if running_pid(unit):
        return
    os.makedirs(RUN_DIR, exist_ok=True)
    user = service.get("User", "root")
    group = service.get("Group", grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name)
    uid, gid = pwd.getpwnam(user).pw_uid, grp.getgrnam(group).gr_gid
    for state in service.get("StateDirectory", "").split():
        path = os.path.join("/var/lib", state)
        os.makedirs(path, exist_ok=True)
        os.chown(path, uid, gid)
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
    for assignment in service["Environment"]:
        key, value = assignment.split("=", 1)
        env[key] = value
    notify = None
    if service.get("Type") == "notify":
        notify_path = os.path.join(RUN_DIR, unit + ".notify")
        if os.path.exists(notify_path):
            os.unlink(notify_path)
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        os.chmod(notify_path, 0o777)
        env["NOTIFY_SOCKET"] = notify_path
    argv = shlex.split(service["ExecStart"])
    log = os.open(os.path.join(RUN_DIR, unit + ".log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.dup2(os.open("/dev/null", os.O_RDONLY), 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.chdir("/")
        if uid != 0 or gid != 0:
            os.initgroups(user, gid)
            os.setgid(gid)
            os.setuid(uid)
        env["HOME"] = pwd.getpwuid(uid).pw_dir
        env["USER"] = env["LOGNAME"] = user
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    with open(pid_file(unit), "w") as f:
        f.write(str(pid))
    if notify is None:
        return
    deadline = time.monotonic() + float(service.get("TimeoutStartSec", "90").rstrip("s"))
    notify.settimeout(0.5)
    while True:
        try:
            message = notify.recv(4096).decode(errors="replace")
            if "READY=1" in message.split("\n"):
                break
        except socket.timeout:
            pass
        ended, status = os.waitpid(pid, os.WNOHANG)
        if ended == pid:
            fail("Job for %s.service failed: the daemon exited (status %d) before it was ready; "
                 "see %s" % (unit, status, os.path.join(RUN_DIR, unit + ".log")))
        if time.monotonic() > deadline:
            fail("Job for %s.service timed out before the daemon said READY" % unit)
    notify.close()
    os.unlink(env["NOTIFY_SOCKET"])


def stop(name):
    unit, _ = read_unit(name)
    pid = running_pid(unit)
    if pid is None:
        return
    os.kill(pid, signal.SIGTERM)
    for _ in range(300):
        try:
            ended, _ = os.waitpid(pid, os.WNOHANG)
            if ended == pid:
                break
        except ChildProcessError:  # started by another systemctl: not our child
            try:
                os.kill(pid, 0)
            except OSError:
                break
        time.sleep(0.1)
    os.unlink(pid_file(unit))


def main(args):
    args = [a for a in args if a not in ("--quiet", "-q", "--no-pager")]
    if not args:
        fail("a command is needed")
    command, rest = args[0], args[1:]
    now = "--now" in rest
    units = [a for a in rest if not a.startswith("-")]
    if command == "daemon-reload":
        return 0
    if command == "enable":
        for unit in units:
            read_unit(unit)
            if now:
                start(unit)
        return 0
    if command == "start":
        for unit in units:
            start(unit)
        return 0
    if command == "stop":
        for unit in units:
            stop(unit)
        return 0
    if command == "restart":
        for unit in units:
            stop(unit)
            start(unit)
        return 0
    if command == "is-active":
        active = all(running_pid(read_unit(u)[0]) for u in units)
        print("active" if active else "inactive")
        return 0 if active else 3
    fail("the docs test's stand-in does not do '%s'" % command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
