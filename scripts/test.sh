#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole default test suite.
#   scripts/test.sh            release build, every test
#   scripts/test.sh --asan     the same under AddressSanitizer + UBSan (debug build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${1:-}" = "--asan" ]; then
  export BUILD_DIR=build/debug-asan BUILD_TYPE=Debug CMAKE_EXTRA_ARGS="-DCT_SANITIZE=ON -DCT_BUILD_BENCH=OFF"
fi
source scripts/setup.sh
echo "==> testing"
ctest --test-dir "${BUILD_DIR}" --output-on-failure -j "$(nproc)"
