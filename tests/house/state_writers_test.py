#!/usr/bin/python3
"""Job and task state have one writer in the master: JobTable (master/jobs/job_table.{h,cc}).

Anywhere else in master/, a `set_state(...)` may only be called on a message that is not a job
or task record (a TaskStatus report, an answer, an event), and no code may add a task to a
record (`add_tasks()`): JobTable::SetState, AddTask and SetTaskState do, so that every change
is recorded and indexed in one place.

What the receiver of a `set_state` is, is read with universal-ctags (locals and parameters with
their types): the nearest declaration of that name before the call, in the same file. A record
(`JobRecord`, `TaskRecord`), an `auto` whose declaration reads a record (`add_tasks`,
`mutable_tasks`, `tasks()`, `Find(`, `Insert(`, `JobRecord`, `TaskRecord`), or a receiver whose
type cannot be told (no declaration found, or an expression) is a problem.
usage: state_writers_test.py SOURCE_DIR
"""
import json
import os
import re
import subprocess
import sys

OWNER = {"master/jobs/job_table.h", "master/jobs/job_table.cc"}
CALL = re.compile(r"(\w+)\s*(?:\.|->)\s*set_state\s*\(|([)\]])\s*(?:\.|->)\s*set_state\s*\(")
RECORD = re.compile(r"\b(?:JobRecord|TaskRecord)\b")
READS_RECORD = re.compile(r"add_tasks|mutable_tasks|\btasks\s*\(|\bFind\w*\s*\(|\bInsert\s*\(|"
                          r"JobRecord|TaskRecord")
COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.S)


def code_of(text):
    return COMMENT_OR_STRING.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def declarations(paths):
    """{path: {name: [(line, type)]}} for every local and parameter."""
    done = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+nt", "--kinds-C++=lz",
         "--language-force=C++", "-f", "-"] + paths, capture_output=True, text=True, check=True)
    found = {}
    for line in done.stdout.splitlines():
        tag = json.loads(line)
        kinds = found.setdefault(tag["path"], {}).setdefault(tag["name"], [])
        kinds.append((tag["line"], tag.get("typeref", "").replace("typename:", "")))
    return found


def main(root):
    paths = []
    for folder, _, files in os.walk(os.path.join(root, "master")):
        for name in sorted(files):
            path = os.path.join(folder, name)
            if name.endswith((".cc", ".h")) and os.path.relpath(path, root) not in OWNER:
                paths.append(path)
    declared = declarations(paths)
    problems = []
    calls = 0
    for path in paths:
        rel = os.path.relpath(path, root)
        with open(path, errors="replace") as f:
            lines = code_of(f.read()).splitlines()
        for number, line in enumerate(lines, 1):
            if re.search(r"\badd_tasks\s*\(", line):
                problems.append("%s:%d: adds a task to a record (JobTable::AddTask does)" %
                                (rel, number))
            for match in CALL.finditer(line):
                calls += 1
                name = match.group(1)
                before = [d for d in declared.get(path, {}).get(name or "", []) if d[0] <= number]
                if not before:
                    problems.append("%s:%d: set_state on something whose type cannot be told "
                                    "(give it a declared name)" % (rel, number))
                    continue
                decl_line, typ = max(before)
                is_record = RECORD.search(typ) or (
                    "auto" in typ and READS_RECORD.search(lines[decl_line - 1]))
                if is_record:
                    problems.append("%s:%d: writes a job's or task's state (%s %s): only "
                                    "JobTable does (SetState, SetTaskState)" %
                                    (rel, number, typ, name))
    if calls == 0:
        problems.append("no set_state call found in master/ at all: is the test reading it?")
    for problem in problems:
        print(problem)
    print("state writers: %d calls read, %d problems" % (calls, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
