#!/usr/bin/python3
"""Prints the shell blocks (```sh fences) of one section of a Markdown file, in order.

usage: doc_blocks.py FILE "SECTION HEADING"   (the heading's text, without the #s)
Exits 1, saying so, when the section or its blocks are missing: a guide whose quick start lost
its commands must fail the test, not pass it with nothing run.
"""
import sys


def blocks(path, heading):
    inside_section = False
    level = 0
    in_fence = False  # inside any fenced block (a "#" there is no heading)
    in_block = False  # inside a ```sh block of the section
    found_section = False
    out = []
    with open(path) as f:
        for line in f:
            stripped = line.rstrip("\n")
            if not in_fence and stripped.startswith("#"):
                hashes = len(stripped) - len(stripped.lstrip("#"))
                title = stripped[hashes:].strip()
                if inside_section and hashes <= level:
                    inside_section = False
                if title == heading:
                    inside_section, level, found_section = True, hashes, True
                continue
            if stripped.startswith("```"):
                if in_fence:
                    if in_block:
                        out.append("")
                    in_fence = in_block = False
                else:
                    in_fence = True
                    in_block = inside_section and stripped.strip() == "```sh"
                continue
            if in_block:
                out.append(stripped)
    if not found_section:
        sys.exit("%s: no section '%s'" % (path, heading))
    if not any(line.strip() for line in out):
        sys.exit("%s: section '%s' has no ```sh block" % (path, heading))
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(blocks(sys.argv[1], sys.argv[2]))
