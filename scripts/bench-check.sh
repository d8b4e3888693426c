#!/usr/bin/env bash
# The performance regression gate (issue 16): instructions per call of show, find (also among
# pending tasks only, and of a word in a quarter of the tasks), list, next, add, update, start (with
# its reservations) and plans (begin; begin+apply+diff+commit) on a 2,000-task store, and of whole `ct`
# processes (start-version: `ct --version`; start-show: `ct show T001` on that store, the dynamic
# loader and static initialisation included, issue 32; start-add: `ct add` after it, which commits
# durably and leaves its frames in the WAL; start-show-wal: `ct show T001` again, which rebuilds
# the WAL's index from them, issue 56), counted by callgrind and compared with the
# committed baseline (bench/baseline-instructions.tsv). Instruction counts, not
# times: this machine is noisy and `perf stat` cannot count here, while callgrind gives the same
# number run after run.
#
#   scripts/bench-check.sh            build, measure, compare; exit 1 when a call costs > 25 % more
#   scripts/bench-check.sh --update   measure and write the baseline (commit it with the change
#                                     that moved it, and say why in the commit)
#
# Not part of the default test suite (it takes a minute or two). Run it before saying a
# performance-sensitive change is done. BUILD_DIR (default build/bench-check) holds its Release
# build; THRESHOLD (default 25) is the allowed growth in percent; COUNT (default 50) the calls per
# measurement.
set -euo pipefail
cd "$(dirname "$0")/.."

update=0
case "${1:-}" in
  --update) update=1 ;;
  "") ;;
  -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "bench-check: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

build_dir=${BUILD_DIR:-build/bench-check}
threshold=${THRESHOLD:-25}
count=${COUNT:-50}
baseline=bench/baseline-instructions.tsv
# OP-session: the same calls in a session holding a claim, as an agent makes them (its lease renewed);
# start-session: tasks.start of ready tasks in turn, each claim reserving two paths.
# find-common: a word in a quarter of the tasks (issue 56: search that does not follow the matches);
# plan-begin: plan.begin on the largest epic; plan: begin, apply of 5 adds, diff and commit there.
# memory-find: memory.find of two words among 500 entries (issue 56: the entries' total kept).
ops=(show find find-status find-common list next add update show-session update-session start-session plan-begin plan
     memory-find)
processes=(start-version start-show start-add start-show-wal)

if ! command -v valgrind >/dev/null; then
  echo "bench-check: installing valgrind" >&2
  apt-get update -qq && apt-get install -y -qq valgrind >/dev/null
fi

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCT_BUILD_BENCH=ON >/dev/null
cmake --build "$build_dir" --target ct_bench_ops ct >&2
tool=$build_dir/bench/ct_bench_ops

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tool" build "$work/store" --tasks 2000 2>/dev/null

# Instructions of one whole run of `ct_bench_ops run OP --count N`.
instructions() {
  local args=("$1")
  [[ $1 == *-session ]] && args=("${1%-session}" --session)
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$tool" run "$work/store" "${args[@]}" \
    --count "$2" >/dev/null 2>&1
  awk '/^summary:/ { print $2 }' "$work/callgrind.out"
}

declare -A measured
for op in "${ops[@]}"; do
  base=$(instructions "$op" 0)
  full=$(instructions "$op" "$count")
  measured[$op]=$(( (full - base) / count ))
  echo "bench-check: $op ${measured[$op]} instructions per call" >&2
done

# Whole processes: what every shell-driven call pays before and around its work.
process_instructions() {
  HOME=$work valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$@" >/dev/null 2>&1
  awk '/^summary:/ { print $2 }' "$work/callgrind.out"
}
measured[start-version]=$(process_instructions "$build_dir/ct" --version)
measured[start-show]=$(process_instructions "$build_dir/ct" --project "$work/store" show T001)
measured[start-add]=$(process_instructions "$build_dir/ct" --project "$work/store" add "A task the gate adds")
measured[start-show-wal]=$(process_instructions "$build_dir/ct" --project "$work/store" show T001)
for name in "${processes[@]}"; do echo "bench-check: $name ${measured[$name]} instructions per process" >&2; done
ops+=("${processes[@]}")

if (( update )); then
  {
    echo "# Instructions per call through the router on a 2,000-task store (scripts/bench-check.sh --update)."
    echo "# $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%d), $(c++ --version | head -1)"
    for op in "${ops[@]}"; do printf '%s\t%s\n' "$op" "${measured[$op]}"; done
  } > "$baseline"
  echo "bench-check: wrote $baseline" >&2
  exit 0
fi

[[ -f $baseline ]] || { echo "bench-check: no $baseline; run scripts/bench-check.sh --update" >&2; exit 2; }
failed=0
printf '| call | baseline | now | change |\n|---|---:|---:|---:|\n'
for op in "${ops[@]}"; do
  was=$(awk -v op="$op" '$1 == op { print $2 }' "$baseline")
  now=${measured[$op]}
  if [[ -z $was ]]; then
    printf '| %s | (none) | %s | new |\n' "$op" "$now"
    continue
  fi
  change=$(( (now - was) * 100 / was ))
  verdict=""
  if (( change > threshold )); then verdict=" **slower**"; failed=1; fi
  printf '| %s | %s | %s | %+d %%%s |\n' "$op" "$was" "$now" "$change" "$verdict"
done
if (( failed )); then
  echo "bench-check: a call costs more than ${threshold} % above the baseline" >&2
  exit 1
fi
echo "bench-check: within ${threshold} % of the baseline" >&2
