#!/usr/bin/env bash
# A relay started while its PostgreSQL is down (tests/support/pg.sh's cluster, stopped): it
# starts, /readyz says 503 and uploads get 503 with Retry-After; once PostgreSQL is up the
# relay connects and migrates by itself and stores. The location carries a password
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
