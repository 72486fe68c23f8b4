#!/usr/bin/env bash
# Fails (and names the files) if any C++ file of the tree differs from the committed
# .clang-format. Fix with: git ls-files '*.cc' '*.h' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h')
else
  mapfile -t files < <(find . -path './build*' -prune -o \( -name '*.cc' -o -name '*.h' \) -print)
fi
echo "format: clang-format --dry-run -Werror over ${#files[@]} files"
clang-format --dry-run -Werror "${files[@]}"
echo "format: every file follows .clang-format"
