#!/usr/bin/env bash
# Runs a node script of tests/tokenizer with the locked tokenizer installed:
#   run.sh --install                 only install (npm ci) when node_modules is missing or stale
#   run.sh SCRIPT.mjs [ARGS...]      install if needed, then node tests/tokenizer/SCRIPT.mjs ARGS
# e.g. `echo hello | run.sh count.mjs`. NODE and NPM may name the programs to use. Paths in ARGS
# are relative to the caller's directory.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
node=${NODE:-node}
npm=${NPM:-npm}
if [ $# -lt 1 ]; then
  echo "usage: $0 --install | SCRIPT.mjs [ARGS...]" >&2
  exit 2
fi

install_if_stale() {
  local stamp=node_modules/.tokenizer-installed
  if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
    echo "==> npm ci (tests/tokenizer)" >&2
    "$npm" ci --no-audit --no-fund >&2
    touch "$stamp"
  fi
}
(
  cd "$here"
  # Several build trees may run these tests at once; they share this node_modules.
  if command -v flock >/dev/null 2>&1; then
    exec 9>.install.lock
    flock 9
  fi
  install_if_stale
)

[ "$1" = "--install" ] && exit 0
script=$1
shift
[ -f "$script" ] || script="$here/$script"
exec "$node" "$script" "$@"
