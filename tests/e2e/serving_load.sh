#!/usr/bin/env bash
# The serving core under load, on 127.0.0.1 (tests/e2e/loadclient.py drives the sockets):
#  - 2,000 idle connections are held while a client ingests and /healthz answers;
#  - 200 slowloris connections (a head byte per second) are dropped by the header timeout
#    while a normal client's requests succeed; a body under the minimum rate is dropped;
#  - 256 clients posting small profiles get only 2xx or 503/429 with Retry-After, and no
#    connection is closed without an answer;
#  - over --max-connections a request gets 503 + Retry-After + JSON, and the refusals are
#    logged as one line with a count, not a line each.
# SPAA_LOAD_SECONDS (default 3) is how long the 256 clients post; tests/load.sh runs 20.
source "$(dirname "$0")/lib.bash"

LOAD="$(dirname "$0")/loadclient.py"
SECONDS_POST=${SPAA_LOAD_SECONDS:-3}
BODY="$(dirname "$0")/../data/spec_examples.spaa"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if (($(ulimit -n) < 4500)); then
  echo "skip [$E2E_NAME]: open files limit $(ulimit -n) is under 4500"
  exit 77
fi

start_server --header-timeout 2 --log-level warn
port=$SERVER_PORT

# 2,000 idle connections held for 6 s (no byte sent: the idle timeout, 30 s, governs them)
python3 "$LOAD" idle "$port" 2000 6 >"$E2E_TMP/idle.json" &
idle_pid=$!
wait_open 2000
http GET /healthz
assert_eq 200 "$HTTP_CODE" "/healthz with 2,000 idle connections open"
http POST /api/v1/spaa --data-binary @"$BODY"
assert_eq 200 "$HTTP_CODE" "an upload with 2,000 idle connections open"
wait "$idle_pid"
idle=$(cat "$E2E_TMP/idle.json")
echo "idle connections: $idle"
assert_eq 2000 "$(json_get "$idle" opened)" "idle connections opened"
assert_eq 2000 "$(json_get "$idle" open_at_end)" "idle connections still open after 6 s"

# slowloris: 200 connections trickling a head; dropped after the 2 s header timeout
python3 "$LOAD" slowloris "$port" 200 12 >"$E2E_TMP/slow.json" &
slow_pid=$!
sleep 1
for i in 1 2 3 4 5; do
  http POST /api/v1/spaa --data-binary @"$BODY"
  assert_eq 200 "$HTTP_CODE" "upload $i during the slowloris"
  http GET /healthz
  assert_eq 200 "$HTTP_CODE" "/healthz $i during the slowloris"
  sleep 0.5
done
wait "$slow_pid"
slow=$(cat "$E2E_TMP/slow.json")
echo "slowloris: $slow"
assert_eq 200 "$(json_get "$slow" closed)" "slowloris connections dropped"
assert_eq 0 "$(json_get "$slow" still_open)" "slowloris connections left open"

# a body trickling at 10 bytes/s (under the 1 KiB/s minimum) is dropped once the first
# header_timeout (2 s) has passed, while the server keeps answering
python3 "$LOAD" slowbody "$port" 12 >"$E2E_TMP/slowbody.json" &
sb_pid=$!
sleep 1
http GET /healthz
assert_eq 200 "$HTTP_CODE" "/healthz during a slow body"
wait "$sb_pid"
sb=$(cat "$E2E_TMP/slowbody.json")
echo "slow body: $sb"
assert_eq 1 "$(json_get "$sb" closed)" "a body under the minimum rate dropped"

# 256 clients posting small profiles
python3 "$LOAD" post "$port" 256 "$SECONDS_POST" /api/v1/spaa "$BODY" >"$E2E_TMP/post.json"
post=$(cat "$E2E_TMP/post.json")
echo "256 clients, ${SECONDS_POST} s: $post"
assert_eq 0 "$(json_get "$post" unanswered)" "connections closed without an answer"
assert_eq 0 "$(json_get "$post" no_retry_after)" "503/429 answers without Retry-After"
other=$(printf '%s' "$post" | python3 -c 'import json,sys; s=json.load(sys.stdin)["status"]; print(sum(v for k,v in s.items() if not (k.startswith("2") or k in ("503","429"))))')
assert_eq 0 "$other" "answers other than 2xx, 503 and 429"
(($(json_get "$post" requests) > 0)) || fail "no request answered"
http GET /healthz
assert_eq 200 "$HTTP_CODE" "/healthz after the load"
stop_server
(($(grep -c 'level=info msg="request"' "$SERVER_LOG" || true) == 0)) ||
  fail "request lines logged at --log-level warn"

