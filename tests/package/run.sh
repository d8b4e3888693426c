#!/usr/bin/env bash
# The Debian package on a clean machine: builds the .deb of a build directory (cpack -G DEB),
# makes a clean Debian root with debootstrap (minbase: nothing of the build machine in it), installs
# the package there with `apt-get install ./….deb` (its dependencies come from Debian's mirror), and
# in that root runs ct as a user would: ct --version, cleo --version and system.version, ct init,
# ct add, ct list, ct mcp answering initialize on stdin, ct serve answering a POST /mcp initialize
# (sent from here to 127.0.0.1) — every version the package's own —, the PostgreSQL module loading
# libpq from /usr/lib/cleo, the manual pages, completions and docs in place, and ldd finding every
# library inside the root.
#
#   tests/package/run.sh BUILD_DIR [--keep]
#
# Needs root (chroot, mounts), debootstrap, dpkg-dev, curl and the network to the Debian mirror
# (CT_DEBIAN_MIRROR, default http://deb.debian.org/debian; the suite is this machine's own Debian
# release). Exits 77 (skipped) without root or those programs (scripts/setup.sh installs them when
# CT_PACKAGE_TESTS=1, as scripts/test.sh sets it), without a mirror that answers or the right to
# mount, and for a sanitizer or fuzzing build. About a minute with the bootstrap, 15 s from the
# cached root. The freshly bootstrapped root is kept as a tarball in CT_PACKAGE_CACHE
# (default ~/.cache/cleo/package-test) and unpacked anew for every run: it holds Debian's packages
# only, so a run without it (a clean CI machine) bootstraps and tests the same thing. --keep
# leaves the root in place for a look (its path is printed).
set -euo pipefail

build_dir=${1:?usage: tests/package/run.sh BUILD_DIR [--keep]}
keep=0
[ "${2:-}" = "--keep" ] && keep=1
build_dir=$(cd "$build_dir" && pwd)

