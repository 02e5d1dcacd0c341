#!/usr/bin/env bash
# PostgreSQL: uploads of a service while that service is deleted over and over. A delete's
# sweep removes the service's block dictionary and shared rows; a relay's writer must not
# reuse the ids it cached before the sweep. Every upload is answered 200 (or a documented 503
# with Retry-After), never a 500, no answer carries SQL text, and what is left reads back.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pg_lib.bash"

pg_start || exit $?
trap 'pg_stop; e2e_cleanup' EXIT

start_server --store "$SPAA_TEST_STORE" --read-token rt --ingest-token it --admin-token adm
shop_spaa "$E2E_TMP/p.spaa"

UNTIL=$(($(date +%s) + 8))
uploader() { # OUT: one "code" line per upload, the bodies of non-200 answers after it
  local out=$1 code
  while (($(date +%s) < UNTIL)); do
    code=$(curl -sS -o "$out.body" -w '%{http_code}' -H 'Authorization: Bearer it' \
      --data-binary @"$E2E_TMP/p.spaa" "$SERVER_URL/api/v1/spaa?service=racing" || true)
    echo "$code" >>"$out"
    [[ "$code" == 200 ]] || { cat "$out.body"; echo; } >>"$out.bad"
  done
}
deleter() {
  local code
  while (($(date +%s) < UNTIL)); do
    code=$(curl -sS -o "$E2E_TMP/del.body" -w '%{http_code}' -X DELETE \
      -H 'Authorization: Bearer adm' "$SERVER_URL/api/v1/profiles?service=racing" || true)
    echo "$code" >>"$E2E_TMP/del"
    sleep 0.05
  done
}
pids=()
for k in 1 2 3 4; do
  uploader "$E2E_TMP/up$k" &
  pids+=($!)
done
deleter &
pids+=($!)
wait "${pids[@]}"

cat "$E2E_TMP"/up? >"$E2E_TMP/all"
total=$(wc -l <"$E2E_TMP/all")
ok=$(grep -c '^200$' "$E2E_TMP/all" || true)
deletes=$(grep -c '^200$' "$E2E_TMP/del" || true)
echo "uploads: $total, 200: $ok; deletes answered 200: $deletes"
((total > 20)) || fail "too few uploads ran ($total)"
((deletes > 5)) || fail "too few deletes ran ($deletes): $(sort "$E2E_TMP/del" | uniq -c)"
bad=$(grep -v '^200$' "$E2E_TMP/all" | grep -vc '^503$' || true)
((bad == 0)) || fail "uploads answered other than 200/503: $(sort "$E2E_TMP/all" | uniq -c | tr '\n' ' ') $(cat "$E2E_TMP"/up?.bad 2>/dev/null | head -3)"
if cat "$E2E_TMP"/up?.bad 2>/dev/null | grep -qiE 'INSERT|SELECT|bytea'; then
  fail "an answer carries SQL: $(cat "$E2E_TMP"/up?.bad | grep -iE 'INSERT|SELECT|bytea' | head -2)"
fi
grep -q 'status=500' "$SERVER_LOG" && fail "the log has a 500: $(grep -m2 'status=500' "$SERVER_LOG")"

# One more upload after the race reads back whole.
http POST '/api/v1/spaa?service=racing' -H 'Authorization: Bearer it' --data-binary @"$E2E_TMP/p.spaa"
assert_eq 200 "$HTTP_CODE" "upload after the race ($HTTP_BODY)"
ID=$(json_get "$HTTP_BODY" id)
http GET "/api/v1/profiles/$ID/top" -H 'Authorization: Bearer rt'
assert_eq 200 "$HTTP_CODE" "top of the last upload ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "checkout::charge" "the last upload's top"
stop_server || fail "server exit"
echo "ok [$E2E_NAME]"
