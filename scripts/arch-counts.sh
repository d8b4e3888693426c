#!/usr/bin/env bash
# The counts docs/architecture.md §10 records, for the tree at DIR (default: this checkout):
#   scripts/arch-counts.sh [DIR]
# Production code is everything under the layer folders (tests, bench and tools are not).
# Function lengths come from universal-ctags (Debian's universal-ctags package): the lines from a
# function's first to its last, lambdas counted in the function that holds them.
set -euo pipefail

dir=${1:-$(dirname "$0")/..}
cd "$dir"
layers=(cli core engines domains capability disclosure gateway programs)
command -v ctags >/dev/null || { echo "needs universal-ctags: apt-get install -y universal-ctags" >&2; exit 3; }

lengths() {
  ctags -R --languages=C++ --kinds-C++=f --fields=+ne -x --_xformat='%{line} %{end} %N %F' "${layers[@]}" 2>/dev/null |
    awk '$2 ~ /^[0-9]+$/ {print $2 - $1 + 1, $3, $4}' | sort -rn
}
count() { grep -rnE "$@" 2>/dev/null | wc -l; }

backend=$(cat engines/store/sqlite/*.cpp engines/store/sqlite/*.h engines/store/postgres/*.cpp engines/store/postgres/*.h | wc -l)
echo "store backends (sqlite/ + postgres/ .cpp and .h lines): $backend"
echo "MCP calls written below the edges (cleo_query {, cleo_mutate {): $(count 'cleo_(query|mutate) \{' core engines domains capability disclosure)"
echo "MCP text recognised by prefix in cli/: $(count 'starts_with\((tool_name|"cleo_)' cli)"
# Reading a param by its name: the accessors of Params, outside the binder and the router's own
# stages — among them the approval gate, which reads the `id` of whichever operation it guards — and
# the plug-in engine's handler, which hands every param to its program as JSON.
framework='domains/(params\.(h|cpp)|bind\.h|projection\.cpp|router\.cpp|pipeline\.cpp|batch\.cpp|registry\.cpp|approval(_gate)?\.cpp)|capability/plugins\.cpp'
reads=$(grep -rnE 'params\.(str|opt_str|integer|opt_integer|flag|opt_flag|strings|value|has|time)\("' \
          domains disclosure capability gateway cli | grep -vcE "^$framework:" || true)
echo "params read by name outside the binder and the pipeline: $reads"
takers=$(grep -rnE 'const Params& *[a-z_]*\)' domains disclosure capability | grep -vcE "^$framework:|^domains/(registry|approval|projection)\.h:" || true)
echo "functions outside the binder and the pipeline that take Params: $takers"
echo "Reply{…, {}, {}, {}}: $(count 'Reply\{[^;]*\{\}, \{\}, \{\}' "${layers[@]}")"
run=$(lengths | awk '$2 == "run" && $3 == "domains/router.cpp" {print $1}' | head -1)
echo "Router::run lines: ${run:-?}"
echo "functions over 120 lines: $(lengths | awk '$1 > 120' | wc -l); over 80: $(lengths | awk '$1 > 80' | wc -l)"
lengths | awk '$1 > 80 {print "  " $0}'
big=$(find "${layers[@]}" \( -name '*.cpp' -o -name '*.h' \) -exec wc -l {} + | awk '$2 != "total" && $1 > 800 {print "  " $0}')
echo "files over 800 lines: $(printf '%s' "$big" | grep -c . || true)"
[ -n "$big" ] && echo "$big"
exit 0
