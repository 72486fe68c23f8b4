#!/usr/bin/env python3
"""What daily maintenance windows cost a machine (issue 40): replays each trace with and without
daily windows (snn-sim --maintenance=WINDOW, the same jobs: both with --drop_longer_than=22h) and
prints, for the whole replay and for the span while jobs arrive (first submit to last), the
utilization without and with the windows, what the windows lost, the share they closed, and what
was lost beyond it. Exits 1 if, while jobs arrive, the loss beyond the windows' own area is more
than --tolerance (0.01: issue 40's 1 point) on any trace.

A replay ends by running what is left once nothing more arrives: on an overloaded machine most of
the replay, with only the widest and longest jobs left and no short ones to fill the drain
before each window. The span while jobs arrive is the steady state a site runs in.
  scripts/maintenance_loss.py [--load_factor=F] [--window=2h] [--tolerance=0.01] TRACE...
                              [-- SNN_SIM_FLAGS...]
Flags after -- go to every replay (e.g. --mesh=10x10 --policy=easy). Needs a build (BUILD_DIR,
default build/)."""
import os
import subprocess
import sys

import snn_sim


def replay(sim, trace, flags):
    return snn_sim.replay(sim, trace, ["--drop_longer_than=22h"] + flags)


def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    options = {"--load_factor": "1", "--window": "2h", "--tolerance": "0.01"}
    traces = []
    argv, flags = snn_sim.split_flags(argv)
    for arg in argv:
        name, _, value = arg.partition("=")
        if name in options and value:
            options[name] = value
        elif arg.startswith("-"):
            print("maintenance_loss: unknown option %s (--help)" % arg, file=sys.stderr)
            return 2
        else:
            traces.append(arg)
    if not traces:
        print("maintenance_loss: name at least one trace (--help)", file=sys.stderr)
        return 2
    try:
        tolerance = float(options["--tolerance"])
    except ValueError:
        print("maintenance_loss: --tolerance is not a number: %s" % options["--tolerance"],
              file=sys.stderr)
        return 2
    sim = snn_sim.find("maintenance_loss")
    if sim is None:
        return 2
    flags = ["--load_factor=" + options["--load_factor"]] + flags
    failed = False
    for trace in traces:
        try:
            plain = replay(sim, trace, flags)
            windows = replay(sim, trace, flags + ["--maintenance=" + options["--window"]])
        except subprocess.CalledProcessError as e:
            print("maintenance_loss: snn-sim failed on %s: %s" % (trace, e.stderr.strip()),
                  file=sys.stderr)
            return 2
        print(("%s, load x%s, daily %s windows %s" % (
            os.path.basename(trace), options["--load_factor"], options["--window"],
            " ".join(flags[1:]))).rstrip())
        print("  %-20s %-10s %-9s %-9s %-9s %s" % ("span", "no windows", "windows", "lost",
                                                   "closed", "lost beyond"))
        for span, util, closed in (("whole replay", "utilization", "reserved_share"),
                                   ("while jobs arrive", "arrival_utilization",
                                    "arrival_reserved_share")):
            lost = plain[util] - windows[util]
            beyond = lost - windows[closed]
            print("  %-20s %-10.4f %-9.4f %-9.4f %-9.4f %+.4f" % (span, plain[util], windows[util],
                                                                  lost, windows[closed], beyond))
        beyond = (plain["arrival_utilization"] - windows["arrival_utilization"] -
                  windows["arrival_reserved_share"])
        met = abs(beyond) <= tolerance
        failed = failed or not met
        print("  %s while jobs arrive, lost beyond the windows: %+.4f (tolerance %.4f)" %
              ("+" if met else "-", beyond, tolerance))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
