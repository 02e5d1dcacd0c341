#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests: initdb as the `postgres` user in a temporary
# directory, listening on a free port with its unix socket in that directory (no TCP), fsync
# off unless SPAA_PG_FSYNC=on (benchmarks comparing durable commits ask for it).
#   source tests/support/pg.sh; pg_start; ...; pg_stop
#     pg_start sets SPAA_PG_DIR, SPAA_PG_PORT and SPAA_TEST_STORE (a postgresql:// location
#     of the database "spaa"); pg_stop stops the cluster and removes the directory.
#   bash tests/support/pg.sh run CMD ARGS...   runs CMD with a cluster up, then stops it.
# Exits 77 (skipped) when PostgreSQL's server binaries are absent and cannot be installed.

pg_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

pg_as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 20000))
    (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; return 0; }
  done
  return 1
}

pg_start() {
  local bin
  bin=$(pg_bin) || true
  if [ -z "$bin" ]; then
    if [ "$(id -u)" -eq 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 || true
    fi
    bin=$(pg_bin) || { echo "pg.sh: PostgreSQL server binaries not found" >&2; return 77; }
  fi
  SPAA_PG_BIN=$bin
  SPAA_PG_DIR=$(mktemp -d /tmp/spaa-pg.XXXXXX)
  chmod 755 "$SPAA_PG_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$SPAA_PG_DIR"
  SPAA_PG_PORT=$(pg_free_port) || { echo "pg.sh: no free port" >&2; return 1; }
  pg_as_postgres "$bin/initdb" -D "$SPAA_PG_DIR/data" -A trust -U postgres -N \
    >"$SPAA_PG_DIR/initdb.log" 2>&1 || { cat "$SPAA_PG_DIR/initdb.log" >&2; return 1; }
  pg_up || return 1
  pg_as_postgres "$bin/createdb" -h "$SPAA_PG_DIR" -p "$SPAA_PG_PORT" -U postgres spaa ||
    return 1
  SPAA_TEST_STORE="postgresql:///spaa?host=$SPAA_PG_DIR&port=$SPAA_PG_PORT&user=postgres"
  export SPAA_PG_BIN SPAA_PG_DIR SPAA_PG_PORT SPAA_TEST_STORE
}

# Start (or restart) the cluster pg_start made; pg_down stops it, keeping its data.
pg_up() {
  pg_as_postgres "$SPAA_PG_BIN/pg_ctl" -D "$SPAA_PG_DIR/data" -l "$SPAA_PG_DIR/server.log" -w \
    -o "-p $SPAA_PG_PORT -k $SPAA_PG_DIR -c listen_addresses='' -c fsync=${SPAA_PG_FSYNC:-off}" start >/dev/null ||
    { cat "$SPAA_PG_DIR/server.log" >&2; return 1; }
}

pg_down() {
  pg_as_postgres "$SPAA_PG_BIN/pg_ctl" -D "$SPAA_PG_DIR/data" -m "${1:-fast}" -w stop \
    >/dev/null 2>&1
}

# SQL against the test database, tab-separated, no headers.
pg_sql() {
  "$SPAA_PG_BIN/psql" -h "$SPAA_PG_DIR" -p "$SPAA_PG_PORT" -U postgres -d spaa -XAtq -c "$1"
}

pg_stop() {
  [ -n "${SPAA_PG_DIR:-}" ] && [ -d "$SPAA_PG_DIR" ] || return 0
  pg_down immediate
  rm -rf "$SPAA_PG_DIR"
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = "run" ]; then
  shift
  pg_start
  rc=$?
  [ $rc -eq 0 ] || { pg_stop; exit $rc; }
  trap pg_stop EXIT
  "$@"
  exit $?
fi
