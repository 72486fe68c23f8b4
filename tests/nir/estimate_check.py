#!/usr/bin/python3
"""snnctl estimate against a measured run (issue 39): for every NIR file of the reference check,
at 10 Hz and 1 kHz inputs, the rate `snnctl estimate` gives (the board's engine, random inputs
of seed 1, its own window) and the rate of a run of `snnctl simulate` on other random inputs at
the same rate (drawn here, another seed) over the same simulated time must agree within 20%.
Prints the table docs/nir.md quotes.

    estimate_check.py SOURCE_DIR BUILD_DIR WORK_DIR
"""
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference_check import import_model, input_layers, nir_files  # noqa: E402

RATES = (10, 1000)
TOLERANCE = 0.20


def main():
    source, build, work = sys.argv[1:4]
    files = nir_files(source, work, shared=False)
    snnctl = os.path.join(build, "cli", "snnctl")
    failures = 0
    print("| file | step | input | estimate (spikes/s) | measured run (spikes/s) | ratio |")
    print("|---|---|---|---|---|---|")
    for path in files:
        step, model_json = import_model(build, path)
        layers = input_layers(model_json)
        for rate in RATES:
            est = subprocess.run([snnctl, "-o", "json", "estimate", path, "--dt", step,
                                  "--neurons-per-core", "256", "--input-rate", str(rate)],
                                 capture_output=True, text=True)
            if est.returncode != 0:
                print("FAIL %s at %d Hz: %s" % (path, rate, est.stderr.strip()))
                failures += 1
                continue
            e = json.loads(est.stdout)
            steps = int(e["measured_steps"])
            chance = rate * float(step) / 1000.0
            rnd = random.Random(99)
            inputs = os.path.join(work, os.path.basename(path) + ".%d.in" % rate)
            with open(inputs, "w") as f:
                for s in range(steps):
                    for name, size in layers:
                        for i in range(size):
                            if rnd.random() < chance:
                                f.write("%d,%s,%d\n" % (s, name, i))
            sim = subprocess.run([snnctl, "simulate", path, "--inputs", inputs, "--steps",
                                  str(steps), "--out", inputs + ".out", "--dt", step],
                                 capture_output=True, text=True)
            os.remove(inputs)
            if sim.returncode != 0:
                print("FAIL %s at %d Hz: simulate: %s" % (path, rate, sim.stderr.strip()))
                failures += 1
                continue
            measured = float(re.search(r"\(([0-9.]+) spikes/s\)", sim.stdout).group(1))
            estimated = float(e["spikes_per_s"])
            ratio = estimated / measured if measured > 0 else float("inf")
            ok = abs(ratio - 1) <= TOLERANCE
            failures += 0 if ok else 1
            print("| %s | %s ms | %d Hz | %.0f | %.0f | %.3f%s |" %
                  (os.path.basename(path), step, rate, estimated, measured, ratio,
                   "" if ok else " FAIL"))
    print("%d files, %d failures" % (len(files), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
