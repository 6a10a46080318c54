#!/usr/bin/env bash
# Lists library functions longer than 80 lines (STYLE.md: about 80 at most), longest
# first; exits 1 when there is one. `make long-functions`; needs Universal Ctags.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-80}
command -v ctags >/dev/null || { echo "long_functions.sh: needs ctags (Universal Ctags; tools/install-deps.sh installs it)"; exit 1; }
ctags --output-format=json --c++-kinds=f --fields=+ne -R sim workloads platforms strategies tools |
  python3 -c '
import json, sys
limit = int(sys.argv[1])
long = []
for line in sys.stdin:
    try: d = json.loads(line)
    except ValueError: continue
    if "end" in d and d["name"] != "PYBIND11_MODULE":
        n = d["end"] - d["line"] + 1
        if n > limit: long.append((n, d["path"] + ":" + str(d["line"]) + " " + d["name"]))
for n, where in sorted(long, reverse=True): print(f"{n:5d} {where}")
sys.exit(1 if long else 0)' "$limit"
