#!/usr/bin/env bash
# Installs what is missing, builds, and serves MCP over HTTP on 127.0.0.1 for the project in the
# directory you run it from (initialising .cleo/ there if needed). Extra arguments go to
# `ct serve` (e.g. --port 9000, --token SECRET). Ctrl-C stops it.
set -euo pipefail
caller=$PWD
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Serving needs the programs only: ct, ct-serve (what `ct serve` runs) and the PostgreSQL module,
# none of the tests and their packages. scripts/test.sh later builds the rest in the same directory.
export CT_BUILD_TESTS=OFF BUILD_TARGETS="ct ct-serve ct_postgres_module"
source scripts/setup.sh
ct="$PWD/$BUILD_DIR/ct"
cd "$caller"
exec "$ct" serve "$@"
