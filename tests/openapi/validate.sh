#!/usr/bin/env bash
# Validates the HTTP API's OpenAPI 3.1 document against the OpenAPI Initiative's schemas with
# @seriousme/openapi-schema-validator (npm; the version package-lock.json pins), installed into
# WORK_DIR on first use.
# usage: validate.sh OPENAPI_DUMP_BINARY WORK_DIR
set -euo pipefail
DUMP="$1"
WORK="$2"
HERE="$(cd "$(dirname "$0")" && pwd)"
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "openapi: $tool is missing (scripts/deps.sh installs it)"; exit 1; }
done
mkdir -p "$WORK"
if [ ! -x "$WORK/node_modules/.bin/validate-api" ] || ! cmp -s "$HERE/package-lock.json" "$WORK/package-lock.json"; then
  cp "$HERE/package.json" "$HERE/package-lock.json" "$WORK/"
  (cd "$WORK" && npm ci --no-audit --no-fund --loglevel=error)
fi
"$DUMP" > "$WORK/openapi.json"
# The validator prints the errors it finds and exits non-zero on any.
out="$("$WORK/node_modules/.bin/validate-api" "$WORK/openapi.json" 2>&1)" || { echo "$out"; exit 1; }
echo "$out"
grep -q '"valid": true' <<<"$out" || { echo "openapi: the validator did not say valid"; exit 1; }
echo "openapi: $WORK/openapi.json is a valid OpenAPI 3.1 document"
