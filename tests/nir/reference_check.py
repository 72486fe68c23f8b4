#!/usr/bin/python3
"""The reference check (issue 39): every NIR file in etc/models/nir/, in ../shared/models/nir/
when it is there, and the generated ones (make_nir_files.py) run through `snnctl simulate` (the
board's engine) and through nir_reference.py (numpy, written from docs/nir.md) on the same
input spikes, sparse and dense, must give the same output spikes at the same steps and the
same output values.

Exact equality is required. Where it does not hold, the check prints the per-neuron spike
counts and fails; the tolerance the issue allows for floating-point order (counts within 2%)
is reported, never taken silently as a pass.

    reference_check.py SOURCE_DIR BUILD_DIR WORK_DIR
"""
import glob
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# (name, input spike chance, reset of spiking layers without v_reset)
REGIMES = (("sparse", 0.03, "subtract"), ("dense", 0.4, "subtract"), ("dense-zero", 0.4, "zero"))


def input_layers(model_json):
    import json
    m = json.loads(model_json)
    return [(p["name"], int(p["size"])) for p in m["populations"] if p.get("role") == "input"]


def import_model(build, path):
    """The step it runs at: 1 ms unless a time constant is shorter (then 0.1, 0.01)."""
    for step in ("1", "0.1", "0.01"):
        r = subprocess.run([os.path.join(build, "cli", "snn-nir-import"), "--dt=" + step, path],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return step, r.stdout
        if "shorter than the" not in r.stderr:
            raise SystemExit("snn-nir-import refused %s: %s" % (path, r.stderr.strip()))
    raise SystemExit("no step runs " + path)


def write_inputs(path, layers, steps, chance, seed):
    rnd = random.Random(seed)
    with open(path, "w") as f:
        f.write("step,layer,neuron\n")
        for step in range(steps):
            for name, size in layers:
                for i in range(size):
                    if rnd.random() < chance:
                        f.write("%d,%s,%d\n" % (step, name, i))


def read_records(path):
    records = {}
    with open(path) as f:
        next(f)
        for line in f:
            step, layer, neuron, value = line.strip().split(",")
            records[(int(step), layer, int(neuron))] = float(value)
    return records


def compare(ours, ref):
    """None when equal; otherwise a description of the difference."""
    if ours.keys() != ref.keys():
        only_ours = sorted(ours.keys() - ref.keys())[:5]
        only_ref = sorted(ref.keys() - ours.keys())[:5]
        counts_a, counts_b = {}, {}
        for (step, layer, neuron) in ours:
            counts_a[(layer, neuron)] = counts_a.get((layer, neuron), 0) + 1
        for (step, layer, neuron) in ref:
            counts_b[(layer, neuron)] = counts_b.get((layer, neuron), 0) + 1
        within = all(abs(counts_a.get(k, 0) - counts_b.get(k, 0)) <= max(1, 0.02 * counts_b.get(k, 0))
                     for k in set(counts_a) | set(counts_b))
        return ("%d records differ (snn only: %s; reference only: %s); per-neuron counts %s "
                "the 2%% tolerance" % (len(ours.keys() ^ ref.keys()), only_ours, only_ref,
                                       "within" if within else "outside"))
    for key, value in ours.items():
        if abs(value - ref[key]) > 1e-9 * max(1.0, abs(ref[key])):
            return "value at %s: snn %.17g, reference %.17g" % (key, value, ref[key])
    return None


def nir_files(source, work, shared=True):
    """The shipped NIR files, ../shared's when there and `shared`, and the generated ones."""
    os.makedirs(work, exist_ok=True)
    gen = os.path.join(work, "generated")
    subprocess.run([sys.executable, os.path.join(HERE, "make_nir_files.py"), gen], check=True,
                   stdout=subprocess.DEVNULL)
    files = sorted(glob.glob(os.path.join(source, "etc", "models", "nir", "*.nir")))
    if shared:
        files += sorted(glob.glob(os.path.join(source, "..", "shared", "models", "nir", "*.nir")))
    return files + sorted(glob.glob(os.path.join(gen, "*.nir")))


def main():
    source, build, work = sys.argv[1:4]
    files = nir_files(source, work)
    snnctl = os.path.join(build, "cli", "snnctl")
    failures = 0
    for path in files:
        step, model_json = import_model(build, path)
        layers = input_layers(model_json)
        neurons = sum(size for _, size in layers)
        steps = 100 if neurons > 1000 else 400
        total = 0
        for regime, chance, reset in REGIMES:
            base = os.path.join(work, os.path.basename(path) + "." + regime)
            write_inputs(base + ".in", layers, steps, chance, seed=len(base))
            sim = subprocess.run([snnctl, "simulate", path, "--inputs", base + ".in", "--steps",
                                  str(steps), "--out", base + ".snn", "--dt", step,
                                  "--reset", reset],
                                 capture_output=True, text=True)
            if sim.returncode != 0:
                print("FAIL %s (%s): snnctl simulate: %s" % (path, regime, sim.stderr.strip()))
                failures += 1
                continue
            subprocess.run([sys.executable, os.path.join(HERE, "nir_reference.py"), path,
                            "--inputs", base + ".in", "--steps", str(steps), "--out",
                            base + ".ref", "--dt", step, "--reset", reset], check=True)
            ours, ref = read_records(base + ".snn"), read_records(base + ".ref")
            total += len(ref)
            diff = compare(ours, ref)
            if diff:
                print("FAIL %s (%s, step %s ms): %s" % (os.path.basename(path), regime, step, diff))
                failures += 1
            else:
                print("same %s (%s, step %s ms, %d steps): %d output records" %
                      (os.path.basename(path), regime, step, steps, len(ref)))
        if total == 0:
            print("FAIL %s: no output at all in either regime: the check would prove nothing" % path)
            failures += 1
    # Files that cannot be run exactly: one line that names the file, the node and why.
    bad = os.path.join(work, "bad")
    subprocess.run([sys.executable, os.path.join(HERE, "make_nir_files.py"), "--bad", bad],
                   check=True)
    with open(os.path.join(bad, "bad_files.txt")) as f:
        for line in f:
            name, words = line.rstrip("\n").split("\t")
            r = subprocess.run([os.path.join(build, "cli", "snn-nir-import"),
                                os.path.join(bad, name)], capture_output=True, text=True)
            if r.returncode == 0 or words not in r.stderr or r.stderr.count("\n") != 1:
                print("FAIL %s: expected one line with '%s', got: %s" % (name, words, r.stderr))
                failures += 1
            else:
                print("refused %s: %s" % (name, r.stderr.strip()))
    print("%d files, %d failures" % (len(files), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
