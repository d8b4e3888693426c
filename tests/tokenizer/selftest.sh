#!/usr/bin/env bash
# The counter counts o200k_base: strings whose counts are known (and differ in cl100k_base, the
# previous encoding) give those counts, in each of count.mjs's modes.
set -uo pipefail
run=${CT_TOKENIZER_RUN:-$(dirname "${BASH_SOURCE[0]}")/run.sh}
passed=0 failed=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then
    echo "ok   $1"
    passed=$((passed + 1))
  else
    echo "FAIL $1: expected $2, got $3"
    failed=$((failed + 1))
  fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check "hello world" 2 "$(printf 'hello world' | bash "$run" count.mjs)"
check "empty input" 0 "$(printf '' | bash "$run" count.mjs)"
check "Russian (cl100k: 11)" 6 "$(printf 'Приветствую всех участников' | bash "$run" count.mjs)"
check "Japanese (cl100k: 4)" 2 "$(printf 'こんにちは世界' | bash "$run" count.mjs)"
check "special-token text counts as text" 7 "$(printf '<|endoftext|>' | bash "$run" count.mjs)"
printf 'Hello, world!' >"$tmp/a.txt"
printf 'こんにちは世界' >"$tmp/b.txt"
check "one count per file" "4 2" "$(bash "$run" count.mjs "$tmp/a.txt" "$tmp/b.txt" | tr '\n' ' ' | sed 's/ $//')"
check "--json names each file" "{\"$tmp/a.txt\":4,\"$tmp/b.txt\":2}" "$(bash "$run" count.mjs --json "$tmp/a.txt" "$tmp/b.txt")"
check "--json --bytes" "{\"$tmp/b.txt\":{\"tokens\":2,\"bytes\":21}}" "$(bash "$run" count.mjs --json --bytes "$tmp/b.txt")"
check "--lines counts each line" "[2,4]" "$(printf 'hello world\nHello, world!\n' | bash "$run" count.mjs --lines)"
bash "$run" count.mjs --nope </dev/null 2>/dev/null
check "unknown option exits 2" 2 "$?"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
