#!/usr/bin/python3
"""The docs cannot drift from the files they show or point at.

- A reference page that shows a shipped file (`etc/policy.yaml`, `etc/boards.yaml`) shows it
  exactly: the ```yaml block after "## The shipped file" equals the file.
- Every relative link in README.md and docs/ names a file or folder that exists, and every
  #anchor in a link to a Markdown file names one of its headings (GitHub's anchor rule).
usage: docs_consistency_test.py SOURCE_DIR
"""
import os
import re
import sys

SHIPPED = {
    "docs/reference/policy-file.md": "etc/policy.yaml",
    "docs/reference/boards-file.md": "etc/boards.yaml",
}
LINK = re.compile(r"\]\(([^)\s]+)\)")


def shipped_block(text):
    after = text.split("## The shipped file", 1)
    if len(after) != 2:
        return None
    match = re.search(r"```yaml\n(.*?)```", after[1], re.S)
    return match.group(1) if match else None


def anchors(path):
    found = set()
    in_fence = False
    with open(path) as f:
        for line in f:
            if line.startswith("```"):
                in_fence = not in_fence
            if in_fence or not line.startswith("#"):
                continue
            title = line.lstrip("#").strip().lower()
            title = re.sub(r"[^\w\- ]", "", title)
            found.add(title.replace(" ", "-"))
    return found


def main(root):
    errors = []
    for page, shipped in SHIPPED.items():
        with open(os.path.join(root, page)) as f:
            block = shipped_block(f.read())
        with open(os.path.join(root, shipped)) as f:
            actual = f.read()
        if block is None:
            errors.append("%s: no ```yaml block under '## The shipped file'" % page)
        elif block != actual:
            errors.append("%s: its copy of %s differs from the file; copy the file again" %
                          (page, shipped))
    pages = ["README.md"]
    for folder, _, files in os.walk(os.path.join(root, "docs")):
        pages += [os.path.relpath(os.path.join(folder, f), root) for f in files if f.endswith(".md")]
    for page in sorted(pages):
        with open(os.path.join(root, page)) as f:
            text = f.read()
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:, file:
            path, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(root, os.path.dirname(page), path)) \
                if path else os.path.join(root, page)
            if not os.path.exists(resolved):
                errors.append("%s: the link %s names nothing that exists" % (page, target))
                continue
            if anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                errors.append("%s: the link %s names no heading of %s" %
                              (page, target, os.path.relpath(resolved, root)))
    for error in errors:
        print(error)
    print("docs: %d pages and shipped copies checked, %d problems" % (len(pages) + len(SHIPPED), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
