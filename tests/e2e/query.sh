#!/usr/bin/env bash
# The read path over a real store: upload SPAA (plain and gzip) through POST /api/v1/spaa,
# then list with every filter and cursor pages, read metadata, and download the profile as
# SPAA NDJSON plain, gzip and zstd; bad queries get 400 JSON.
source "$(dirname "$0")/lib.bash"

cat >"$E2E_TMP/p.spaa" <<'SPAA'
{"type":"header","format":"spaa","version":"1.0","stack_id_mode":"local","source_tool":"perf","frame_order":"leaf_to_root","events":[{"name":"cycles","kind":"hardware","sampling":{"mode":"period","primary_metric":"period","sample_period":100000}}],"time_range":{"start":1700000000,"end":1700000060,"unit":"seconds"}}
{"type":"dso","id":1,"name":"/usr/bin/shop","build_id":"00112233445566778899aabbccddeeff"}
{"type":"frame","id":10,"func":"checkout::charge","dso":1,"srcline":"src/charge.rs:40","kind":"user"}
{"type":"frame","id":11,"func":"checkout::handle","dso":1,"srcline":"src/handle.rs:12","kind":"user"}
{"type":"frame","id":12,"func":"main","dso":1,"kind":"user"}
{"type":"stack","id":"s1","frames":[10,11,12],"context":{"event":"cycles"},"weights":[{"metric":"period","value":3000000,"unit":"events"}],"exclusive":{"frame":10,"weights":[{"metric":"period","value":3000000}]}}
{"type":"stack","id":"s2","frames":[11,12],"context":{"event":"cycles"},"weights":[{"metric":"period","value":1000000,"unit":"events"}]}
SPAA

start_server --read-token rt --ingest-token it
AUTH_R=(-H 'Authorization: Bearer rt')
AUTH_I=(-H 'Authorization: Bearer it')

# --- uploads ------------------------------------------------------------------------------
http POST '/api/v1/spaa?service=checkout&label=env:prod&label=region:eu' "${AUTH_I[@]}" \
  --data-binary @"$E2E_TMP/p.spaa"
assert_eq 200 "$HTTP_CODE" "plain SPAA upload ($HTTP_BODY)"
ID1=$(json_get "$HTTP_BODY" id)
[[ "$ID1" =~ ^[0-9a-f]{32}$ ]] || fail "upload id: '$ID1'"
gzip -c "$E2E_TMP/p.spaa" >"$E2E_TMP/p.spaa.gz"
http POST /api/v1/spaa "${AUTH_I[@]}" -H 'X-Service-Name: billing' -H 'Content-Encoding: gzip' \
  --data-binary @"$E2E_TMP/p.spaa.gz"
assert_eq 200 "$HTTP_CODE" "gzip SPAA upload ($HTTP_BODY)"
ID2=$(json_get "$HTTP_BODY" id)
[[ "$ID2" =~ ^[0-9a-f]{32}$ && "$ID2" != "$ID1" ]] || fail "second upload id: '$ID2'"

printf '{"type":"header","format":"spaa"' >"$E2E_TMP/broken.spaa"
http POST /api/v1/spaa "${AUTH_I[@]}" --data-binary @"$E2E_TMP/broken.spaa"
[[ "$HTTP_CODE" == 400 || "$HTTP_CODE" == 422 ]] || fail "broken SPAA: got $HTTP_CODE"
[[ -n "$(json_get "$HTTP_BODY" detail)" ]] || fail "broken SPAA: no detail in $HTTP_BODY"

# Files the validator refuses are refused on upload too, with the line and the rule; each is
# p.spaa with one line changed, and nothing of them is stored.
HDR=$(sed -n 1p "$E2E_TMP/p.spaa")
refused() { # WHAT RULE  (the file is $E2E_TMP/bad.spaa)
  http POST '/api/v1/spaa?service=refused' "${AUTH_I[@]}" --data-binary @"$E2E_TMP/bad.spaa"
  assert_eq 422 "$HTTP_CODE" "$1 ($HTTP_BODY)"
  assert_contains "$HTTP_BODY" "rule $2" "$1: the rule is named"
  assert_contains "$HTTP_BODY" '"detail":"line ' "$1: the line is named"
}
{ sed -n 2p "$E2E_TMP/p.spaa"; echo "$HDR"; sed -n '3,$p' "$E2E_TMP/p.spaa"; } >"$E2E_TMP/bad.spaa"
refused "header not first" header-first
sed 's/"metric":"period","value":1000000/"metric":"cycles","value":1000000/' "$E2E_TMP/p.spaa" \
  >"$E2E_TMP/bad.spaa"
refused "a stack without the primary metric" primary-metric-missing
sed 's/"context":{"event":"cycles"},"weights":\[{"metric":"period","value":1000000/"context":{"event":"instructions"},"weights":[{"metric":"period","value":1000000/' \
  "$E2E_TMP/p.spaa" >"$E2E_TMP/bad.spaa"
