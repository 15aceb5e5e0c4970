#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server (Debian's postgresql package) for the Postgres
# session store tests: a fresh cluster in a temp dir, on a free local port, run by an
# ordinary user, trust authentication on 127.0.0.1 only.
#
#   scripts/pg-test.sh run CMD [ARGS...]  start, run CMD with AGENTENGINE_TEST_PG_DSN set, stop
#   eval "$(scripts/pg-test.sh start)"    start; prints export lines (DSN and PG_TEST_DIR)
#   scripts/pg-test.sh stop [DIR]         stop the server started in DIR (default $PG_TEST_DIR)
#
# Needs the postgresql package (apt-get install -y postgresql). As root, the server runs
# as the user "postgres" (or "pgtest", created if neither exists): PostgreSQL refuses to
# run as root.
set -euo pipefail

die() { echo "pg-test: $*" >&2; exit 1; }

bindir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
      echo "$d"
    fi
  done | sort -V | tail -n 1
}

free_port() {
  python3 - <<'EOF' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
EOF
}

# as USER CMD...: runs CMD as the server's user (directly when not root).
as_user() {
  local u=$1
  shift
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u "$u" -- "$@"
  else
    "$@"
  fi
}

server_user() {
  if [[ $(id -u) -ne 0 ]]; then
    id -un
    return
  fi
  if id postgres >/dev/null 2>&1; then
    echo postgres
    return
  fi
  id pgtest >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin pgtest
  echo pgtest
}

start() {
  local bin user dir port
  bin=$(bindir)
  [[ -n "$bin" ]] || die "no PostgreSQL server found under /usr/lib/postgresql/*/bin: apt-get install -y postgresql"
  user=$(server_user)
  dir=$(mktemp -d "${TMPDIR:-/tmp}/agentengine-pg.XXXXXX")
  chmod 0755 "$dir"
  [[ $(id -u) -eq 0 ]] && chown "$user" "$dir"
  port=$(free_port)
  as_user "$user" "$bin/initdb" -D "$dir/data" -U agentengine --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  # Sockets in the temp dir, TCP on loopback only; fsync off: a test cluster is disposable.
  as_user "$user" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null ||
    { cat "$dir/server.log" >&2; die "server did not start"; }
  echo "$port" >"$dir/port"
  echo "$user" >"$dir/user"
  echo "export PG_TEST_DIR=$dir"
  echo "export AGENTENGINE_TEST_PG_DSN='postgres://agentengine@127.0.0.1:$port/postgres?sslmode=disable'"
}

stop() {
  local dir=${1:-${PG_TEST_DIR:-}} bin
  [[ -n "$dir" && -d "$dir/data" ]] || die "stop: no server dir (pass it or set PG_TEST_DIR)"
  bin=$(bindir)
  as_user "$(cat "$dir/user")" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

case "${1:-}" in
start) start ;;
stop) stop "${2:-}" ;;
run)
  shift
  [[ $# -gt 0 ]] || die "run: no command"
  eval "$(start)"
  trap 'stop "$PG_TEST_DIR"' EXIT
  export AGENTENGINE_TEST_PG_DSN
  "$@"
  ;;
*) die "usage: $0 start | stop [DIR] | run CMD [ARGS...]" ;;
esac
