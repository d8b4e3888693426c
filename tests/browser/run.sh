#!/usr/bin/env bash
# Runs the web dashboard's browser tests against a ct binary (ct-serve is taken from beside it):
#   run.sh /path/to/ct [artifacts-dir]        (default artifacts dir: tests/browser/artifacts)
# Installs the locked packages (npm ci) into tests/browser/node_modules when they are missing or
# older than package-lock.json, then runs dashboard.test.mjs with the Node the lock pins (the npm
# package node-linux-<arch>, Node 22: playwright-core needs 20 or later, and Debian ships 18), or,
# on a platform without that package, with NODE. The browser is Debian's /usr/bin/chromium; without
# it the tests exit 77 (skipped). NODE and NPM may name the programs to use.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 /path/to/ct [artifacts-dir]" >&2
  exit 2
fi
ct=$(realpath "$1")
artifacts=$(realpath -m "${2:-$(dirname "${BASH_SOURCE[0]}")/artifacts}")
node=${NODE:-node}
npm=${NPM:-npm}
cd "$(dirname "${BASH_SOURCE[0]}")"

if [ ! -x /usr/bin/chromium ]; then
  echo "SKIP dashboard browser tests: /usr/bin/chromium is missing (apt-get install chromium)"
  exit 77
fi

source ../npm_locked.sh

exec "$node" dashboard.test.mjs --ct "$ct" --artifacts "$artifacts"
