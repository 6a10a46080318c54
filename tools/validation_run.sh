#!/usr/bin/env bash
# One run of the README's `dejavu validate --summary` command, which also writes the residuals
# (`--residuals`), for the two checks that need it (tests/CMakeLists.txt): that
# strategies/validation/residuals.csv is what `make validate` writes today, and that the
# README's summary block is current (tools/docs.sh, given DEJAVU_DOCS_OUTPUTS=DIR, prints
# DIR/output.txt for the command in DIR/args.txt rather than running it again).
#   tools/validation_run.sh DEJAVU DIR
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "$1")
dir=$2
mkdir -p "$dir"
rm -f "$dir/args.txt" "$dir/output.txt" "$dir/residuals.csv"
args=$(sed -n 's/^<!-- \$ dejavu \(validate --summary .*\) -->$/\1/p' README.md)
[ -n "$args" ] || { echo "README.md: no <!-- \$ dejavu validate --summary ... --> block" >&2; exit 2; }
export LC_ALL=C
# shellcheck disable=SC2086
"$bin" $args --jobs 2 --residuals "$dir/residuals.csv" > "$dir/output.txt" 2>&1
printf '%s\n' "$args" > "$dir/args.txt"
