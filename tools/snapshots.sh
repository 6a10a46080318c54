#!/usr/bin/env bash
# Regenerates the regression snapshots under tests/snapshots/ (what `dejavu` writes for
# every case in tests/snapshots/cases.txt). They guard refactors, not correctness: run
# this (`make snapshots`) only when a change of output is intended, and review the diff.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/tools/dejavu}")
dir=tests/snapshots
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  name=${line%%:*}
  args=${line#*: }
  tmp=$(mktemp -d)
  args=${args//\{out\}/$dir/$name}
  args=${args//\{tmp\}/$tmp/run}
  while [ -n "$args" ]; do
    one=${args%% ;; *}
    [ "$one" = "$args" ] && args="" || args=${args#* ;; }
    # shellcheck disable=SC2086
    "$bin" $one >/dev/null
  done
  rm -rf "$tmp"
  # the wall clock is not a result (the test skips it): keep it out of the diffs
  sed -i -E 's/"wall_s": [-0-9.e+]+/"wall_s": 0/' "$dir/$name"
  echo "$dir/$name"
done < "$dir/cases.txt"