# the same clients against a server whose memory budget holds one conversion: the others
# wait, then get 503 with Retry-After; none is closed without an answer
start_server --memory-budget 1k --log-level warn
python3 "$LOAD" post "$SERVER_PORT" 64 3 /api/v1/spaa "$BODY" >"$E2E_TMP/post2.json"
post=$(cat "$E2E_TMP/post2.json")
echo "64 clients, a one-conversion budget: $post"
assert_eq 0 "$(json_get "$post" unanswered)" "closed without an answer (budget)"
assert_eq 0 "$(json_get "$post" no_retry_after)" "503 without Retry-After (budget)"
busy=$(printf '%s' "$post" | python3 -c 'import json,sys; s=json.load(sys.stdin)["status"]; print(s.get("503", 0))')
other=$(printf '%s' "$post" | python3 -c 'import json,sys; s=json.load(sys.stdin)["status"]; print(sum(v for k,v in s.items() if k not in ("200","503")))')
assert_eq 0 "$other" "answers other than 200 and 503 (budget)"
((busy > 0)) || fail "no 503 with a one-conversion budget"
(($(printf '%s' "$post" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"].get("200", 0))') > 0)) ||
  fail "no upload stored with a one-conversion budget"
stop_server
assert_contains "$(cat "$SERVER_LOG")" "over the memory budget" "the budget refusals logged with a count"

# a body declared past the budget, sent without waiting for 100-continue: read and thrown
# away, then 503 with Retry-After, not a connection reset under the client's feet. A slow
# upload holds the budget (its declared length is charged when its head arrives).
start_server --memory-budget 1m
head -c 1300000 /dev/zero | tr '\0' 'x' >"$E2E_TMP/big.body"
curl -sS -o /dev/null -H 'Expect:' --limit-rate 100k --data-binary @"$E2E_TMP/big.body" \
  "$SERVER_URL/api/v1/spaa" 2>/dev/null &
holder=$!
sleep 1
pids=()
for i in 1 2 3 4; do
  curl -sS -o /dev/null -D "$E2E_TMP/big$i.h" -w '%{http_code}\n' -H 'Expect:' \
    --data-binary @"$E2E_TMP/big.body" "$SERVER_URL/api/v1/spaa" >"$E2E_TMP/big$i.code" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
for i in 1 2 3 4; do
  assert_eq 503 "$(tail -n1 "$E2E_TMP/big$i.code")" "a body past the budget, upload $i"
  assert_contains "$(cat "$E2E_TMP/big$i.h")" "Retry-After" "Retry-After past the budget"
done
stop_server

# over the connection limit: 503, Retry-After, JSON; one log line with the count
start_server --max-connections 20
python3 "$LOAD" idle "$SERVER_PORT" 40 4 >/dev/null &
idle_pid=$!
wait_open 40
for i in 1 2 3 4 5; do
  http POST /api/v1/spaa --data-binary @"$BODY"
  assert_eq 503 "$HTTP_CODE" "upload $i over the connection limit"
  assert_contains "$HTTP_HEADERS" "Retry-After: 1" "Retry-After over the connection limit"
  assert_eq busy "$(json_get "$HTTP_BODY" error)" "error code over the connection limit"
  assert_contains "$HTTP_BODY" "over its limit of 20" "detail over the connection limit"
done
http GET /healthz
assert_eq 200 "$HTTP_CODE" "/healthz over the connection limit"
http GET /metrics
assert_eq 200 "$HTTP_CODE" "/metrics over the connection limit (monitoring sees the refusals)"
assert_contains "$HTTP_BODY" 'spaa_relay_connections_refused_total' "/metrics over the limit"
wait "$idle_pid"
http POST /api/v1/spaa --data-binary @"$BODY"
assert_eq 200 "$HTTP_CODE" "an upload once the idle connections are gone"
stop_server
lines=$(grep -c 'over the connection limit' "$SERVER_LOG" || true)
assert_eq 1 "$lines" "log lines about the connection limit"
assert_contains "$(grep 'over the connection limit' "$SERVER_LOG")" "count=5" \
  "the refusals counted in one line"
echo "serving_load: ok"