refused "an undeclared event" stack-event-undeclared
{ cat "$E2E_TMP/p.spaa"; echo '{"type":"sample","stack_id":"nope","timestamp":1700000001}'; } \
  >"$E2E_TMP/bad.spaa"
refused "a sample of a missing stack" sample-stack-missing
{ cat "$E2E_TMP/p.spaa"; sed -n '$p' "$E2E_TMP/p.spaa"; } >"$E2E_TMP/bad.spaa"
refused "two stacks under one id" stack-duplicate
http GET '/api/v1/profiles?service=refused' "${AUTH_R[@]}"
assert_eq 200 "$HTTP_CODE" "list of the refused service"
[[ "$HTTP_BODY" != *'"id":"'* ]] || fail "a refused SPAA file was stored: $HTTP_BODY"

# --- list -----------------------------------------------------------------------------------
ids_of() { # the profile ids of a list answer, in order, space-separated
  printf '%s' "$1" | grep -o '"id":"[0-9a-f]\{32\}"' | sed 's/"id":"\(.*\)"/\1/' | tr '\n' ' ' |
    sed 's/ $//'
}
expect_list() { # QUERY WANT_IDS WHAT (HTTP_BODY stays set for the caller)
  http GET "/api/v1/profiles$1" "${AUTH_R[@]}"
  assert_eq 200 "$HTTP_CODE" "$3: list $1 ($HTTP_BODY)"
  assert_eq "$2" "$(ids_of "$HTTP_BODY")" "$3: list $1"
}
expect_list '' "$ID2 $ID1" "list, newest first"
expect_list '?service=checkout' "$ID1" "list by service"
expect_list '?service=billing' "$ID2" "list by service"
expect_list '?service=nobody' "" "list by an unknown service"
expect_list '?source=spaa' "$ID2 $ID1" "list by source"
expect_list '?source=otlp' "" "list by another source"
expect_list '?event=cycles' "$ID2 $ID1" "list by event"
expect_list '?event=malloc' "" "list by an absent event"
expect_list '?label=env:prod' "$ID1" "list by label"
expect_list '?labels=env:prod,region:eu' "$ID1" "list by two labels"
expect_list '?label=env:prod&label=region:us' "" "list by a label that does not match"
expect_list '?time=profile&from=1700000030&to=2023-11-14T22:20:00Z' "$ID2 $ID1" \
  "list by profile time range"
expect_list '?time=profile&from=2023-11-14T22:15:00Z' "" "list after the profiles"
expect_list '?time=profile&to=1699999999' "" "list before the profiles"
# from/to are on received time unless time=profile: both arrived within the last hour
expect_list '?from=now-1h' "$ID2 $ID1" "list by received time"
expect_list '?time=received&from=now-1h&to=now' "$ID2 $ID1" "list by received time, named"
expect_list '?to=now-1h' "" "list received before an hour ago"
expect_list '?from=1700000030&to=2023-11-14T22:20:00Z' "" "profile times are not received times"
expect_list '?metric=period' "$ID2 $ID1" "list by metric"
expect_list '?metric=no_such_metric' "" "list by an absent metric"
expect_list '?limit=1' "$ID2" "first page"
cursor=$(json_get "$HTTP_BODY" next_cursor)
[[ -n "$cursor" && "$cursor" != null ]] || fail "no next_cursor on a full page: $HTTP_BODY"
expect_list "?limit=1&cursor=$cursor" "$ID1" "second page"
cursor=$(json_get "$HTTP_BODY" next_cursor)
if [[ "$cursor" != null ]]; then
  expect_list "?limit=1&cursor=$cursor" "" "third page"
fi

# the label-filter cap (SPAA_QUERY_MAX_LABELS): 64 reach the store, 65 are refused
many="env:prod"
for i in $(seq 2 64); do many="$many,k$i:v$i"; done
expect_list "?labels=$many" "" "list by 64 labels"
http GET "/api/v1/profiles?labels=$many,k65:v65" "${AUTH_R[@]}"
assert_eq 400 "$HTTP_CODE" "list by 65 labels"
assert_contains "$HTTP_BODY" "at most 64 labels" "65 labels detail"

for q in '?limit=0' '?limit=1001' '?limit=x' '?from=yesterday' '?to=2023-13-01T00:00:00Z' \
  '?time=wall' '?servce=checkout' \
  '?from=1700000100&to=1700000000' '?label=nocolon' '?cursor=%21%21not-a-cursor'; do
  http GET "/api/v1/profiles$q" "${AUTH_R[@]}"
  assert_eq 400 "$HTTP_CODE" "list $q"
  assert_eq bad_request "$(json_get "$HTTP_BODY" error)" "list $q error code"
done

