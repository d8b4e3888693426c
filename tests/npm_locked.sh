# Sourced by the Node test runners (tests/interop/run.sh, tests/browser/run.sh) from their own
# directory, with `npm` and `node` set: installs the locked packages (npm ci) when node_modules is
# missing or older than package-lock.json — under flock, since several build trees may run the
# tests at once and share node_modules — then points `node` at the Node the lock pins
# (node_modules/.bin/node, the npm package node-linux-<arch>) when there is one.
npm_ci_locked() {
  local stamp=node_modules/.installed
  if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
    echo "==> npm ci ($(basename "$PWD"))" >&2
    "$npm" ci --no-audit --no-fund >&2
    touch "$stamp"
  fi
}
if command -v flock >/dev/null 2>&1; then
  exec 9>.install.lock
  flock 9
  npm_ci_locked
  exec 9>&-
else
  npm_ci_locked
fi
if [ -x node_modules/.bin/node ]; then
  node=node_modules/.bin/node
fi