skip() { echo "package test skipped: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "it needs root (chroot and mounts)"
for program in debootstrap dpkg-shlibdeps cpack curl chroot; do
  command -v "$program" >/dev/null || skip "$program is missing (CT_PACKAGE_TESTS=1 scripts/setup.sh installs it)"
done
[ -f "$build_dir/CPackConfig.cmake" ] || { echo "no CPackConfig.cmake in $build_dir: configure it first" >&2; exit 2; }
# A sanitizer or fuzzing build is not what anyone installs.
if grep -Eq '^CT_(SANITIZE:STRING=.+|FUZZ:BOOL=ON)$' "$build_dir/CMakeCache.txt"; then
  skip "$build_dir is a sanitizer or fuzzing build"
fi

. /etc/os-release
suite=${VERSION_CODENAME:?this machine names no Debian release in /etc/os-release}
mirror=${CT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${CT_PACKAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cleo/package-test}
arch=$(dpkg --print-architecture)

# What the test needs of its machine, found out before anything is built: a mirror that answers
# (apt-get reaches it from the root) and the right to mount (a container without CAP_SYS_ADMIN
# has root but no mounts). Without either it is skipped, saying which.
curl -fsS -m 20 -o /dev/null "$mirror/dists/$suite/Release" 2>/dev/null ||
  skip "the Debian mirror $mirror does not answer (set CT_DEBIAN_MIRROR to one that does)"
probe=$(mktemp -d /tmp/ct-package-probe.XXXXXX)
if mount -t tmpfs none "$probe" 2>/dev/null; then umount "$probe"; rmdir "$probe"
else rmdir "$probe"; skip "this machine does not let root mount (a container without CAP_SYS_ADMIN?)"; fi

work=$(mktemp -d /tmp/ct-package.XXXXXX)
root=$work/root
server_pid=
cleanup() {
  local status=$?
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  # Anything else still running inside the root is this run's too.
  local proc
  for proc in /proc/[0-9]*; do
    [ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ] && kill -9 "${proc#/proc/}" 2>/dev/null
  done
  for mount in "$root/dev/pts" "$root/dev" "$root/proc"; do
    if mountpoint -q "$mount" 2>/dev/null; then umount "$mount" 2>/dev/null || umount -l "$mount"; fi
  done
  if [ "$keep" -eq 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

started=$SECONDS
phase() { printf '==> [%4ds] %s\n' "$((SECONDS - started))" "$*"; }

phase "building the package (cpack -G DEB in $build_dir)"
cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$work/package" > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; exit 1; }
deb=$(find "$work/package" -maxdepth 1 -name '*.deb' | head -1)
[ -n "$deb" ] || { echo "cpack wrote no .deb" >&2; cat "$work/cpack.log" >&2; exit 1; }
version=$(dpkg-deb -f "$deb" Version)
package=$(dpkg-deb -f "$deb" Package)
echo "$(basename "$deb"): Depends: $(dpkg-deb -f "$deb" Depends)"
echo "$(basename "$deb"): Recommends: $(dpkg-deb -f "$deb" Recommends)"
dpkg-deb -c "$deb" | awk '{print $NF}' | grep -q '^\./usr/bin/ct$' || { echo "the package holds no /usr/bin/ct" >&2; exit 1; }

tarball=$cache/$suite-$arch-minbase.tar.gz
mkdir -p "$root"
if [ -f "$tarball" ]; then
  phase "unpacking the clean $suite root ($tarball)"
  tar -xzf "$tarball" -C "$root"
else
  phase "bootstrapping a clean $suite root from $mirror (debootstrap --variant=minbase)"
  debootstrap --variant=minbase "$suite" "$root" "$mirror" > "$work/debootstrap.log" 2>&1 ||
    { tail -30 "$work/debootstrap.log" >&2; exit 1; }
  mkdir -p "$cache"
  tar -czf "$tarball.tmp" -C "$root" . && mv "$tarball.tmp" "$tarball"
fi

# The root gets the same archive areas as this machine's release, the network's resolver, and
# /proc and /dev (ct finds ct-serve and its module through /proc/self/exe).
security=${mirror%/debian}/debian-security
cat > "$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
EOF
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"

# Only what the root itself holds: a clean environment, its own PATH.
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
              HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

phase "apt-get install ./$(basename "$deb") in the root"
cp "$deb" "$root/tmp/"
in_root apt-get update -qq > "$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
in_root apt-get install -y -q "/tmp/$(basename "$deb")" >> "$work/apt.log" 2>&1 || { tail -40 "$work/apt.log" >&2; exit 1; }

fail() { printf "package test: %b\n" "$*" >&2; exit 1; }
phase "checking the installed package"
in_root dpkg -s "$package" | grep -qx "Version: $version" || fail "dpkg does not list $package $version as installed"
[ "$(in_root ct --version)" = "ct $version" ] || fail "ct --version says '$(in_root ct --version)', not 'ct $version'"
[ "$(in_root cleo --version)" = "ct $version" ] || fail "cleo --version says '$(in_root cleo --version)'"
in_root ct version --json | grep -q "\"version\":\"$version\"" || fail "system.version says: $(in_root ct version --json)"
for file in /usr/bin/ct /usr/bin/ct-serve /usr/lib/cleo/libct_postgres.so; do
  libraries=$(in_root ldd "$file") || fail "ldd $file failed"
  if grep -q "not found" <<<"$libraries"; then fail "$file misses libraries in the root:\n$libraries"; fi
  if grep -Eo '=> [^ ]+' <<<"$libraries" | grep -Ev '=> /(usr/)?lib' >/dev/null; then
    fail "$file loads a library from outside the system's directories:\n$libraries"
  fi
done
for file in /usr/share/man/man1/ct.1.gz /usr/share/man/man1/ct-tasks.1.gz /usr/share/man/man1/cleo.1.gz \
            /usr/share/bash-completion/completions/ct /usr/share/bash-completion/completions/cleo \
            /usr/share/zsh/site-functions/_ct /usr/share/fish/vendor_completions.d/ct.fish \
            "/usr/share/doc/$package/copyright" "/usr/share/doc/$package/changelog.gz"; do
  [ -e "$root$file" ] || fail "the package installed no $file"
done
zcat "$root/usr/share/man/man1/ct.1.gz" | grep -q '^\.SH "EXIT STATUS"' || fail "ct.1 has no EXIT STATUS section"

phase "ct init, ct add, ct list in a new project"
in_root sh -ec 'mkdir -p /root/project && cd /root/project && ct init >/dev/null && ct add "The package works" -p high >/dev/null
                ct list --json' > "$work/list.json"
grep -q '"id":"T001"' "$work/list.json" || fail "ct list does not show the task ct add made: $(cat "$work/list.json")"

initialize='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"package-test","version":"1"}}}'
phase "ct mcp answers initialize"
reply=$(printf '%s\n' "$initialize" | in_root sh -c 'cd /root/project && exec ct mcp')
grep -q "\"serverInfo\":{\"name\":\"cleo\",\"version\":\"$version\"" <<<"$reply" || fail "ct mcp answered: $reply"

phase "the PostgreSQL module loads libpq from the root"
out=$(in_root sh -c 'cd /root/project && CLEO_DATABASE_URL=postgresql://127.0.0.1:1/none ct list --json' || true)
grep -q '"code":"E_STORE_UNAVAILABLE"' <<<"$out" || fail "a PostgreSQL URL did not reach libpq through /usr/lib/cleo/libct_postgres.so: $out"

phase "ct serve answers POST /mcp"
# chroot itself in the background (not a function, which bash would run in a subshell of its own):
# $! is then the server's pid all the way down (chroot, env, sh and ct each exec the next).
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  sh -c 'cd /root/project && exec ct serve --port 0' > "$work/serve.log" 2>&1 &
server_pid=$!
url=
for _ in $(seq 1 100); do
  url=$(sed -n 's/^CLEO MCP server: \(http[^ ]*\)$/\1/p' "$work/serve.log")
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || fail "ct serve stopped: $(cat "$work/serve.log")"
  sleep 0.1
done
[ -n "$url" ] || fail "ct serve printed no URL: $(cat "$work/serve.log")"
reply=$(curl -sS -m 10 -X POST "$url" -H 'Content-Type: application/json' \
          -H 'Accept: application/json, text/event-stream' -d "$initialize")
grep -q "\"serverInfo\":{\"name\":\"cleo\",\"version\":\"$version\"" <<<"$reply" || fail "ct serve answered: $reply"

phase "passed: $package $version installs on a clean $suite root and serves"
