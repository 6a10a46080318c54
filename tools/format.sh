#!/usr/bin/env bash
# Formats every C++ file the project holds with .clang-format (`make format`), or with
# --check lists the files that differ and exits 1 (`make format-check`, and a ctest test).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format.sh: needs clang-format (tools/install-deps.sh installs it)"; exit 1; }
# Tracked files and new ones not yet added (a new file is formatted before its first commit).
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h' 2>/dev/null | grep -v '^tests/fixtures/' || find sim workloads platforms strategies tools tests bench -name '*.cc' -o -name '*.h')
if [ "${1:-}" = "--check" ]; then
  bad=$(clang-format --dry-run "${files[@]}" 2>&1 | grep -oE '^[^:]+:[0-9]+:[0-9]+: (warning|error)' | cut -d: -f1 | sort -u || true)
  [ -z "$bad" ] && exit 0
  for f in $bad; do echo "not formatted: $f (make format)"; done
  exit 1
fi
clang-format -i "${files[@]}"
