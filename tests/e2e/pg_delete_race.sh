#!/usr/bin/env bash
# PostgreSQL: uploads of a service while that service is deleted over and over, on the
# deleting relay and on a second one sharing the database, and uploads of the same content
# to a service that stays. A delete's sweep removes the service's block dictionary and shared
# rows; a relay's writer must not reuse the ids it cached before the sweep, and the rows the
# staying service's uploads take while a sweep runs must stay. Every upload is answered 200
# (or a documented 503 with Retry-After), never a 500, no answer carries SQL text, every
# acknowledged upload of the staying service reads back, what is left reads back, and once
# the racing service is deleted the database holds exactly the rows of the one content left.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pg_lib.bash"

pg_start || exit $?
trap 'pg_stop; e2e_cleanup' EXIT

start_server --store "$SPAA_TEST_STORE" --read-token rt --ingest-token it
URL_B=$SERVER_URL
start_server --store "$SPAA_TEST_STORE" --read-token rt --ingest-token it --admin-token adm
shop_spaa "$E2E_TMP/p.spaa"

UNTIL=$(($(date +%s) + 8))
# uploader OUT URL: one "code service id" line per upload into OUT, the bodies of non-200
# answers into OUT.bad; every third upload to the service that stays
uploader() {
  local out=$1 url=$2 code svc n=0
  while (($(date +%s) < UNTIL)); do
    svc=racing
    ((n++ % 3 == 2)) && svc=staying
    code=$(curl -sS -o "$out.body" -w '%{http_code}' -H 'Authorization: Bearer it' \
      --data-binary @"$E2E_TMP/p.spaa" "$url/api/v1/spaa?service=$svc" || true)
    echo "$code $svc $(jq -r '.id // empty' "$out.body" 2>/dev/null)" >>"$out"
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
  url=$SERVER_URL
  ((k % 2)) || url=$URL_B
  uploader "$E2E_TMP/up$k" "$url" &
  pids+=($!)
done
deleter &
pids+=($!)
wait "${pids[@]}"

cat "$E2E_TMP"/up? >"$E2E_TMP/all"
total=$(wc -l <"$E2E_TMP/all")
ok=$(grep -c '^200 ' "$E2E_TMP/all" || true)
deletes=$(grep -c '^200$' "$E2E_TMP/del" || true)
echo "uploads: $total, 200: $ok; deletes answered 200: $deletes"
((total > 20)) || fail "too few uploads ran ($total)"
((deletes > 5)) || fail "too few deletes ran ($deletes): $(sort "$E2E_TMP/del" | uniq -c)"
bad=$(grep -v '^200 ' "$E2E_TMP/all" | grep -vc '^503 ' || true)
((bad == 0)) || fail "uploads answered other than 200/503: $(cut -d' ' -f1 "$E2E_TMP/all" | sort | uniq -c | tr '\n' ' ') $(cat "$E2E_TMP"/up?.bad 2>/dev/null | head -3)"
if cat "$E2E_TMP"/up?.bad 2>/dev/null | grep -qiE 'INSERT|SELECT|bytea'; then
  fail "an answer carries SQL: $(cat "$E2E_TMP"/up?.bad | grep -iE 'INSERT|SELECT|bytea' | head -2)"
fi
grep -q 'status=500' "$SERVER_LOG" && fail "the log has a 500: $(grep -m2 'status=500' "$SERVER_LOG")"

# every acknowledged upload of the service that stays reads back, from either relay
staying=$(grep -c '^200 staying ' "$E2E_TMP/all" || true)
((staying > 5)) || fail "too few uploads of the staying service ($staying)"
while read -r _ _ id; do
  http GET "/api/v1/profiles/$id/top" -H 'Authorization: Bearer rt'
  assert_eq 200 "$HTTP_CODE" "top of staying profile $id ($HTTP_BODY)"
  assert_contains "$HTTP_BODY" "checkout::charge" "the top of staying profile $id"
done < <(grep '^200 staying ' "$E2E_TMP/all")
assert_eq "$staying" "$(pg_sql "SELECT count(*) FROM profile WHERE service = 'staying'")" \
  "staying profiles stored"

# One more upload after the race reads back whole.
http POST '/api/v1/spaa?service=racing' -H 'Authorization: Bearer it' --data-binary @"$E2E_TMP/p.spaa"
assert_eq 200 "$HTTP_CODE" "upload after the race ($HTTP_BODY)"
ID=$(json_get "$HTTP_BODY" id)
http GET "/api/v1/profiles/$ID/top" -H 'Authorization: Bearer rt'
assert_eq 200 "$HTTP_CODE" "top of the last upload ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "checkout::charge" "the last upload's top"

# the racing service deleted once more: left are the rows of the one content (a stack of two
# frames of one dso) and the staying service's dictionary, nothing the sweeps missed
http DELETE "/api/v1/profiles?service=racing" -H 'Authorization: Bearer adm'
assert_eq 200 "$HTTP_CODE" "the last delete ($HTTP_BODY)"
assert_eq "1 2 1 1" "$(pg_sql "SELECT (SELECT count(*) FROM stack), (SELECT count(*) FROM frame),
  (SELECT count(*) FROM dso), (SELECT count(*) FROM block_dict)" | tr '|' ' ')" \
  "stack, frame, dso and dictionary rows left"
stop_server || fail "server exit"
echo "ok [$E2E_NAME]"
