#!/usr/bin/env bash
# Runs an MCP interoperability test against a ct binary:
#   run.sh /path/to/ct                    the official SDK clients (interop.mjs)
#   run.sh /path/to/ct conformance.mjs    the official conformance suite (conformance.mjs)
# Installs the locked packages (npm ci) into tests/interop/node_modules when they are missing or
# older than package-lock.json, then runs the script with the Node the lock pins (the npm package
# node-linux-<arch>, Node 22: the conformance suite needs 22 or later, and Debian ships 18), or,
# on a platform without that package, with NODE. NODE and NPM may name the programs to use.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 /path/to/ct [interop.mjs|conformance.mjs]" >&2
  exit 2
fi
ct=$(realpath "$1")
script=${2:-interop.mjs}
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
# Several build trees may run these tests at once; they share this node_modules.
if command -v flock >/dev/null 2>&1; then
  exec 9>.install.lock
  flock 9
  install_if_stale
  exec 9>&-
else
  install_if_stale
fi

if [ -x node_modules/.bin/node ]; then
  node=node_modules/.bin/node
fi
exec "$node" "$script" --ct "$ct"
