#!/usr/bin/env bash
# The manual pages in DIR format without a single warning (groff -ww, as man renders them) and
# their NAME lines parse (lexgrog: what mandb indexes for whatis and apropos). Skipped (exit 77)
# where groff or lexgrog (man-db) is not installed.
#   man_lint.sh DIR
set -uo pipefail
dir=${1:?usage: man_lint.sh DIR}
for program in groff lexgrog; do
  command -v "$program" >/dev/null || { echo "man_lint: $program is not installed" >&2; exit 77; }
done
status=0
pages=0
for page in "$dir"/*.1; do
  pages=$((pages + 1))
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  if [ -n "$warnings" ]; then
    printf '%s: groff warns:\n%s\n' "$page" "$warnings" >&2
    status=1
  fi
  if ! lexgrog "$page" >/dev/null 2>&1; then
    echo "$page: lexgrog cannot read its NAME section" >&2
    status=1
  fi
done
[ "$pages" -gt 0 ] || { echo "man_lint: no pages in $dir" >&2; exit 1; }
exit $status
