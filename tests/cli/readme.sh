#!/usr/bin/env bash
# The README's walkthrough (the sh block under "## Using `ct`"), run exactly as written, top to
# bottom, in one shell in a fresh git work tree: every `ct` command in it must succeed — exit 0,
# or a success note 100–103 — unless its line says `# exit N`, and then exit exactly N. So the
# walkthrough cannot drift from what ct does (issue 17).
#   readme.sh CT README.md
set -u
if [ $# -ne 2 ]; then
  echo "usage: readme.sh CT README.md" >&2
  exit 2
fi
ct_bin=$(realpath "$1")
readme=$(realpath "$2")

sandbox=$(mktemp -d "${TMPDIR:-/tmp}/ct-readme-XXXXXX")
trap 'rm -rf "$sandbox"' EXIT
mkdir -p "$sandbox/project" "$sandbox/home"

# "line number<TAB>text" for each line of the block.
block=$(awk '/^## Using `ct`/ { section = 1; next }
             section && /^```sh/ { inside = 1; next }
             inside && /^```/ { exit }
             inside { print NR "\t" $0 }' "$readme")
if [ -z "$block" ]; then
  echo "readme.sh: no sh block under '## Using \`ct\`' in $readme" >&2
  exit 1
fi

# The script: before each line, its number and the exit it may end with; `ct` is a function that
# runs the binary and records a wrong exit status (and passes the real one on, so `&&` behaves).
script="$sandbox/walkthrough.sh"
{
  echo 'ct() {'
  echo '  "$CT_BIN" "$@"; local rc=$?'
  echo '  if { [ "$EXPECT" -ne 0 ] && [ $rc -ne "$EXPECT" ]; } || { [ "$EXPECT" -eq 0 ] && [ $rc -ne 0 ] && { [ $rc -lt 100 ] || [ $rc -gt 103 ]; }; }; then'
  echo '    echo "$README_NAME:$LINE: ct $* exited $rc; expected $([ "$EXPECT" -eq 0 ] && echo "0 or a note (100-103)" || echo "$EXPECT")" >> "$FAILS"'
  echo '  fi'
  echo '  return $rc'
  echo '}'
  commands=0
  while IFS=$'\t' read -r number line; do
    trimmed="${line#"${line%%[![:space:]]*}"}"
    [ -z "$trimmed" ] && continue
    [ "${trimmed:0:1}" = "#" ] && continue  # a comment continuing the line above
    expect=0
    if [[ $line =~ \#\ exit\ ([0-9]+) ]]; then expect=${BASH_REMATCH[1]}; fi
    printf 'LINE=%d; EXPECT=%d; printf "\\n$ %%s\\n" %q\n%s\n' "$number" "$expect" "$trimmed" "$line"
    commands=$((commands + 1))
  done <<< "$block"
  echo "# $commands lines"
} > "$script"

cd "$sandbox/project" || exit 1
export HOME="$sandbox/home" CLEO_TEST_MODE=1 NO_COLOR=1 CT_BIN="$ct_bin" FAILS="$sandbox/failures" README_NAME="${readme##*/}"
export GIT_AUTHOR_NAME=readme GIT_AUTHOR_EMAIL=readme@example.com GIT_COMMITTER_NAME=readme GIT_COMMITTER_EMAIL=readme@example.com
unset CLEO_ROOT CLEO_SESSION CLEO_READ_ONLY
# The README's commands are a person's at a terminal; here, with no terminal, a person key speaks
# for them (tests/support/person_key_fixture.h), listed in the sandbox's home.
mkdir -p "$HOME/.config/cleo" && (umask 077 && printf '%s\n' \
  '{"keys":[{"name":"tests","sha256":"b2f09f61b002f94cd493bbe59ddd167c2dcc4271f14e3db413896bcec30121b5","createdAt":"2026-01-01T00:00:00Z"}]}' \
  > "$HOME/.config/cleo/person-keys.json")
export CT_PERSON_KEY=ctpk_7e577e577e577e577e577e577e577e577e577e577e577e577e577e577e577e57
git init -q . && git commit -q --allow-empty -m "a project" || { echo "readme.sh: git init failed" >&2; exit 1; }
: > "$FAILS"
bash "$script" > "$sandbox/output" 2>&1
if [ -s "$FAILS" ]; then
  cat "$sandbox/output"
  echo
  cat "$FAILS"
  exit 1
fi
echo "ok: $(tail -1 "$script" | cut -c3-) of the README's walkthrough ran as written"
