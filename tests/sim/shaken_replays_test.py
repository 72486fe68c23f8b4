#!/usr/bin/env python3
"""scripts/shaken_replays.py on a small made-up trace: every metric comes with its mean and
standard deviation for both policies, each of issue 38's criteria is marked, the same seeds
give the same figures, and bad use is one line with exit code 2.
  shaken_replays_test.py SOURCE_DIR BUILD_DIR"""
import os
import random
import subprocess
import sys
import tempfile


def main(source, build):
    script = os.path.join(source, "scripts", "shaken_replays.py")
    rng = random.Random(5)
    lines = ["; MaxProcs: 16"]
    submit = 0
    for i in range(1, 401):
        submit += rng.randint(0, 120)
        run = rng.randint(1, 3600)
        procs = rng.choice([1, 2, 4, 8, 16])
        user = rng.randint(1, 8)
        fields = [i, submit, -1, run, procs, -1, -1, procs, run * 2, -1, 1, user, 1, 1, 1, 1, -1, -1]
        lines.append(" ".join(str(f) for f in fields))
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "made-up.swf")
        with open(trace, "w") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(os.environ, BUILD_DIR=build)
        runs = [subprocess.run([sys.executable, script, "-n", "3", trace], env=env,
                               capture_output=True, text=True) for _ in range(2)]
        out = runs[0].stdout
        problems = []
        if runs[0].returncode not in (0, 1):
            problems.append("exit code %d: %s" % (runs[0].returncode, runs[0].stderr))
        if runs[0].stdout != runs[1].stdout:
            problems.append("the same seeds gave different figures")
        for metric in ("mean_bounded_slowdown", "utilization", "p99_wait_s", "max_wait_s",
                       "nuwt_sd", "service_fairness", "worst_user_bounded_slowdown"):
            line = [l for l in out.splitlines() if l.strip().startswith(metric)]
            if len(line) != 1 or line[0].count("+-") != 2:
                problems.append("no mean +- sd for both policies of " + metric)
        marks = [l for l in out.splitlines() if l.startswith("  + ") or l.startswith("  - ")]
        if len(marks) != 6:
            problems.append("%d criteria marked, not 6" % len(marks))
        bad = subprocess.run([sys.executable, script, "-n", "3"], env=env, capture_output=True,
                             text=True)
        if bad.returncode != 2 or len(bad.stderr.strip().splitlines()) != 1:
            problems.append("no trace named: exit %d, %r" % (bad.returncode, bad.stderr))
    for p in problems:
        print("shaken_replays_test: " + p)
    if not problems:
        print("shaken_replays_test: ok\n" + out)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
