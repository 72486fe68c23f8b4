#!/usr/bin/env python3
"""scripts/maintenance_loss.py on a small made-up overloaded trace: both spans are printed, what
was lost and lost beyond add up from the utilizations and the share closed, the windows close
about 2 h of every 24 while jobs arrive, and bad use is one line with exit code 2.
  maintenance_loss_test.py SOURCE_DIR BUILD_DIR"""
import os
import random
import subprocess
import sys
import tempfile


def main(source, build):
    script = os.path.join(source, "scripts", "maintenance_loss.py")
    rng = random.Random(7)
    lines = ["; MaxProcs: 16"]
    submit = 0
    for i in range(1, 601):  # about 6 days of jobs, more than 16 processors can run
        submit += rng.randint(0, 1800)
        run = rng.randint(60, 4 * 3600)
        procs = rng.choice([1, 2, 4, 8, 16])
        fields = [i, submit, -1, run, procs, -1, -1, procs, run * 2, -1, 1, rng.randint(1, 8), 1, 1,
                  1, 1, -1, -1]
        lines.append(" ".join(str(f) for f in fields))
    problems = []
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "made-up.swf")
        with open(trace, "w") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(os.environ, BUILD_DIR=build)
        run = subprocess.run([sys.executable, script, "--load_factor=2", trace], env=env,
                             capture_output=True, text=True)
        if run.returncode not in (0, 1):
            problems.append("exit code %d: %s" % (run.returncode, run.stderr))
        rows = {}
        for line in run.stdout.splitlines():
            for span in ("whole replay", "while jobs arrive"):
                if line.strip().startswith(span + " "):
                    rows[span] = [float(x) for x in line.strip()[len(span):].split()]
        if set(rows) != {"whole replay", "while jobs arrive"}:
            problems.append("not both spans: %r" % run.stdout)
        for span, (plain, windows, lost, closed, beyond) in rows.items():
            if abs(plain - windows - lost) > 2e-4 or abs(lost - closed - beyond) > 2e-4:
                problems.append("%s: the figures do not add up: %r" % (span, rows[span]))
            if not 0 < windows < plain <= 1:
                problems.append("%s: windows did not cost utilization: %r" % (span, rows[span]))
        if "while jobs arrive" in rows and not 0.06 < rows["while jobs arrive"][3] < 0.11:
            problems.append("closed share while jobs arrive is not about 2/24: %r" % rows)
        mark = [l for l in run.stdout.splitlines() if l.startswith("  + ") or l.startswith("  - ")]
        if len(mark) != 1 or (mark[0].startswith("  + ")) != (run.returncode == 0):
            problems.append("the criterion's mark and the exit code disagree: %r" % mark)
        for bad in ([], ["--frobnicate", trace], ["--tolerance=x", trace]):
            b = subprocess.run([sys.executable, script] + bad, env=env, capture_output=True,
                               text=True)
            if b.returncode != 2 or len(b.stderr.strip().splitlines()) != 1:
                problems.append("%r: exit %d, %r" % (bad, b.returncode, b.stderr))
    for p in problems:
        print("maintenance_loss_test: " + p)
    if not problems:
        print("maintenance_loss_test: ok\n" + run.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
