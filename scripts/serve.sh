#!/usr/bin/env bash
# Installs what is missing, builds, and serves MCP over HTTP on 127.0.0.1 for the project in the
# directory you run it from (initialising .cleo/ there if needed). Extra arguments go to
# `ct serve` (e.g. --port 9000, --token SECRET). Ctrl-C stops it.
set -euo pipefail
caller=$PWD
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
ct="$PWD/$BUILD_DIR/ct"
cd "$caller"
exec "$ct" serve "$@"
