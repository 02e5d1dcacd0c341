#!/usr/bin/env bash
# The gRPC listener under the memory budget, against a client that holds calls: one h2c
# connection opens six Export calls, each announcing a 42 MiB message, sends all of each but
# its last bytes, then stays (pinging), one more byte a second until told to stop, then none.
# Under --memory-budget 64m:
#  - the first call's message is charged as soon as its prefix is in, though the prefix
#    comes in two DATA frames (spaa_relay_memory_budget_used_bytes shows it; an HTTP upload
#    or a Connect call that does not fit beside it is refused 503);
#  - the five others are refused at once: UNAVAILABLE with grpc-retry-pushback-ms, saying
#    why, then RST_STREAM NO_ERROR (the client need not send the rest);
#  - a normal export of an 8 MiB request meanwhile is stored;
#  - once its bytes stop, the held call is reset (RST_STREAM CANCEL) after idle_timeout,
#    whatever it sent before (its average is far over body_min_rate), its charge given back.
# Before, the listener held bodies under a cap of its own (256 MiB) outside the budget: the
# normal export was refused "too many calls in flight" and nothing was ever reset.
source "$(dirname "$0")/lib.bash"

PY=/usr/bin/python3
CLIENT="$(dirname "$0")/../grpc/grpc_client.py"
"$PY" -c 'import grpc, h2' 2>/dev/null ||
  fail "python3-grpcio and python3-h2 are needed (scripts/install-deps.sh)"
command -v jq >/dev/null || fail "jq is needed"

# metric NAME: its value in /metrics (labels included in NAME), or empty
metric() {
  http GET /metrics
  awk -v n="$1" '$1 == n { print $2 }' <<<"$HTTP_BODY"
}

mib=$((1 << 20))
normal="$E2E_TMP/normal.pb"
python3 "$(dirname "$0")/gen_otlp.py" "$normal" 8 >/dev/null
start_server --memory-budget 64m --idle-timeout 6 --log-level info
G=$(grpc_port)
assert_eq 0 "$(metric spaa_relay_memory_budget_used_bytes)" "nothing held at start"

out="$E2E_TMP/hold.out"
"$PY" "$CLIENT" hold "$G" 6 42 120 --split --trickle 1 >"$out" 2>&1 &
holder=$!
E2E_PIDS+=("$holder")
for ((i = 0; i < 1200; i++)); do # the client gives up by itself after 120 s
  [[ -s "$out" ]] && break
  kill -0 "$holder" 2>/dev/null || break
  sleep 0.1
done
sent=$(head -n 1 "$out")
[[ $sent == *sent_mib* ]] || fail "the holding client did not send: $(cat "$out")"

# held: the one admitted message is charged (42 MiB and its prefix)
used=$(metric spaa_relay_memory_budget_used_bytes)
((${used:-0} >= 42 * mib)) ||
  fail "a held message charged to the memory budget: used ${used:-none} bytes ($sent)"
# one budget for both listeners: 30 MiB more over HTTP do not fit beside it
head -c $((30 * mib)) /dev/zero >"$E2E_TMP/big.bin"
http POST /v1development/profiles -H 'Content-Type: application/x-protobuf' \
  --data-binary @"$E2E_TMP/big.bin"
assert_eq 503 "$HTTP_CODE" "an HTTP body that does not fit beside the held message"
# nor as a Connect call on the gRPC listener: refused at its Content-Length, or as it arrives
res=$("$PY" "$CLIENT" connect "$G" "$E2E_TMP/big.bin" application/proto \
  --header "content-length:$((30 * mib))")
assert_eq 503 "$(jq -r '.[":status"]' <<<"$res")" "a Connect body that does not fit: $res"
assert_contains "$(jq -r .body <<<"$res")" "a $((30 * mib))-byte body does not fit" \
  "refused at its Content-Length"
[[ -n "$(jq -r '.["retry-after"]' <<<"$res")" ]] || fail "no Retry-After: $res"
res=$("$PY" "$CLIENT" connect "$G" "$E2E_TMP/big.bin" application/proto)
assert_eq 503 "$(jq -r '.[":status"]' <<<"$res")" "a Connect body that passes the budget: $res"
# a normal export is stored meanwhile
res=$("$PY" "$CLIENT" export "$G" "$normal" --timeout 60)
assert_eq OK "$(jq -r .code <<<"$res")" "a normal export while calls are held: $res"
assert_eq 0 "$(jq -r .rejected <<<"$res")" "nothing rejected of the normal export"

# the held call stops: reset after idle_timeout
kill -USR1 "$holder"
wait "$holder" || fail "the holding client failed: $(cat "$out")"
calls=$(tail -n 1 "$out")
assert_eq 1 "$(jq '[.calls[] | select(.reset == 8)] | length' <<<"$calls")" \
  "the stalled call reset (RST_STREAM CANCEL): $calls"
assert_eq 5 "$(jq '[.calls[] | select(.status == "14" and .reset == 0)] | length' <<<"$calls")" \
  "five calls refused UNAVAILABLE, then told to stop sending (RST_STREAM NO_ERROR): $calls"
assert_eq 5 "$(jq '[.calls[] | select(.status == "14" and .pushback != null)] | length' \
  <<<"$calls")" "each refusal with grpc-retry-pushback-ms: $calls"
assert_contains "$(jq -r '[.calls[] | select(.status == "14")][0].message' <<<"$calls")" \
  "does not fit in what is left of the memory budget for requests in flight" "the refusal says why"

# everything given back; the refusals and the reset counted
assert_eq 0 "$(metric spaa_relay_memory_budget_used_bytes)" "nothing held once the calls are over"
busy=$(metric 'spaa_relay_requests_busy_total{reason="memory_budget"}')
assert_eq 8 "$busy" "five gRPC calls, two Connect calls and one HTTP upload refused, counted"
assert_eq 1 "$(metric 'spaa_relay_connections_dropped_total{reason="grpc_stream_too_slow"}')" \
  "the stalled stream counted"
wait_logged "$SERVER_LOG" 'msg="grpc slow clients dropped".*streams=1' "the reset logged"
# the six messages alone were 252 MiB when the listener kept them all
assert_rss_below "$SERVER_PID" $((224 * 1024)) "a 64m budget with calls held"
stop_server
echo "ok [$E2E_NAME]: ${used} bytes charged while held, 5 calls refused, a normal export stored, the stalled call reset"
