#!/usr/bin/env bash
# Runs the fake GitHub's own tests (node's built-in test runner) after installing the locked
# packages (npm ci through ../npm_locked.sh) when node_modules is missing or older than the lock:
#   run.sh [test/FILE.test.mjs...]
#   run.sh --install              only install (the ctest fixture `github` other tests require)
# Exits 77 (skipped) when an install is needed and npm cannot reach the registry. NODE and NPM may
# name the programs to use.
set -euo pipefail
node=${NODE:-node}
npm=${NPM:-npm}
cd "$(dirname "${BASH_SOURCE[0]}")"
if [ ! -f node_modules/.installed ] && ! "$npm" ping >/dev/null 2>&1; then
  echo "the npm registry is out of reach and tests/github/node_modules is not installed: skipped" >&2
  exit 77
fi
source ../npm_locked.sh
if [ "${1:-}" = "--install" ]; then
  "$node" -e "import('./openapi.mjs').then((m) => m.loadSpec()).then((s) => console.log('api.github.com description', s.version))"
  exit 0
fi
if [ $# -eq 0 ]; then
  set -- test/*.test.mjs
fi
exec "$node" --test "$@"
