#!/usr/bin/env bash
# Installs what is missing, builds, and walks a short task workflow through `ct` in a throw-away
# project (a temporary directory, removed afterwards).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CT_BUILD_TESTS=OFF BUILD_TARGETS="ct"  # the walk-through needs ct alone
source scripts/setup.sh
ct="$PWD/$BUILD_DIR/ct"
project=$(mktemp -d)
trap 'rm -rf "$project"' EXIT
cd "$project"
run() { echo; echo "\$ ct $*"; "$ct" "$@" || true; }
run init
run add "Ship the first release" --type epic --priority high
run add "Write the README" --parent T001 --labels docs
run add "Set up CI" --parent T001 --priority critical
run add "Tag v1.0" --parent T001 --depends T002,T003
run next --count 3 --explain
run start T003
run current
run complete T003 --notes "pipeline green"
run complete T002
run next
run tree
run find readme
run show T004
run show T004 --json
run history T003
echo
echo "Demo project was $project (removed). Run 'ct --help' to explore."
