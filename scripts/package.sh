#!/usr/bin/env bash
# Builds the Debian package: installs what is missing (the build packages, and dpkg-dev whose
# dpkg-shlibdeps reads the package's dependencies), builds the programs, the manual pages and the
# docs in build/release (without the tests), and writes build/package/cleo-tasks_<version>_<arch>.deb.
# Install it with: sudo apt-get install ./build/package/cleo-tasks_*.deb
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CT_BUILD_TESTS=OFF CT_PACKAGING=1 BUILD_TARGETS="ct ct-serve ct_postgres_module ct_dist_files"
source scripts/setup.sh
echo "==> packaging"
cpack --config "$BUILD_DIR/CPackConfig.cmake" -G DEB -B build/package
