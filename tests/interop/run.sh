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

source ../npm_locked.sh

exec "$node" "$script" --ct "$ct"
