#!/usr/bin/env bash
# SIGHUP as an operator uses it: new retention rules apply at once (a pass runs now, not
# after the old interval), settings read only at start are named in the reload line
# (needs_restart=...), and emptying a token list says what is open now.
source "$(dirname "$0")/lib.bash"
SPAA=$(dirname "$0")/../data/spec_examples.spaa
CONF="$E2E_TMP/relay.conf"
printf 'retention = 30d\nretention_interval = 1h\ningest_token = in\nread_token = rd\n' >"$CONF"
start_server --config "$CONF" --grpc-listen ''
http POST '/api/v1/spaa?service=kept' -H 'Authorization: Bearer in' --data-binary @"$SPAA"
assert_eq 200 "$HTTP_CODE" "upload ($HTTP_BODY)"
count() {
  http GET '/api/v1/profiles?service=kept' -H 'Authorization: Bearer rd'
  jq '.profiles | length' <<<"$HTTP_BODY"
}
assert_eq 1 "$(count)" "stored under 30 days of retention"

# hup: rewrite the config, SIGHUP, wait for the Nth reload line
reloads=0
hup() {
  printf "$1" >"$CONF"
  reloads=$((reloads + 1))
  kill -HUP "$SERVER_PID"
  local i
  for ((i = 0; i < 100; i++)); do
    (($(grep -c 'configuration reloaded' "$SERVER_LOG") >= reloads)) && return 0
    sleep 0.1
  done
  fail "no reload line after SIGHUP $reloads"
}

# retention of 1 s, interval 1 s: the profile goes within seconds, not after the old hour
sleep 1.2
hup 'retention = 1s\nretention_interval = 1s\ningest_token = in\nread_token = rd\n'
for ((i = 0; i < 100; i++)); do
  [[ "$(count)" == 0 ]] && break
  sleep 0.1
done
assert_eq 0 "$(count)" "the new retention applied within 10 s of SIGHUP"

# settings read at start: named, all of them, in the reload line
hup 'retention = 1s\nretention_interval = 1s\ningest_token = in\nread_token = rd\nidle_timeout = 7\nqueue_depth = 99\ndurability = normal\n'
line=$(grep 'configuration reloaded' "$SERVER_LOG" | tail -n1)
assert_contains "$line" "needs_restart=idle_timeout,queue_depth,durability" "restart-only settings named"

# the read tokens removed: the query API is open, and the log says so at the reload; the
# restart-only settings are still named (they differ from what runs, not from the last file)
hup 'retention = 1s\nretention_interval = 1s\ningest_token = in\nidle_timeout = 7\nqueue_depth = 99\ndurability = normal\n'
line=$(grep 'configuration reloaded' "$SERVER_LOG" | tail -n1)
assert_contains "$line" "needs_restart=idle_timeout,queue_depth,durability" \
  "restart-only settings named again at the next reload"
# (with a read token at start, the warning was not logged before)
grep -q 'no read tokens configured: the query API is open' "$SERVER_LOG" ||
  fail "the reload does not warn that reads are open"
http GET '/api/v1/profiles'
assert_eq 200 "$HTTP_CODE" "reads need no token now"
# back to the values running since the start: nothing needs a restart
hup 'retention = 1s\nretention_interval = 1s\ningest_token = in\n'
line=$(grep 'configuration reloaded' "$SERVER_LOG" | tail -n1)
[[ "$line" != *needs_restart* ]] || fail "settings back to the running ones named: $line"
# a retention without a unit is refused (it would keep seconds), the running one kept
printf 'retention = 30\nretention_interval = 1s\ningest_token = in\n' >"$CONF"
kill -HUP "$SERVER_PID"
wait_logged "$SERVER_LOG" 'configuration not reloaded' "a bare retention number on SIGHUP"
grep 'configuration not reloaded' "$SERVER_LOG" | grep -q "retention '30' has no unit: write 30d" ||
  fail "a bare retention number was not refused: $(tail -n 3 "$SERVER_LOG")"
stop_server || fail "server exit"
echo "ok [$E2E_NAME]"
