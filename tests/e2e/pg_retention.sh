#!/usr/bin/env bash
# Retention on several relays sharing one PostgreSQL runs on one relay at a time: two relays
# with a pass due every second; the one holding the leadership lock runs passes (its metric
# counts them, its log says it leads and what it deleted), the other skips every pass (its
# metric stays at 0, its log says another relay leads). The leader is killed with SIGKILL:
# its session ends, PostgreSQL releases the lock, and the other relay takes over and deletes
# what has grown old since.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pg_lib.bash"

pg_start || exit $?
trap 'pg_stop; e2e_cleanup' EXIT

shop_spaa "$E2E_TMP/p.spaa"
RELAY=(--store "$SPAA_TEST_STORE" --read-token rt --ingest-token it --retention 2s
  --retention-interval 1s)

# wait_for WHAT CMD...: until CMD succeeds (checked every 0.2 s, 60 s at most)
wait_for() {
  local what=$1 i
  shift
  for ((i = 0; i < 300; i++)); do
    "$@" && return 0
    sleep 0.2
  done
  fail "gave up waiting: $what"
}

# passes_of URL: the relay's retention passes so far
passes_of() {
  curl -sS -H 'Authorization: Bearer rt' "$1/metrics" | awk '$1 == "spaa_relay_retention_passes_total" { print $2 }'
}
passes_at_least() {
  local n
  n=$(passes_of "$1")
  [[ -n "$n" ]] && ((n >= $2))
}
logged() { grep -q "$2" "$1"; }
profiles_of() {
  curl -sS -H 'Authorization: Bearer rt' "$1/api/v1/profiles?service=$2" | jq '.profiles | length'
}
none_left() { [[ $(profiles_of "$1" "$2") == 0 ]]; }

upload() {
  http POST "/api/v1/spaa?service=$1" -H 'Authorization: Bearer it' \
    --data-binary @"$E2E_TMP/p.spaa"
  assert_eq 200 "$HTTP_CODE" "an upload to $SERVER_URL ($HTTP_BODY)"
}

# ---- relay A leads, relay B follows --------------------------------------------------------
start_server "${RELAY[@]}"
A_URL=$SERVER_URL A_LOG=$SERVER_LOG A_PID=$SERVER_PID
wait_for "relay A to lead" logged "$A_LOG" 'retention leadership taken'
start_server "${RELAY[@]}"
B_URL=$SERVER_URL B_LOG=$SERVER_LOG
wait_for "relay B to see another relay lead" logged "$B_LOG" 'retention led by another relay'

SERVER_URL=$B_URL
upload old
upload old
# the leader deletes them once they are 2 s old; several passes go by meanwhile
wait_for "relay A to delete the old profiles" none_left "$A_URL" old
a0=$(passes_of "$A_URL")
wait_for "relay A to run more passes" passes_at_least "$A_URL" $((a0 + 3))
assert_eq 0 "$(passes_of "$B_URL")" "passes run by the relay that does not lead"
grep -q 'retention deleted profiles' "$A_LOG" || fail "relay A logged no deletion"
if grep -q 'retention deleted profiles\|retention leadership taken' "$B_LOG"; then
  fail "relay B ran retention while relay A led: $(grep 'retention' "$B_LOG" | head -3)"
fi
(($(grep -c 'retention led by another relay' "$B_LOG") == 1)) ||
  fail "relay B logged its following more than once (each change is logged once)"

# ---- relay A dies: relay B takes over -------------------------------------------------------
kill -KILL "$A_PID"
wait "$A_PID" 2>/dev/null || true
upload later
wait_for "relay B to take the leadership" logged "$B_LOG" 'retention leadership taken'
wait_for "relay B to run passes" passes_at_least "$B_URL" 1
wait_for "relay B to delete what grew old" none_left "$B_URL" later
grep -q 'retention deleted profiles' "$B_LOG" || fail "relay B logged no deletion"

# ---- a relay started again follows the new leader --------------------------------------------
start_server "${RELAY[@]}"
C_URL=$SERVER_URL C_LOG=$SERVER_LOG
wait_for "relay C to see another relay lead" logged "$C_LOG" 'retention led by another relay'
b0=$(passes_of "$B_URL")
wait_for "relay B to go on leading" passes_at_least "$B_URL" $((b0 + 2))
assert_eq 0 "$(passes_of "$C_URL")" "passes run by the relay started after the takeover"
echo "retention led by one relay at a time; taken over after SIGKILL"
