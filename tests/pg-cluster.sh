#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for cairn's tests and benchmarks (SPEC.md section 17), from
# Debian's packages: `pg-cluster.sh PORT` starts one on 127.0.0.1:PORT unless it already runs,
# and prints its URL (superuser `cairn`, no password, trust on loopback only);
# `pg-cluster.sh PORT stop` stops it. With $CAIRN_TEST_PG set (a superuser's URL of a server of
# one's own), it prints that and starts nothing.
#
# PostgreSQL refuses to run as root: as root, the cluster runs as the system user `cairnpg`
# (created if missing), in /tmp/cairn-pg-PORT. Safe to call from several processes at once.
#
# The cluster stops by itself once every process that asked for it has ended (issue 37, row 21:
# the tests left it running): the caller (the parent process, or $CAIRN_PG_OWNER) is recorded
# under /tmp/cairn-pg-PORT/owners, and a watchdog started with the cluster checks every two
# seconds, under the same lock as a start, whether any of them still runs.
set -euo pipefail
if [ -n "${CAIRN_TEST_PG:-}" ] && [ "${2:-}" != stop ]; then
  echo "$CAIRN_TEST_PG"
  exit 0
fi
port="${1:-55432}"
dir="/tmp/cairn-pg-$port"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "PostgreSQL's server is not installed; install Debian's package: apt-get install -y postgresql" >&2
  exit 1
fi
as() { "$@"; }
if [ "$(id -u)" = 0 ]; then
  if ! id cairnpg >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin cairnpg
  fi
  as() { runuser -u cairnpg -- "$@"; }
fi
if [ "${2:-}" = stop ]; then
  if [ -f "$dir/data/PG_VERSION" ]; then
    as "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
  fi
  exit 0
fi
mkdir -p "$dir"
[ "$(id -u)" = 0 ] && chown cairnpg "$dir"
exec 9>"$dir.lock"
flock 9
mkdir -p "$dir/owners"
touch "$dir/owners/${CAIRN_PG_OWNER:-$PPID}"
if ! { [ -f "$dir/watchdog.pid" ] && kill -0 "$(cat "$dir/watchdog.pid")" 2>/dev/null; }; then
  (
    while sleep 2; do
      exec 8>"$dir.lock"
      flock 8
      for f in "$dir"/owners/*; do
        [ -e "$f" ] || continue
        kill -0 "${f##*/}" 2>/dev/null || rm -f "$f"
      done
      if [ -z "$(ls -A "$dir/owners")" ]; then
        as "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
        rm -f "$dir/watchdog.pid"
        exit 0
      fi
      exec 8>&-
    done
  ) </dev/null >/dev/null 2>&1 9>&- &
  echo $! >"$dir/watchdog.pid"
fi
if ! as "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as "$bin/initdb" -D "$dir/data" -U cairn --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    cat >"$dir/data/pg_hba.conf" <<EOF
local all all trust
host all all 127.0.0.1/32 trust
EOF
  fi
  as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on" >/dev/null 9>&- ||
    { tail -n 20 "$dir/server.log" >&2; exit 1; }
fi
echo "postgres://cairn@127.0.0.1:$port/postgres"
