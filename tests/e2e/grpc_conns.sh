#!/usr/bin/env bash
# The gRPC listener past max_connections: a call on a connection over the limit is answered
# (a gRPC status that says why, which exporters retry on), not reset; a flood of connections
# past the limit is closed at accept and logged as one line with counts, not one per
# connection, and counted in /metrics; once connections go away, calls are served again.
# Slow clients: a frame trickled in closes its connection, a body trickled in resets its
# stream, past header_timeout (and body_min_rate), while other calls are served.
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:?}/fixtures/otlp"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no $FIX"
  exit 77
fi
PY=/usr/bin/python3
CLIENT="$(dirname "$0")/../grpc/grpc_client.py"
"$PY" -c 'import grpc' 2>/dev/null || fail "python3-grpcio is needed (scripts/install-deps.sh)"
command -v jq >/dev/null || fail "jq is needed"
f=$(ls "$FIX"/v1*.bin | head -n 1)

# hold PORT N SECONDS: N connections that send the client preface, an empty SETTINGS and the
# ACK of the server's, then stay open and silent; prints "held" once all are connected.
hold() {
  exec "$PY" - "$@" <<'EOF'
import socket, sys, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
socks = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]) +
              bytes([0, 0, 0, 4, 1, 0, 0, 0, 0]))
    socks.append(s)
print("held", flush=True)
time.sleep(secs)
EOF
}

start_server --max-connections 2 --log-level info
G=$(grpc_port)
out=$("$PY" "$CLIENT" export "$G" "$f")
assert_eq OK "$(jq -r .code <<<"$out")" "a call under the limit"

# two connections held: the limit is reached, a third connection's call is answered
fifo="$E2E_TMP/held"
mkfifo "$fifo"
(hold "$G" 2 60 >"$fifo") &
holder=$!
E2E_PIDS+=("$holder")
read -r line <"$fifo"
assert_eq held "$line" "two connections held"
sleep 0.5
out=$("$PY" "$CLIENT" export "$G" "$f" --timeout 10)
assert_eq UNAVAILABLE "$(jq -r .code <<<"$out")" "a call past max_connections: $out"
assert_contains "$(jq -r .details <<<"$out")" "too many gRPC connections (max_connections 2)" \
  "the status says why"

# a flood of 300 connections past the limit: some held to be answered, the rest closed at
# accept; one log line for the lot (the interval is 10 s), and both counted in /metrics
"$PY" - "$G" <<'EOF'
import socket, sys
port = int(sys.argv[1])
socks = []
for _ in range(300):
    try:
        socks.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    except OSError:
        pass
for s in socks:
    s.close()
EOF
sleep 0.5
lines=$(grep -c 'msg="grpc connections over the limit"' "$SERVER_LOG" || true)
((lines >= 1 && lines <= 2)) || fail "expected one or two 'over the limit' lines, got $lines"
grep -q 'msg="grpc connection refused' "$SERVER_LOG" &&
  fail "a log line per refused connection"
http GET /metrics
closed=$(grep -o 'spaa_relay_connections_refused_total{reason="grpc_hard_limit"} [0-9]*' \
  <<<"$HTTP_BODY" | awk '{print $2}')
answered=$(grep -o 'spaa_relay_connections_refused_total{reason="grpc_max_connections"} [0-9]*' \
  <<<"$HTTP_BODY" | awk '{print $2}')
((${closed:-0} >= 100)) || fail "connections closed at accept counted: ${closed:-none}"
((${answered:-0} >= 1)) || fail "connections held to be answered counted: ${answered:-none}"

# the HTTP listener is not affected, and once the held connections go, calls are served
http GET /healthz
assert_eq 200 "$HTTP_CODE" "/healthz while the gRPC listener is full"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
ok=
for ((i = 0; i < 50; i++)); do
  out=$("$PY" "$CLIENT" export "$G" "$f" --timeout 10)
  if [[ $(jq -r .code <<<"$out") == OK ]]; then
    ok=1
    break
  fi
  sleep 0.2
done
[[ -n "$ok" ]] || fail "calls not served again after the held connections closed: $out"
stop_server

# slow clients (header_timeout 2 s, body_min_rate 1 KiB/s): a HEADERS frame trickled a byte
# at a time gets its connection closed, a message trickled a byte at a time gets its stream
# reset (CANCEL = 8), each within seconds; a normal call meanwhile is served; the drops are
# counted and logged as one line
start_server --header-timeout 2 --body-min-rate 1k --log-level info
G=$(grpc_port)
"$PY" "$CLIENT" slow "$G" "$f" --frame >"$E2E_TMP/frame.json" &
p1=$!
"$PY" "$CLIENT" slow "$G" "$f" --body >"$E2E_TMP/body.json" &
p2=$!
sleep 1
out=$("$PY" "$CLIENT" export "$G" "$f")
assert_eq OK "$(jq -r .code <<<"$out")" "a call while slow clients trickle"
wait "$p1" "$p2"
fr=$(cat "$E2E_TMP/frame.json")
bd=$(cat "$E2E_TMP/body.json")
assert_eq true "$(jq -r .closed <<<"$fr")" "a trickled frame closes its connection: $fr"
awk -v s="$(jq -r .seconds <<<"$fr")" 'BEGIN { exit !(s >= 1.5 && s < 8) }' ||
  fail "the trickled frame's connection closed after 2 s and not much later: $fr"
assert_eq 8 "$(jq -r .reset <<<"$bd")" "a trickled body resets its stream: $bd"
awk -v s="$(jq -r .seconds <<<"$bd")" 'BEGIN { exit !(s >= 1.5 && s < 8) }' ||
  fail "the trickled body's stream reset after 2 s and not much later: $bd"
sleep 1
grep -q 'msg="grpc slow clients dropped"' "$SERVER_LOG" || fail "no 'slow clients dropped' line"
http GET /metrics
assert_contains "$HTTP_BODY" 'spaa_relay_connections_dropped_total{reason="grpc_frame_timeout"} 1' \
  "the closed connection counted"
assert_contains "$HTTP_BODY" 'spaa_relay_connections_dropped_total{reason="grpc_stream_too_slow"} 1' \
  "the reset stream counted"
stop_server
echo "ok [$E2E_NAME]: ${answered} answered past the limit, ${closed} closed at accept, one log line; trickled frame closed after $(jq -r .seconds <<<"$fr") s, trickled body reset after $(jq -r .seconds <<<"$bd") s"
