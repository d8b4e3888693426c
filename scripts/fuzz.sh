#!/usr/bin/env bash
# Fuzzes with libFuzzer (targets in tests/fuzz; see tests/fuzz/README.md).
#
#   scripts/fuzz.sh [options] [target|all] [seconds]     fuzz (default: all, 60 s each)
#   scripts/fuzz.sh [options] --regressions [target|all] replay tests/fuzz/regressions/<target>/*
#
# Options:
#   --build-dir DIR  the fuzz build (default build/fuzz)
#   --no-build       use the build as it is (no apt-get, no cmake): what the ctest entries do
#   --merge          after fuzzing, add the new inputs that reach new coverage to
#                    tests/fuzz/corpus/<target> (minimised with -merge=1); without it the
#                    committed corpus never changes
#   --skip-known     skip inputs that hit a known finding (listed in tests/fuzz/README.md, each with
#                    its reproducer in tests/fuzz/regressions/): counted and reported, not a failure,
#                    so the run can look past them for new ones (CT_FUZZ_SKIP_KNOWN=1)
#   --list           print the targets and exit
#
# Installs clang-19, libfuzzer-19-dev and libclang-rt-19-dev (and the build dependencies) when
# missing, configures DIR with clang++-19 and CT_FUZZ=ON (-O1 -g, assertions on, no -Werror),
# builds, then runs each target one after the other on a scratch copy of its committed corpus
# (DIR/fuzz-runs/<target>/corpus) with -max_total_time. Prints per target: executions, exec/s,
# coverage (cov: edges, ft: features), corpus size and findings (crashes, leaks, timeouts, OOMs,
# saved in DIR/fuzz-runs/<target>/artifacts). Exits 1 when any target found anything, 2 on usage
# errors. Extra libFuzzer flags: FUZZ_FLAGS="-use_value_profile=1 …".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD

build_dir=build/fuzz
build=1
merge=0
mode=fuzz
positional=()
while (($#)); do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --build-dir=*) build_dir=${1#*=}; shift ;;
    --no-build) build=0; shift ;;
    --merge) merge=1; shift ;;
    --skip-known) export CT_FUZZ_SKIP_KNOWN=1; shift ;;
    --regressions) mode=regressions; shift ;;
    --list) mode=list; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) positional+=("$1"); shift ;;
  esac
done
which=${positional[0]:-all}
seconds=${positional[1]:-60}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: seconds must be a number, got '$seconds'" >&2; exit 2; }
build_dir=$(realpath -m "$build_dir")

