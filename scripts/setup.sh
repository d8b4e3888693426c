#!/usr/bin/env bash
# Installs what is missing (Debian packages), then configures and builds. Sourced by the other
# scripts; BUILD_DIR, BUILD_TYPE, CMAKE_EXTRA_ARGS, BUILD_TARGETS and CT_BUILD_TESTS (ON; OFF
# configures and installs for the programs alone, unless BUILD_DIR has the tests already) may be
# set by the caller.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# What building ct, ct-serve and the PostgreSQL module needs: libmicrohttpd-dev, the HTTP server of
# `ct serve`; libpq-dev, the client library of the PostgreSQL store (storage.url /
# CLEO_DATABASE_URL); libre2-dev, the regular expressions params and plug-ins declare, matched in
# linear time; libcpp-httplib-dev (built with OpenSSL), the HTTPS client of the GitHub tracker
# (issues.sync), which only the module libct_github.so links.
BUILD_DIR=${BUILD_DIR:-build/release}
BUILD_TYPE=${BUILD_TYPE:-Release}
CT_BUILD_TESTS=${CT_BUILD_TESTS:-ON}
# A build directory that has the tests keeps them: serve.sh or demo.sh building their programs in
# the directory scripts/test.sh uses would otherwise turn its tests off, and ct_tests would be
# left behind the ct it tests (BUILD_TARGETS still limits what they build).
if [ "$CT_BUILD_TESTS" = "OFF" ] && grep -qx 'CT_BUILD_TESTS:BOOL=ON' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
  CT_BUILD_TESTS=ON
fi

packages=(g++ cmake ninja-build pkg-config libsqlite3-dev libsimdjson-dev libcli11-dev libmicrohttpd-dev
  nettle-dev libpq-dev libre2-dev libcpp-httplib-dev)
# universal-ctags locates the symbols memory entries are scoped to (engines/rules/memory_symbols.h):
# ct runs it; without it such scopes find their entries but cannot go stale.
packages+=(universal-ctags)
# What the tests need besides (CT_BUILD_TESTS=OFF, as scripts/serve.sh sets it, leaves them out):
# catch2 (libcpp-httplib-dev, above, is also the HTTP client of the tests, the benchmarks and the
# transcript runner); sqlite3, whose shell some tests tamper with a store through; git, which the release
# domain and evidence use (their tests run against temporary repositories); patch and python3
# (3.11+, its tomllib) check that a host's edited config file is valid TOML and that the dry run's
# diff applies (tests/unit/domains/providers_files_test.cpp); tmux is the person's real terminal
# of tests/e2e/principals.cpp (ct at a terminal, ct serve's one-use code); strace counts a `ct`
# write's durable syncs (tests/fault/durable_syncs.cmake).
if [ "$CT_BUILD_TESTS" != "OFF" ]; then
  packages+=(catch2 sqlite3 git patch python3 tmux strace)
  # Node and npm run the token counter (tests/tokenizer), the MCP interop tests (tests/interop) and
  # the fake GitHub of the tracker sync's tests (tests/github, its packages installed on first use);
  # a Node already on PATH is kept as it is. Any Node from 18 on (Debian ships 18) installs the
  # locked packages: the interop tests then run on the Node 22 that tests/interop/package-lock.json
  # pins (the npm registry's node-linux-<arch>), since the MCP conformance suite needs 22.
  command -v node >/dev/null 2>&1 || packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi
# CT_BROWSER_TESTS=1 (scripts/test.sh sets it): Debian's Chromium, which the dashboard's browser
# tests (tests/browser) drive headless; without it they are skipped.
if [ "${CT_BROWSER_TESTS:-0}" = "1" ]; then packages+=(chromium); fi
# CT_POSTGRESQL_TESTS=1 (scripts/test.sh sets it): Debian's PostgreSQL server, whose initdb and
# pg_ctl start the throwaway cluster the `postgresql` tests run against (scripts/pg-cluster.sh).
if [ "${CT_POSTGRESQL_TESTS:-0}" = "1" ]; then packages+=(postgresql); fi
# CT_PACKAGING=1 (scripts/package.sh): dpkg-dev, whose dpkg-shlibdeps reads the Debian package's
# dependencies. CT_PACKAGE_TESTS=1 (scripts/test.sh sets it): that, and what tests/package/run.sh
# needs to bootstrap a clean Debian root and talk to ct serve in it.
if [ "${CT_PACKAGING:-0}" = "1" ]; then packages+=(dpkg-dev); fi
if [ "${CT_PACKAGE_TESTS:-0}" = "1" ]; then packages+=(dpkg-dev debootstrap curl); fi
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "==> installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

echo "==> building ($BUILD_TYPE) in $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DCT_WARNINGS_AS_ERRORS=ON \
  -DCT_BUILD_TESTS="$CT_BUILD_TESTS" ${CMAKE_EXTRA_ARGS:-} >/dev/null
# BUILD_TARGETS (space-separated) limits the build to those targets; empty builds everything.
targets=()
for target in ${BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}"
