# Shared helpers for the end-to-end tests (source it; it is not a test itself).
#   start_server [serve flags...]   start `spaa-relay serve` on 127.0.0.1:0 with a fresh data
#                                   dir; sets SERVER_PID SERVER_PORT SERVER_URL SERVER_LOG
#                                   SERVER_DATA (each call starts one more server)
#   stop_server [PID]               SIGTERM, wait, and return the server's exit status
#   http METHOD PATH [curl args]    request SERVER_URL+PATH; sets HTTP_CODE, HTTP_BODY and
#                                   HTTP_HEADERS (the response headers, CRs removed)
#   grpc_port [LOG]                 the gRPC listener's port of a server (its log)
#   vmhwm_kb PID                    peak resident memory of a process, in KiB
#   json_get JSON KEY               a top-level string/number value of a JSON object
#   assert_read_back BASE DIR LIST... each "ID FIXTURE" line of the LIST files reads back
#                                   from BASE as DIR/FIXTURE's offline pprof conversion;
#                                   sets READ_BACK (how many)
#   assert_eq WANT GOT WHAT / assert_contains HAYSTACK NEEDLE WHAT / fail MESSAGE
# Everything started here is killed and removed on exit.
set -euo pipefail

: "${SPAA_BIN:?SPAA_BIN must name the spaa-relay binary}"
E2E_NAME=$(basename "${BASH_SOURCE[1]:-$0}" .sh)
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/spaa-e2e-${E2E_NAME}.XXXXXX")
E2E_PIDS=()
# every test server gets its gRPC listener on a free port (not the default 4317, which
# servers of tests running in parallel would share); its port is in the "listening on gRPC h2c"
# line (grpc_port LOG)
export SPAA_RELAY_GRPC_LISTEN=${SPAA_RELAY_GRPC_LISTEN:-127.0.0.1:0}
E2E_SERVERS=0

e2e_cleanup() {
  local pid
  for pid in "${E2E_PIDS[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$E2E_TMP"
}
trap e2e_cleanup EXIT

fail() {
  echo "FAIL [$E2E_NAME]: $*" >&2
  if [[ -n "${SERVER_LOG:-}" && -f "$SERVER_LOG" ]]; then
    echo "--- last lines of $SERVER_LOG:" >&2
    tail -n 20 "$SERVER_LOG" >&2
  fi
  exit 1
}

assert_eq() {
  [[ "$1" == "$2" ]] || fail "$3: expected '$1', got '$2'"
}

assert_contains() {
  [[ "$1" == *"$2"* ]] || fail "$3: '$2' not found in: $1"
}