# Targets: tests/fuzz/<name>_fuzz.cpp (http only once gateway/http_exchange.h exists).
all_targets=()
for source in tests/fuzz/*_fuzz.cpp; do
  name=$(basename "$source" _fuzz.cpp)
  [ "$name" = http ] && [ ! -f gateway/http_exchange.h ] && continue
  all_targets+=("$name")
done
if [ "$mode" = list ]; then printf '%s\n' "${all_targets[@]}"; exit 0; fi
if [ "$which" = all ]; then
  targets=("${all_targets[@]}")
else
  [[ " ${all_targets[*]} " == *" $which "* ]] || { echo "fuzz.sh: unknown target '$which' (targets: ${all_targets[*]})" >&2; exit 2; }
  targets=("$which")
fi

if ((build)); then
  packages=(clang-19 libfuzzer-19-dev libclang-rt-19-dev cmake ninja-build pkg-config libsqlite3-dev
    libsimdjson-dev libcli11-dev libcpp-httplib-dev libmicrohttpd-dev nettle-dev libpq-dev libre2-dev)
  missing=()
  for package in "${packages[@]}"; do dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package"); done
  if ((${#missing[@]})); then
    echo "==> installing: ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    # The package lists may be stale or absent (a fresh container): update them when apt does not
    # know a package.
    for package in "${missing[@]}"; do
      if ! apt-cache show "$package" >/dev/null 2>&1; then "${sudo_cmd[@]}" apt-get update -qq; break; fi
    done
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
  fi
  echo "==> building the fuzz targets (clang-19, CT_FUZZ=ON) in $build_dir"
  # -O1 -g without NDEBUG: assertions stay on, and stacks stay readable.
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCT_FUZZ=ON -DCT_BUILD_TESTS=OFF -DCT_BUILD_BENCH=OFF \
    -DCT_WARNINGS_AS_ERRORS=OFF >/dev/null
  cmake --build "$build_dir" -j "$(nproc)"
fi

for name in "${targets[@]}"; do
  [ -x "$build_dir/tests/fuzz/${name}_fuzz" ] || { echo "fuzz.sh: $build_dir/tests/fuzz/${name}_fuzz is missing (build first)" >&2; exit 2; }
done

# Harnesses that need a scratch directory (jsonrpc's project) make it under this one, removed at
# the end even when a crash skipped the harness's own clean-up.
scratch=$(mktemp -d /dev/shm/ct-fuzz.XXXXXX 2>/dev/null || mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export CT_FUZZ_SCRATCH=$scratch
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [ "$mode" = regressions ]; then
  unset CT_FUZZ_SKIP_KNOWN  # a known finding still fails its regression input
  status=0
  for name in "${targets[@]}"; do
    dir=$repo/tests/fuzz/regressions/$name  # absolute: a harness may chdir
    files=()
    [ -d "$dir" ] && while IFS= read -r -d '' file; do files+=("$file"); done < <(find "$dir" -type f ! -name 'README*' -print0 | sort -z)
    if ((${#files[@]} == 0)); then echo "$name: no regression inputs"; continue; fi
    failed=0
    for file in "${files[@]}"; do
      log=$(mktemp)
      if "$build_dir/tests/fuzz/${name}_fuzz" -runs=1 "$file" >"$log" 2>&1; then
        echo "PASS ${file#"$repo"/}"
      else
        echo "FAIL ${file#"$repo"/}"
        grep -aE 'FUZZ FINDING|^detail: |ERROR: |runtime error|Assertion' "$log" | grep -av 'deadly signal' | head -4 | sed 's/^/    /'
        failed=$((failed + 1))
      fi
      rm -f "$log"
    done
    echo "$name: ${#files[@]} regression inputs, $failed failing"
    ((failed == 0)) || status=1
  done
  exit $status
fi

summary=()
status=0
for name in "${targets[@]}"; do
  run=$build_dir/fuzz-runs/$name
  rm -rf "$run"
  mkdir -p "$run/corpus" "$run/artifacts"
  cp -r "tests/fuzz/corpus/$name/." "$run/corpus/"
  seeds=$(find "$run/corpus" -type f | wc -l)
  flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$run/artifacts/")
  [ -f "tests/fuzz/$name.dict" ] && flags+=(-dict="$repo/tests/fuzz/$name.dict")
  echo "==> $name: fuzzing for ${seconds}s from $seeds seeds (log: $run/log.txt)"
  echo "    $build_dir/tests/fuzz/${name}_fuzz ${flags[*]} ${FUZZ_FLAGS:-} $run/corpus"
  rc=0
  # shellcheck disable=SC2086
  "$build_dir/tests/fuzz/${name}_fuzz" "${flags[@]}" ${FUZZ_FLAGS:-} "$run/corpus" >"$run/log.txt" 2>&1 || rc=$?

  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/log.txt" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$run/log.txt" | tail -1)
  last=$(grep -aE '^#[0-9]+.* cov: ' "$run/log.txt" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(find "$run/corpus" -type f | wc -l)
  findings=$(find "$run/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  if ((rc != 0 && findings == 0)); then findings=1; fi  # died without an artifact (e.g. out of memory in the driver)
  known=$(sed -n 's/^known finding \([^:]*\): skipped \([0-9]*\) inputs$/\1×\2/p' "$run/log.txt" | paste -sd, -)
  row=$(printf '%-8s execs %-10s exec/s %-6s cov %-6s ft %-7s corpus %5s (seeds %s)  findings %s%s' \
    "$name" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$corpus" "$seeds" "$findings" \
    "${known:+  (known, skipped: $known)}")
  echo "    $row"
  summary+=("$row")
  if ((findings)); then
    status=1
    grep -aE 'FUZZ FINDING|^==[0-9]+==ERROR|runtime error|SUMMARY: |Assertion|^detail: ' "$run/log.txt" | head -8 | sed 's/^/    /'
    find "$run/artifacts" -type f | sed 's/^/    artifact: /'
    echo "    minimise: $build_dir/tests/fuzz/${name}_fuzz -minimize_crash=1 -runs=10000 <artifact>"
  fi
  if ((merge)); then
    before=$(find "tests/fuzz/corpus/$name" -type f | wc -l)
    "$build_dir/tests/fuzz/${name}_fuzz" -merge=1 "tests/fuzz/corpus/$name" "$run/corpus" >"$run/merge.txt" 2>&1
    after=$(find "tests/fuzz/corpus/$name" -type f | wc -l)
    echo "    merged: tests/fuzz/corpus/$name $before -> $after inputs"
  fi
done

echo "==> summary ($(date -u +%Y-%m-%dT%H:%MZ), ${seconds}s per target)"
printf '    %s\n' "${summary[@]}"
exit $status
