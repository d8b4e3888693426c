#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests and benchmarks of the PostgreSQL store:
#   scripts/pg-cluster.sh start DIR [PORT]   a fresh cluster (initdb + pg_ctl start) in DIR; prints
#                                            the store URL. A cluster left in DIR is stopped and replaced.
#   scripts/pg-cluster.sh stop DIR           stops it and removes DIR
#   scripts/pg-cluster.sh url DIR            prints the URL of a running cluster
# The server listens on a unix socket in DIR only (no TCP port is opened) and trusts local
# connections: it is for tests. PostgreSQL refuses to run as root, so as root the cluster belongs to
# the `postgres` user (Debian's package creates it) or `nobody`. Needs Debian's postgresql package
# (scripts/test.sh installs it).
set -euo pipefail

command=${1:-}
dir=${2:-}
port=${3:-5432}
if [ -z "$command" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|url DIR [PORT]" >&2
  exit 2
fi

bin=""
for candidate in /usr/lib/postgresql/*/bin; do
  [ -x "$candidate/initdb" ] && bin=$candidate
done
if [ -z "$bin" ]; then
  echo "PostgreSQL's server is not installed: apt-get install -y postgresql" >&2
  exit 3
fi

as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  owner=postgres
  id -u "$owner" >/dev/null 2>&1 || owner=nobody
  as_owner=(runuser -u "$owner" --)
fi

url() {
  local socket
  socket=$(cd "$dir" && pwd)/socket
  echo "postgresql:///postgres?host=$socket&port=$(cat "$dir/port")&user=cleo"
}

case "$command" in
  start)
    if [ -f "$dir/data/PG_VERSION" ]; then
      "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ -n "${as_owner[*]}" ]; then chown "${owner}" "$dir"; fi
    # C.UTF-8: byte order for sorting (the store's columns say COLLATE "C" anyway) and Unicode case
    # folding for the search words.
    "${as_owner[@]}" "$bin/initdb" -D "$dir/data" -U cleo -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    "${as_owner[@]}" mkdir -p "$dir/socket"
    echo "$port" >"$dir/port"
    # fsync off: a test cluster is thrown away, and durability is the server's, not ours, to prove.
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w -t 60 \
      -o "-k $dir/socket -c listen_addresses='' -p $port -c fsync=off -c synchronous_commit=off \
          -c full_page_writes=off -c max_connections=300 -c shared_buffers=128MB" start >/dev/null ||
      { cat "$dir/data/server.log" >&2; exit 1; }
    url
    ;;
  stop)
    if [ -d "$dir/data" ]; then
      "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  url)
    url
    ;;
  *)
    echo "usage: $0 start|stop|url DIR [PORT]" >&2
    exit 2
    ;;
esac