# Start a server; extra arguments go to `serve`. Waits (up to 20 s) for its
# "listening on ADDR:PORT" line.
start_server() {
  E2E_SERVERS=$((E2E_SERVERS + 1))
  SERVER_DATA="$E2E_TMP/data$E2E_SERVERS"
  SERVER_LOG="$E2E_TMP/server$E2E_SERVERS.log"
  "$SPAA_BIN" serve --listen 127.0.0.1:0 --data-dir "$SERVER_DATA" "$@" 2>"$SERVER_LOG" &
  SERVER_PID=$!
  E2E_PIDS+=("$SERVER_PID")
  local i line
  for ((i = 0; i < 200; i++)); do
    line=$(grep -m1 -o 'listening on [^" ]*' "$SERVER_LOG" 2>/dev/null || true)
    if [[ -n "$line" ]]; then
      SERVER_PORT=${line##*:}
      SERVER_URL="http://127.0.0.1:$SERVER_PORT"
      return 0
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || fail "the server exited at start"
    sleep 0.1
  done
  fail "the server did not log 'listening on' within 20 s"
}

# SIGTERM a server (default: the last started) and return its exit status.
stop_server() {
  local pid=${1:-$SERVER_PID} rc=0
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || rc=$?
  return "$rc"
}

http() {
  local method=$1 path=$2
  shift 2
  local out="$E2E_TMP/body" hdr="$E2E_TMP/headers"
  HTTP_CODE=$(curl -sS -o "$out" -D "$hdr" -w '%{http_code}' -X "$method" "$@" \
    "$SERVER_URL$path" || true)
  HTTP_BODY=$(cat "$out" 2>/dev/null || true)
  HTTP_HEADERS=$(tr -d '\r' <"$hdr" 2>/dev/null || true)
  rm -f "$out" "$hdr"
}

# The port of the gRPC listener of the server that writes LOG (default: the last started).
# The server logs that line just after the HTTP listener's, which start_server waits for:
# wait up to 10 s for it.
grpc_port() {
  local line i
  for ((i = 0; i < 100; i++)); do
    line=$(grep -m1 -o 'listening on gRPC h2c" addr=[^ ]*' "${1:-$SERVER_LOG}" || true)
    [[ -n "$line" ]] && break
    sleep 0.1
  done
  [[ -n "$line" ]] || fail "no 'listening on gRPC h2c' line in ${1:-$SERVER_LOG}"
  echo "${line##*:}"
}

# wait_logged FILE PATTERN WHAT: wait up to 10 s for a line of FILE matching PATTERN (grep),
# else fail naming WHAT.
wait_logged() {
  local i
  for ((i = 0; i < 100; i++)); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "$3: no '$2' line in $1"
}

# wait_open N: wait up to 20 s until the server at SERVER_URL holds at least N open HTTP
# connections (its /metrics; the asking one included), else fail. Clients that open many
# connections take a while on a loaded machine: a fixed sleep is not enough.
wait_open() {
  local i n=
  for ((i = 0; i < 200; i++)); do
    n=$(curl -sS "$SERVER_URL/metrics" 2>/dev/null | awk '/^spaa_relay_connections_open /{print $2}')
    [[ -n "$n" ]] && ((n >= $1)) && return 0
    sleep 0.1
  done
  fail "fewer than $1 connections open after 20 s (${n:-none})"
}

vmhwm_kb() {
  awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}

# Succeeds when the binary is built with AddressSanitizer, whose shadow memory and
# quarantine make resident-memory figures meaningless.
# (ldd's output is taken whole first: `ldd | grep -q` under pipefail fails at random when
# grep stops reading early and ldd dies of SIGPIPE.)
e2e_asan() {
  local libs
  libs=$(ldd "$SPAA_BIN" 2>/dev/null || true)
  [[ $libs == *libasan* ]]
}

# assert_rss_below PID KIB WHAT: the process's peak RSS stayed under KIB (not checked
# under AddressSanitizer).
assert_rss_below() {
  local hwm
  hwm=$(vmhwm_kb "$1")
  if e2e_asan; then
    echo "note [$E2E_NAME]: AddressSanitizer build, peak RSS ${hwm} KiB not checked ($3)"
    return 0
  fi
  ((hwm < $2)) || fail "$3: peak RSS ${hwm} KiB, want under $2 KiB"
}

# The first "key":value of compact JSON (a string without escapes, a number, true, false
# or null), strings unquoted; enough for the server's own answers.
json_get() {
  local v
  v=$(printf '%s' "$1" | grep -o "\"$2\":\(\"[^\"]*\"\|[-0-9.eE+]*\|true\|false\|null\)" |
    head -n1 || true)
  v=${v#*:}
  v=${v#\"}
  printf '%s\n' "${v%\"}"
}

# Every "ID FIXTURE ..." line of the LIST files (uploads a client saw acknowledged): GET
# BASE/api/v1/profiles/ID/spaa is DIR/FIXTURE converted offline as a pprof named live.cpu,
# past the header line (which holds the id and the time received). Sets READ_BACK.
assert_read_back() {
  local base=$1 dir=$2 id f
  shift 2
  READ_BACK=0
  while read -r id f _; do
    [[ -f "$E2E_TMP/$f.offline.spaa" ]] ||
      "$SPAA_BIN" convert --from pprof --name live.cpu "$dir/$f" -o "$E2E_TMP/$f.offline.spaa" ||
      fail "offline convert $f"
    curl -sS -o "$E2E_TMP/got.spaa" -w '%{http_code}' "$base/api/v1/profiles/$id/spaa" \
      >"$E2E_TMP/code" || fail "download $id"
    assert_eq 200 "$(cat "$E2E_TMP/code")" "GET spaa of $id ($f)"
    cmp -s <(tail -n +2 "$E2E_TMP/got.spaa") <(tail -n +2 "$E2E_TMP/$f.offline.spaa") ||
      fail "$id ($f) does not read back as its offline conversion"
    READ_BACK=$((READ_BACK + 1))
  done < <(cat "$@")
}
