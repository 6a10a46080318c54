#!/usr/bin/env bash
# Numbers in the docs come from commands the docs name. A marker line
#     <!-- $ dejavu <arguments> -->
# followed by a ```text block holds that command's output, run from the repository root.
# `tools/docs.sh [dejavu]` rewrites every such block (`make docs`); with --check it only
# says which blocks are stale and exits 1 (a test runs it so). With DEJAVU_DOCS_OUTPUTS=DIR
# set, the command DIR/args.txt names is not run again: DIR/output.txt is its output
# (tools/validation_run.sh writes both, for the slowest command, `validate --summary`).
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[ "${1:-}" = "--check" ] && { check=1; shift; }
bin=$(realpath "${1:-build/tools/dejavu}")
stale=0
for doc in README.md docs/*.md; do
  grep -q '^<!-- \$ dejavu ' "$doc" || continue
  out=$(mktemp)
  in_block=0
  while IFS= read -r line || [ -n "$line" ]; do
    if [ $in_block -eq 2 ]; then           # skipping the old output
      [ "$line" = '```' ] && in_block=0 && echo '```' >> "$out"
      continue
    fi
    echo "$line" >> "$out"
    if [[ $in_block -eq 1 ]]; then
      [ "$line" = '```text' ] || { echo "$doc: a \`\`\`text block must follow the command marker" >&2; exit 2; }
      cached=${DEJAVU_DOCS_OUTPUTS:+$DEJAVU_DOCS_OUTPUTS/args.txt}
      if [ -n "$cached" ] && [ -f "$cached" ] && [ "$(cat "$cached")" = "$args" ]; then
        cat "$DEJAVU_DOCS_OUTPUTS/output.txt" >> "$out"
      else
        # shellcheck disable=SC2086
        (eval "\"$bin\" $args") >> "$out" 2>&1 || { echo "$doc: failed: dejavu $args" >&2; exit 2; }
      fi
      in_block=2
    elif [[ "$line" =~ ^'<!-- $ dejavu '(.*)' -->'$ ]]; then
      args=${BASH_REMATCH[1]}
      in_block=1
    fi
  done < "$doc"
  if ! cmp -s "$out" "$doc"; then
    if [ $check -eq 1 ]; then
      echo "$doc: output blocks are stale (run make docs):"; diff "$doc" "$out" | head -20 || true
      stale=1
    else
      cp "$out" "$doc"; echo "updated $doc"
    fi
  fi
  rm -f "$out"
done
exit $stale