# --- metadata ---------------------------------------------------------------------------------
http GET "/api/v1/profiles/$ID1" "${AUTH_R[@]}"
assert_eq 200 "$HTTP_CODE" "metadata"
assert_eq "$ID1" "$(json_get "$HTTP_BODY" id)" "metadata id"
assert_eq checkout "$(json_get "$HTTP_BODY" service)" "metadata service"
assert_eq spaa "$(json_get "$HTTP_BODY" source)" "metadata source"
assert_contains "$HTTP_BODY" '"env":"prod"' "metadata labels"
# the header's time range, in nanoseconds and as exact RFC 3339 strings
assert_contains "$HTTP_BODY" '"start":1700000000000000000,"end":1700000060000000000,"start_at":"2023-11-14T22:13:20.000000000Z","end_at":"2023-11-14T22:14:20.000000000Z"' "metadata times"
# the id in capitals, or as a dashed UUID, names the same profile
UP=$(tr a-f A-F <<<"$ID1")
DASHED="${ID1:0:8}-${ID1:8:4}-${ID1:12:4}-${ID1:16:4}-${ID1:20:12}"
for form in "$UP" "$DASHED"; do
  http GET "/api/v1/profiles/$form" "${AUTH_R[@]}"
  assert_eq "200 $ID1" "$HTTP_CODE $(json_get "$HTTP_BODY" id)" "metadata by the id written $form"
  http GET "/api/v1/profiles/$form/top" "${AUTH_R[@]}"
  assert_eq 200 "$HTTP_CODE" "top by the id written $form ($HTTP_BODY)"
done
http GET "/api/v1/diff?base=$UP&target=$DASHED" "${AUTH_R[@]}"
assert_eq 200 "$HTTP_CODE" "diff by ids in capitals and dashed ($HTTP_BODY)"
http GET "/api/v1/profiles/$ID2/" "${AUTH_R[@]}"
assert_eq 200 "$HTTP_CODE" "metadata with a trailing slash"
assert_eq billing "$(json_get "$HTTP_BODY" service)" "service from X-Service-Name"
http GET /api/v1/profiles/ffffffffffffffffffffffffffffffff "${AUTH_R[@]}"
assert_eq 404 "$HTTP_CODE" "metadata of a missing profile"
assert_eq not_found "$(json_get "$HTTP_BODY" error)" "404 error code"

# --- download ---------------------------------------------------------------------------------
"$SPAA_BIN" convert --from spaa "$E2E_TMP/p.spaa" >"$E2E_TMP/canonical.spaa" ||
  fail "convert --from spaa of the test profile"
curl -sS -o "$E2E_TMP/dl.spaa" -D "$E2E_TMP/h" "${AUTH_R[@]}" \
  "$SERVER_URL/api/v1/profiles/$ID1/spaa" || fail "download"
grep -qi '^Content-Type: application/x-ndjson' "$E2E_TMP/h" || fail "download content type"
if grep -qi '^Content-Encoding:' "$E2E_TMP/h"; then fail "plain download has a coding"; fi
cmp -s "$E2E_TMP/canonical.spaa" "$E2E_TMP/dl.spaa" ||
  fail "the download differs from the canonical form of the upload"

curl -sS -o "$E2E_TMP/dl.gz" -D "$E2E_TMP/h" -H 'Accept-Encoding: gzip' "${AUTH_R[@]}" \
  "$SERVER_URL/api/v1/profiles/$ID1/spaa" || fail "gzip download"
grep -qi '^Content-Encoding: gzip' "$E2E_TMP/h" || fail "gzip download: no Content-Encoding"
gzip -dc "$E2E_TMP/dl.gz" | cmp -s - "$E2E_TMP/canonical.spaa" || fail "gzip download differs"

curl -sS -o "$E2E_TMP/dl.zst" -D "$E2E_TMP/h" -H 'Accept-Encoding: gzip, zstd' "${AUTH_R[@]}" \
  "$SERVER_URL/api/v1/profiles/$ID2/spaa" || fail "zstd download"
grep -qi '^Content-Encoding: zstd' "$E2E_TMP/h" || fail "zstd preferred over gzip"
[[ "$(head -c 4 "$E2E_TMP/dl.zst" | od -An -tx1 | tr -d ' ')" == 28b52ffd ]] ||
  fail "zstd download does not start with the zstd magic"
# our own reader takes zstd input: converting the download gives the canonical bytes
"$SPAA_BIN" convert --from spaa "$E2E_TMP/dl.zst" | cmp -s - "$E2E_TMP/canonical.spaa" ||
  fail "zstd download differs"

http GET /api/v1/profiles/ffffffffffffffffffffffffffffffff/spaa "${AUTH_R[@]}"
assert_eq 404 "$HTTP_CODE" "download of a missing profile"

stop_server || fail "server exit status"
echo "PASS [$E2E_NAME]"
