#!/usr/bin/python3
"""The class is the unit of the house: no class with more than MAX_METHODS methods and no
function longer than MAX_FUNCTION_LINES lines, in every folder but tests/ (a test body is a
scenario, read top to bottom; the test helpers' classes are held to the rule too).

Read with universal-ctags (its JSON output, C++ parser):
- A class's methods: the distinct names of the member functions declared or defined in it
  (an overload set is one method; constructors, destructors and operators are not counted),
  from every file, so that a method declared in a header and defined in a .cc counts once.
  Classes in anonymous namespaces are told apart by their file.
- A function's length: from the line of its name to its closing brace (ctags' `end`).

NOT_YET listed what was over the rule when the rule became a test, to be cut down (an entry
that met the rule had to leave it); it is empty now, and nothing may join it.
usage: shape_test.py SOURCE_DIR
"""
import collections
import json
import os
import re
import subprocess
import sys

MAX_METHODS = 30
MAX_FUNCTION_LINES = 100
NOT_YET = set()  # emptied at the close of the fourth house step: nothing is over the rule
FOLDERS = ["bench", "cli", "client", "common", "drivers", "examples", "fuzz", "master",
           "nodeagent", "proto", "sim", "tests/test_util"]


def source_files(root):
    for top in FOLDERS:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".cc", ".h")) and not name.endswith(".pb.h"):
                    yield os.path.join(folder, name)


def tags(root):
    files = list(source_files(root))
    done = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+neKZS", "--kinds-C++=fpcs",
         "--language-force=C++", "-f", "-"] + files, capture_output=True, text=True, check=True)
    for line in done.stdout.splitlines():
        yield json.loads(line)


def main(root):
    methods = collections.defaultdict(set)
    problems = []
    seen = set()  # what is over the rule, as NOT_YET names it
    for tag in tags(root):
        path = os.path.relpath(tag["path"], root)
        scope = re.sub(r"__anon[0-9a-f]+", "(anonymous)", tag.get("scope", ""))
        if tag["kind"] in ("function", "prototype") and tag.get("scopeKind") in ("class",
                                                                                  "struct"):
            name = scope.split("::")[-1]
            special = tag["name"] in (name, "~" + name) or tag["name"].startswith(("operator",
                                                                                 "__anon"))
            if not special:  # a lambda in a member's initializer shows as __anon...
                key = scope + (" in " + path.rsplit(".", 1)[0] if "(anonymous)" in scope else "")
                methods[key].add(tag["name"])
        if tag["kind"] == "function" and "end" in tag:
            lines = tag["end"] - tag["line"] + 1
            if lines > MAX_FUNCTION_LINES:
                where = (scope + "::" if scope else "") + tag["name"]
                seen.add("%s %s" % (path, where))
                if "%s %s" % (path, where) in NOT_YET:
                    continue
                problems.append("%s:%d: %s has %d lines (at most %d: give its parts names)" %
                                (path, tag["line"], where, lines, MAX_FUNCTION_LINES))
    if not methods:
        problems.append("ctags found no class at all: is universal-ctags installed?")
    for cls, names in sorted(methods.items()):
        if len(names) > MAX_METHODS:
            seen.add("class " + cls)
            if "class " + cls in NOT_YET:
                continue
            problems.append("class %s has %d methods (at most %d: what part of it is a class of "
                            "its own?)" % (cls, len(names), MAX_METHODS))
    for entry in sorted(NOT_YET - seen):
        problems.append("%s meets the rule now: take it off NOT_YET" % entry)
    for problem in problems:
        print(problem)
    print("shape: %d over the rule, not yet cut down" % len(NOT_YET & seen))
    print("shape: %d classes, %d problems" % (len(methods), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
