"""What the replay scripts share (scripts/shaken_replays.py, scripts/maintenance_loss.py): the
built snn-sim, one replay's metrics, and the flags after `--`."""
import json
import os
import subprocess
import sys


def find(tool):
    """The built snn-sim (BUILD_DIR, default build/), or None after one line on stderr."""
    sim = os.path.join(os.environ.get("BUILD_DIR", "build"), "sim", "snn-sim")
    if not os.access(sim, os.X_OK):
        print("%s: no %s; build first (scripts/build.sh) or set BUILD_DIR" % (tool, sim),
              file=sys.stderr)
        return None
    return sim


def replay(sim, trace, flags):
    """snn-sim --json on `trace` with `flags`: its metrics (a dict)."""
    out = subprocess.run([sim, "--trace=" + trace, "--json"] + flags, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def split_flags(argv):
    """(the script's own arguments, the snn-sim flags after `--`)."""
    if "--" not in argv:
        return argv, []
    return argv[:argv.index("--")], argv[argv.index("--") + 1:]
