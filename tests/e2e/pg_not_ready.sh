#!/usr/bin/env bash
# A relay started while its PostgreSQL is down (tests/support/pg.sh's cluster, stopped): it
# starts, /readyz says 503 and uploads get 503 with Retry-After; once PostgreSQL is up the
# relay connects and migrates by itself (logged once) and stores. Then an outage: the
# cluster stopped and restarted, logged as "connection lost", a summary at most every 10 s
# and "reconnected". The location carries a password
# (ignored by the cluster's trust authentication): no log line shows it, the redacted
# location (user:***@) is what the messages name.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pg_lib.bash"

pg_start || exit $?
trap 'pg_stop; e2e_cleanup' EXIT
pg_down fast
STORE="postgresql://postgres:Hunter2secret@/spaa?host=$SPAA_PG_DIR&port=$SPAA_PG_PORT"

shop_spaa "$E2E_TMP/p.spaa"

start_server --store "$STORE" --read-token rt --ingest-token it --log-level debug

http GET /healthz
assert_eq 200 "$HTTP_CODE" "/healthz of a relay whose database is down"
http GET /readyz
assert_eq 503 "$HTTP_CODE" "/readyz before PostgreSQL is reachable"
assert_contains "$HTTP_BODY" '"error":"unavailable"' "/readyz says why, not a shutdown"
assert_contains "$HTTP_BODY" "PostgreSQL at" "/readyz names the database"
assert_contains "$HTTP_BODY" "cannot be reached: connecting to PostgreSQL: connection to server" \
  "/readyz gives libpq's reason"
http POST "/api/v1/spaa?service=early" -H 'Authorization: Bearer it' \
  --data-binary @"$E2E_TMP/p.spaa"
assert_eq 503 "$HTTP_CODE" "an upload before PostgreSQL is reachable ($HTTP_BODY)"
assert_contains "$HTTP_HEADERS" "Retry-After:" "the 503's Retry-After"
http GET "/api/v1/profiles" -H 'Authorization: Bearer rt'
assert_eq 503 "$HTTP_CODE" "a list before PostgreSQL is reachable ($HTTP_BODY)"

pg_up
ready=0
for _ in $(seq 1 100); do
  http GET /readyz
  [[ $HTTP_CODE == 200 ]] && { ready=1; break; }
  sleep 0.1
done
((ready)) || fail "/readyz still $HTTP_CODE 10 s after PostgreSQL came up"
http POST "/api/v1/spaa?service=late" -H 'Authorization: Bearer it' \
  --data-binary @"$E2E_TMP/p.spaa"
assert_eq 200 "$HTTP_CODE" "an upload once PostgreSQL is up ($HTTP_BODY)"
id=$(jq -r .id <<<"$HTTP_BODY")
http GET "/api/v1/profiles/$id/spaa" -H 'Authorization: Bearer rt'
assert_eq 200 "$HTTP_CODE" "reading the profile back"
assert_contains "$HTTP_BODY" "checkout::charge" "the profile read back"
assert_eq 1 "$(pg_sql 'SELECT count(*) FROM profile')" "profiles in the database"
# the schema the relay made once PostgreSQL came up: one info line, versions and time taken
mig=$(grep 'msg="schema migrated"' "$SERVER_LOG" || true)
[[ $(grep -c . <<<"$mig") == 1 && $mig == *"level=info"* && $mig == *" from=0 to="* &&
   $mig == *" took_ms="* ]] || fail "want one 'schema migrated' line from=0, got: $mig"

# --- an outage: PostgreSQL stops, uploads fail for ~12 s, PostgreSQL comes back -----------
# Logged: "connection lost" once with the reason, the failures summarized at most every 10 s
# ("still unavailable", once here), "reconnected" once with the outage's failures; not a
# line per failure from the store (the ingest's own per-upload line is not the store's).
pg_down fast
outage_start=$SECONDS
failed=0
http GET /readyz # (a probe: not an operation the summary counts)
assert_eq 503 "$HTTP_CODE" "/readyz while PostgreSQL is down"
assert_contains "$HTTP_BODY" "cannot be reached: " "/readyz after an outage says why"
[[ $HTTP_BODY != *"()"* && $HTTP_BODY != *" yet"* ]] || fail "/readyz after an outage: $HTTP_BODY"
while ((SECONDS - outage_start < 12)); do
  http POST "/api/v1/spaa?service=outage" -H 'Authorization: Bearer it' \
    --data-binary @"$E2E_TMP/p.spaa"
  assert_eq 503 "$HTTP_CODE" "an upload while PostgreSQL is down ($HTTP_BODY)"
  failed=$((failed + 1))
  sleep 0.5
done
pg_up
stored=0
for _ in $(seq 1 100); do
  http POST "/api/v1/spaa?service=back" -H 'Authorization: Bearer it' \
    --data-binary @"$E2E_TMP/p.spaa"
  [[ $HTTP_CODE == 200 ]] && { stored=1; break; }
  failed=$((failed + 1))
  sleep 0.1
done
((stored)) || fail "uploads still $HTTP_CODE 10 s after PostgreSQL came back ($HTTP_BODY)"
lost=$(grep 'msg="PostgreSQL connection lost"' "$SERVER_LOG" || true)
still=$(grep 'msg="PostgreSQL still unavailable"' "$SERVER_LOG" || true)
back=$(grep 'msg="PostgreSQL reconnected"' "$SERVER_LOG" || true)
[[ $(grep -c . <<<"$lost") == 1 ]] || fail "want one 'connection lost' line, got: $lost"
[[ $lost == *"level=warn"* && $lost == *'reason="'* && $lost == *"postgres:***@"* ]] ||
  fail "the 'connection lost' line names neither the reason nor the database: $lost"
[[ $(grep -c . <<<"$still") == 1 ]] || fail "want one 'still unavailable' line in 12 s, got: $still"
[[ $still == *" failed="* && $still == *" failed_total="* ]] || fail "the summary line: $still"
[[ $(grep -c . <<<"$back") == 1 && $back == *"level=info"* ]] ||
  fail "want one 'reconnected' line at info, got: $back"
n=$(sed -n 's/.* failed=\([0-9]*\).*/\1/p' <<<"$back")
[[ $n == "$failed" ]] || fail "'reconnected' counts $n failures, $failed uploads failed: $back"

# the password never reaches the log; the redacted location does (the 503s were logged)
stop_server
if grep -q "Hunter2secret" "$SERVER_LOG"; then
  fail "the password is in the log: $(grep -m3 Hunter2secret "$SERVER_LOG")"
fi
grep -q "postgres:\*\*\*@" "$SERVER_LOG" ||
  fail "the redacted location is not in the log: $(grep -m5 -i 'store\|ready' "$SERVER_LOG")"

# a store that cannot be opened (a schema newer than the build) is logged redacted too
pg_sql "UPDATE spaa_schema SET version = 999" >/dev/null
"$SPAA_BIN" serve --listen 127.0.0.1:0 --data-dir "$E2E_TMP/d2" --store "$STORE" \
  2>"$E2E_TMP/open.log" && fail "a relay started on a newer schema"
grep -q "Hunter2secret" "$E2E_TMP/open.log" && fail "the password is in the open error: $(cat "$E2E_TMP/open.log")"
grep -q "postgres:\*\*\*@" "$E2E_TMP/open.log" ||
  fail "the open error does not name the location: $(cat "$E2E_TMP/open.log")"
echo "ok: not ready until PostgreSQL came up, then stored by itself; no password logged"
