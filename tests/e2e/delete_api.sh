#!/usr/bin/env bash
# DELETE /api/v1/profiles: off without an admin token (403 naming the setting); with one, a
# missing or wrong token is 401, no filter is 400, an unknown parameter is 400 naming it, and
# a service's profiles go while another's stay readable as they were.
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:-}/fixtures/pprof"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures ($FIX)"
  exit 77
fi

start_server
http DELETE "/api/v1/profiles?service=a"
assert_eq 403 "$HTTP_CODE" "no admin token configured: $HTTP_BODY"
assert_contains "$HTTP_BODY" "admin_token" "the answer names the setting"
stop_server || fail "server exit"

start_server --admin-token adm-secret
for s in a a b; do
  http POST "/ingest?name=$s.cpu&format=pprof" --data-binary @"$FIX/google-pprof_sample.cpu"
  assert_eq 200 "$HTTP_CODE" "push $s: $HTTP_BODY"
done
http GET "/api/v1/profiles?service=b"
bid=$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0].id')
curl -sS -o "$E2E_TMP/b.before" "$SERVER_URL/api/v1/profiles/$bid/spaa" || fail "download b"

http DELETE "/api/v1/profiles?service=a"
assert_eq 401 "$HTTP_CODE" "no token: $HTTP_BODY"
http DELETE "/api/v1/profiles?service=a" -H 'Authorization: Bearer wrong'
assert_eq 401 "$HTTP_CODE" "wrong token: $HTTP_BODY"
http DELETE "/api/v1/profiles" -H 'Authorization: Bearer adm-secret'
assert_eq 400 "$HTTP_CODE" "no filter: $HTTP_BODY"
http DELETE "/api/v1/profiles?servce=a" -H 'Authorization: Bearer adm-secret'
assert_eq 400 "$HTTP_CODE" "unknown parameter: $HTTP_BODY"
assert_contains "$HTTP_BODY" "servce" "the answer names the parameter"
# a time past int64 nanoseconds is refused: wrapped, it once selected (and deleted) everything
http DELETE "/api/v1/profiles?from=9999999999" -H 'Authorization: Bearer adm-secret'
assert_eq 400 "$HTTP_CODE" "from past 2262: $HTTP_BODY"
assert_contains "$HTTP_BODY" "2262" "the answer gives the range"
http GET "/api/v1/profiles?to=9999999999"
assert_eq 400 "$HTTP_CODE" "to past 2262: $HTTP_BODY"
# service and project name one filter: two different values are refused
http DELETE "/api/v1/profiles?service=a&project=b" -H 'Authorization: Bearer adm-secret'
assert_eq 400 "$HTTP_CODE" "service and project differ: $HTTP_BODY"
http GET "/api/v1/profiles?service=a&project=a"
assert_eq 200 "$HTTP_CODE" "service and project agree: $HTTP_BODY"
assert_eq 2 "$(printf '%s' "$HTTP_BODY" | jq '.profiles | length')" "nothing deleted so far"

http DELETE "/api/v1/profiles?service=a" -H 'Authorization: Bearer adm-secret'
assert_eq 200 "$HTTP_CODE" "delete a: $HTTP_BODY"
assert_eq 2 "$(printf '%s' "$HTTP_BODY" | jq .deleted)" "deleted count"
grep -q 'msg="profiles deleted" profiles=2' "$SERVER_LOG" || fail "no log line for the delete"
http GET "/api/v1/profiles?limit=100"
assert_eq '["b"]' "$(printf '%s' "$HTTP_BODY" | jq -c '[.profiles[].service]')" "what is left"
curl -sS -o "$E2E_TMP/b.after" "$SERVER_URL/api/v1/profiles/$bid/spaa" || fail "download b"
cmp -s "$E2E_TMP/b.before" "$E2E_TMP/b.after" || fail "b changed after deleting a"
# the same again deletes nothing
http DELETE "/api/v1/profiles?service=a" -H 'Authorization: Bearer adm-secret'
assert_eq 0 "$(printf '%s' "$HTTP_BODY" | jq .deleted)" "nothing left to delete"
# all=true empties the store; another value of all is refused, filter or not
http DELETE "/api/v1/profiles?all=banana&service=b" -H 'Authorization: Bearer adm-secret'
assert_eq 400 "$HTTP_CODE" "all=banana: $HTTP_BODY"
http DELETE "/api/v1/profiles?all=true" -H 'Authorization: Bearer adm-secret'
assert_eq 200 "$HTTP_CODE" "all=true: $HTTP_BODY"
assert_eq 1 "$(printf '%s' "$HTTP_BODY" | jq .deleted)" "all=true deleted what was left"
http GET "/api/v1/profiles?limit=100"
assert_eq 0 "$(printf '%s' "$HTTP_BODY" | jq '.profiles | length')" "nothing left after all=true"
echo "ok [$E2E_NAME]"
