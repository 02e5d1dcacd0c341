#!/usr/bin/env bash
# PostgreSQL stopped at once (pg_ctl -m immediate) under load, at the default log level: the
# outage is said in the store's few lines ("connection lost", "reconnected" with the count of
# failures), not one line per refused upload ("store failed", "otlp export" status=503), and
# the WARNING the server sends each connection as it dies comes through the log, once, in its
# format, never as a bare line of libpq on stderr. While it is down /readyz says 503 with
# libpq's reason, in words that fit a database that was up before.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pg_lib.bash"

FX="${SPAA_SHARED:-}/fixtures"
if [[ ! -d "$FX/pprof" || ! -d "$FX/otlp" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures ($FX)"
  exit 77
fi
pg_start || exit $?
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; pg_stop; e2e_cleanup' EXIT

start_server --store "$SPAA_TEST_STORE" --retention 0

# client OUT KIND: uploads until $E2E_TMP/stop exists, one status line each into OUT
client() {
  local code
  while [[ ! -e $E2E_TMP/stop ]]; do
    if [[ $2 == otlp ]]; then
      code=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Content-Type: application/x-protobuf' \
        --data-binary @"$FX/otlp/v1dev_01_cpu_basic.bin" "$SERVER_URL/v1development/profiles" ||
        true)
    else
      code=$(curl -sS -o /dev/null -w '%{http_code}' \
        --data-binary @"$FX/pprof/pyroscope_go.cpu.labels.pprof" \
        "$SERVER_URL/ingest?name=outage.cpu&format=pprof" || true)
    fi
    echo "$code" >>"$1"
  done
}
# count CODE: answers with that status so far, from every client
count() { cat "$E2E_TMP"/c? 2>/dev/null | grep -c "^$1\$" || true; }

for k in 1 2 3 4; do
  kind=pprof
  ((k % 2)) || kind=otlp
  client "$E2E_TMP/c$k" "$kind" &
  pids+=($!)
done
for ((t = 0; t < 200; t++)); do (($(count 200) >= 8)) && break; sleep 0.05; done
(($(count 200) >= 8)) || fail "uploads were not stored before the outage: $(cat "$E2E_TMP"/c? | sort | uniq -c)"

pg_down immediate
for ((t = 0; t < 200; t++)); do (($(count 503) >= 40)) && break; sleep 0.05; done
refused=$(count 503)
((refused >= 40)) || fail "uploads were not refused while PostgreSQL was down ($refused 503s)"

http GET /readyz
assert_eq 503 "$HTTP_CODE" "/readyz while PostgreSQL is down"
detail=$(jq -r .detail <<<"$HTTP_BODY")
assert_contains "$detail" "cannot be reached: " "/readyz says why ($HTTP_BODY)"
assert_contains "$detail" "connection to server" "/readyz gives libpq's reason ($HTTP_BODY)"
[[ $detail != *"yet"* && $detail != *"()"* ]] || fail "/readyz after an outage: $detail"

pg_up
back=0
for ((t = 0; t < 200; t++)); do
  n=$(count 200)
  sleep 0.1
  (($(count 200) > n)) && { back=1; break; }
done
((back)) || fail "uploads not stored 20 s after PostgreSQL came back"
touch "$E2E_TMP/stop"
wait "${pids[@]}"
echo "$(count 200) uploads stored, $(count 503) refused with 503 while PostgreSQL was down"

# every line in the log's format: no bare line of libpq ("WARNING:  terminating connection...")
bare=$(grep -cvE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z level=' "$SERVER_LOG" || true)
((bare == 0)) || fail "$bare lines outside the log format: $(grep -vE '^[0-9]{4}-' "$SERVER_LOG" | head -3)"
# the server's WARNING, once however many connections got it
notice=$(grep 'msg="PostgreSQL notice"' "$SERVER_LOG" | grep 'immediate shutdown' || true)
[[ $(grep -c . <<<"$notice") == 1 && $notice == *"level=warn"* && $notice == *"severity=WARNING"* ]] ||
  fail "want one 'PostgreSQL notice' warn line of the shutdown, got: $notice"
# no line per refused upload: the store's summary lines say it
for m in 'msg="store failed"' 'msg="otlp export" status=503'; do
  n=$(grep -c "$m" "$SERVER_LOG" || true)
  ((n == 0)) || fail "$n '$m' lines for $refused refusals: $(grep -m2 "$m" "$SERVER_LOG")"
done
lost=$(grep -c 'msg="PostgreSQL connection lost"' "$SERVER_LOG" || true)
assert_eq 1 "$lost" "'PostgreSQL connection lost' lines ($(grep -E 'msg="PostgreSQL (connection lost|reconnected)"' "$SERVER_LOG"))"
again=$(grep 'msg="PostgreSQL reconnected"' "$SERVER_LOG" || true)
[[ $(grep -c . <<<"$again") == 1 ]] || fail "want one 'reconnected' line, got: $again"
failed=$(sed -n 's/.* failed=\([0-9]*\).*/\1/p' <<<"$again")
((failed > 0)) || fail "the 'reconnected' line counts no failure: $again"
stop_server || fail "server exit"
echo "ok [$E2E_NAME]"
