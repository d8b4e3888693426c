#!/usr/bin/env bash
# Runs the MCP SDK interoperability test against a ct binary: run.sh /path/to/ct
# Installs the locked SDK (npm ci) into tests/interop/node_modules when it is missing or older
# than package-lock.json, then runs interop.mjs. NODE and NPM may name the programs to use.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 /path/to/ct" >&2
  exit 2
fi
ct=$(realpath "$1")
node=${NODE:-node}
npm=${NPM:-npm}
cd "$(dirname "${BASH_SOURCE[0]}")"

stamp=node_modules/.interop-installed
install_if_stale() {
  if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
    echo "==> npm ci (tests/interop)" >&2
    "$npm" ci --no-audit --no-fund >&2
    touch "$stamp"
  fi
}
# Several build trees may run this test at once; they share this node_modules.
if command -v flock >/dev/null 2>&1; then
  exec 9>.install.lock
  flock 9
  install_if_stale
  exec 9>&-
else
  install_if_stale
fi

exec "$node" interop.mjs --ct "$ct"
