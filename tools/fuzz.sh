#!/usr/bin/env bash
# Runs every libFuzzer target (make fuzz builds them into build-fuzz/) for SECONDS each,
# seeded with the checked-in corpus; new inputs that reach new code are kept in a scratch
# corpus, findings (crash-*, leak-*, timeout-*) land in build-fuzz/findings/. Prints
# executions and findings per target. Further arguments name the targets to run (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=${*:-platform workload plan faults csv chakra text sweep}
out=build-fuzz/findings
mkdir -p "$out"
for target in $targets; do
  work=$(mktemp -d)
  cp tests/fuzz/corpus/$target/* "$work"/
  log=$out/$target.log
  build-fuzz/tests/fuzz/fuzz_$target "$work" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
    -artifact_prefix="$out/$target-" >"$log" 2>&1 || true
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  [ -z "$execs" ] && execs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
  findings=$(ls "$out" | grep -c "^$target-" || true)
  echo "$target: ${execs:-0} executions, $findings findings"
  rm -rf "$work"
done
