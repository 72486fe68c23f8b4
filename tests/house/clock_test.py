#!/usr/bin/python3
"""Time comes from the clock code: nothing else reads the time, sleeps or arms a real-time timer.

Everywhere (product, drivers, benchmarks, fuzz harnesses and tests), a C++ file may not read a
clock (`X::now()`, `time(nullptr)`, `std::time(...)`, `gettimeofday`, `clock_gettime`), sleep
(`sleep_for`, `sleep_until`, `sleep`, `usleep`, `nanosleep`) or wait on an Asio real-time timer
(`steady_timer`, `system_timer`, `deadline_timer`, `high_resolution_timer`). What it uses
instead, from common/base/clock.h and common/rpc/clock_timer.h: the injected Clock (NowMs,
SleepMs) and ClockTimer for what is scheduled; Stopwatch, MonotonicNow, RealDeadline, PollUntil
and SleepRealMs for what is measured or waited for in real time (benchmarks, tools, tests
waiting on real processes).

Waiting on a condition with a bound (`condition_variable::wait_for`, `future::wait_for`) is a
condition wait, not a clock read, and is allowed. Comments and string literals are not read.
The files below may, each for the reason given.
usage: clock_test.py SOURCE_DIR
"""
import os
import re
import sys

FOLDERS = ["bench", "cli", "client", "common", "drivers", "examples", "fuzz", "master",
           "nodeagent", "proto", "sim", "tests"]
ALLOWED = {
    "common/base/clock.h": "the clock code",
    "common/base/clock.cc": "the clock code",
    "common/rpc/clock_timer.h": "the clock code (timers on a Clock)",
    "common/rpc/clock_timer.cc": "the clock code (timers on a Clock)",
    "tests/common/clock_timer_test.cc": "tests of the clock",
    "master/master_server.h": "the scheduling pass waits on real CPU time by design "
                              "(master/jobs/pass_cadence.h)",
    "common/daemon/service_notify.h": "systemd's watchdog counts real time",
}
FORBIDDEN = re.compile(
    r"::now\s*\(|(?<![\w.>])(?:std::)?time\s*\(\s*(?:nullptr|NULL|0|&)|std::time\s*\(|"
    r"\bgettimeofday\b|\bclock_gettime\b|\bsleep_for\b|\bsleep_until\b|(?<![\w.>:])u?sleep\s*\(|"
    r"\bnanosleep\b|\b(?:steady|system|deadline|high_resolution)_timer\b")
COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])\'',
                               re.S)


def code_of(text):
    """The text with comments and literals blanked, line breaks kept (for line numbers)."""
    return COMMENT_OR_STRING.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def main(root):
    problems = []
    for top in FOLDERS:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                if rel in ALLOWED:
                    continue
                with open(path, errors="replace") as f:
                    code = code_of(f.read())
                for number, line in enumerate(code.splitlines(), 1):
                    match = FORBIDDEN.search(line)
                    if match:
                        problems.append("%s:%d: %s outside the clock code (use common/base/"
                                        "clock.h: the injected Clock, or Stopwatch, RealDeadline, "
                                        "SleepRealMs for real time)" % (rel, number,
                                                                         match.group(0).strip()))
    for rel in ALLOWED:
        if not os.path.exists(os.path.join(root, rel)):
            problems.append("%s is allowed the clock but does not exist: drop it from the list"
                            % rel)
    for problem in problems:
        print(problem)
    print("clock: %d problems" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
