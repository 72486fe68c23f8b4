#!/usr/bin/env python3
"""Replays each trace N times shaken (snn-sim --shake=1..N: a random 10% of the jobs submitted up
to 5 minutes earlier or later) under EASY and under the default policy, and prints every metric's
mean +- standard deviation over the N replays, then checks the default against EASY on the means
as issue 38 asks: mean bounded slowdown <= 0.67x, utilization within 0.5% or better, p99 and max
wait <= EASY's, the spread of normalized user wait (NUWT sd) <= EASY's, the worst user's mean
bounded slowdown <= EASY's. Exits 1 if a criterion fails on any trace.
  scripts/shaken_replays.py [-n N] TRACE.swf[.gz]... [-- SNN_SIM_FLAGS...]
Needs a build (BUILD_DIR, default build/)."""
import os
import statistics
import sys

import snn_sim

METRICS = ["mean_bounded_slowdown", "utilization", "mean_wait_s", "p50_wait_s", "p95_wait_s",
           "p99_wait_s", "max_wait_s", "nuwt_sd", "service_fairness",
           "worst_user_bounded_slowdown", "late_share"]


def replay(sim, trace, policy, seed, flags):
    return snn_sim.replay(sim, trace, ["--policy=" + policy, "--shake=%d" % seed] +
                          (flags if policy == "default" else []))


def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    n, traces = 10, []
    argv, flags = snn_sim.split_flags(argv)
    i = 0
    while i < len(argv):
        if argv[i] == "-n":
            n = int(argv[i + 1])
            i += 2
            continue
        traces.append(argv[i])
        i += 1
    if not traces:
        print("shaken_replays: name at least one trace (--help)", file=sys.stderr)
        return 2
    sim = snn_sim.find("shaken_replays")
    if sim is None:
        return 2
    failed = False
    for trace in traces:
        runs = {p: [replay(sim, trace, p, seed, flags) for seed in range(1, n + 1)]
                for p in ("easy", "default")}
        mean = {p: {m: statistics.mean(r[m] for r in runs[p]) for m in METRICS} for p in runs}
        sd = {p: {m: statistics.stdev([r[m] for r in runs[p]]) if n > 1 else 0 for m in METRICS}
              for p in runs}
        print("%s, %d shaken replays (mean +- sd)" % (os.path.basename(trace), n))
        print("  %-28s %-26s %-26s" % ("metric", "default", "easy"))
        for m in METRICS:
            print("  %-28s %12.4g +- %-10.3g %12.4g +- %-10.3g" %
                  (m, mean["default"][m], sd["default"][m], mean["easy"][m], sd["easy"][m]))
        d, e = mean["default"], mean["easy"]
        checks = [
            ("mean bounded slowdown <= 0.67x EASY's",
             d["mean_bounded_slowdown"] <= 0.67 * e["mean_bounded_slowdown"]),
            ("utilization within 0.5% of EASY's or better",
             d["utilization"] >= e["utilization"] - 0.005),
            ("p99 wait <= EASY's", d["p99_wait_s"] <= e["p99_wait_s"]),
            ("max wait <= EASY's", d["max_wait_s"] <= e["max_wait_s"]),
            ("NUWT sd <= EASY's", d["nuwt_sd"] <= e["nuwt_sd"]),
            ("worst user's mean bounded slowdown <= EASY's",
             d["worst_user_bounded_slowdown"] <= e["worst_user_bounded_slowdown"]),
        ]
        for name, ok in checks:
            print("  %s %s" % ("+" if ok else "-", name))
            failed |= not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
