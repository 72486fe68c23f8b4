#!/usr/bin/python3
"""The folders show the layers: no folder includes a folder that includes it back, and no
product file grows past the size at which a second module hides in it.

- Folder graph: an edge A -> B when a file directly in folder A includes a header of folder B
  (`#include "B/x.h"`). Any cycle (A -> ... -> A) is a failure, named with its path.
- Module graph: a module is a header with its .cc (x.h and x.cc); an edge A -> B when a file of
  module A includes B's header. Modules that include each other, directly or round a loop, are
  one module cut in two: a failure, named with the modules of the loop.
- Size: no .cc or .h outside tests/ and fuzz/ over MAX_LINES lines.
- docs/benchmarks.md holds current figures, not a diary: no cell of its tables over
  MAX_BENCH_CELL characters (how figures moved belongs to git and the closing notes).
usage: layers_test.py SOURCE_DIR
"""
import os
import re
import sys

PRODUCT = ["bench", "cli", "client", "common", "drivers", "examples", "master", "nodeagent", "proto",
           "sim"]
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


def module_graph(root):
    header = re.compile(r'^#include "([a-z_0-9/]+)\.h"', re.M)
    graph = {}
    for path in source_files(root):
        module = os.path.relpath(path, root).rsplit(".", 1)[0]
        with open(path) as f:
            text = f.read()
        for included in header.findall(text):
            if included != module and os.path.exists(os.path.join(root, included + ".h")):
                graph.setdefault(module, set()).add(included)
    return graph


def loops(graph):
    """The strongly connected parts of more than one node (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


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
    for part in loops(module_graph(root)):
        problems.append("modules that include each other: " + ", ".join(part))
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
