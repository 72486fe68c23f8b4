#!/usr/bin/python3
"""The folders show the layers: no folder includes a folder that includes it back, and no
product file grows past the size at which a second module hides in it.

- Folder graph: an edge A -> B when a file directly in folder A includes a header of folder B
  (`#include "B/x.h"`). Any cycle (A -> ... -> A) is a failure, named with its path.
- Size: no .cc or .h outside tests/, bench/ and fuzz/ over MAX_LINES lines.
- docs/benchmarks.md holds current figures, not a diary: no cell of its tables over
  MAX_BENCH_CELL characters (how figures moved belongs to git and the closing notes).
usage: layers_test.py SOURCE_DIR
"""
import os
import re
import sys

PRODUCT = ["cli", "client", "common", "examples", "master", "nodeagent", "proto", "sim"]
MAX_LINES = 600
MAX_BENCH_CELL = 400
INCLUDE = re.compile(r'^#include "([a-z_/]+)/[a-z_0-9]+\.(?:h|pb\.h|grpc\.pb\.h)"', re.M)


def source_files(root):
    for top in PRODUCT:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith((".cc", ".h")):
                    yield os.path.join(folder, name)


def folder_graph(root):
    graph = {}
    for path in source_files(root):
        folder = os.path.relpath(os.path.dirname(path), root)
        with open(path) as f:
            text = f.read()
        for included in INCLUDE.findall(text):
            if included != folder and os.path.isdir(os.path.join(root, included)):
                graph.setdefault(folder, set()).add(included)
    return graph


def cycles(graph):
    found = []
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def main(root):
    problems = []
    for cycle in cycles(folder_graph(root)):
        problems.append("include loop between folders: " + " -> ".join(cycle))
    for path in source_files(root):
        with open(path) as f:
            lines = sum(1 for _ in f)
        if lines > MAX_LINES:
            problems.append("%s has %d lines (at most %d: split what hides in it)" %
                            (os.path.relpath(path, root), lines, MAX_LINES))
    with open(os.path.join(root, "docs", "benchmarks.md")) as f:
        for number, line in enumerate(f, 1):
            if not line.startswith("|"):
                continue
            for cell in line.strip().strip("|").split(" | "):
                if len(cell) > MAX_BENCH_CELL:
                    problems.append("docs/benchmarks.md:%d has a cell of %d characters (at most "
                                    "%d: the current figure, its commit and date; the history "
                                    "goes to git)" % (number, len(cell), MAX_BENCH_CELL))
    for problem in problems:
        print(problem)
    print("layers: %d problems" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
