#!/usr/bin/env bash
# The Sentry envelope endpoint over HTTP: each credentials rule, SDK-shaped requests
# (query-string key, no Content-Type, chunked without Content-Length, items without length,
# no final newline, gzip), every Content-Encoding, idempotent re-posts, 413s, 400s, 405.
source "$(dirname "$0")/lib.bash"

FIX=${SPAA_SHARED:-}/fixtures/sentry
if [[ ! -d "$FIX" ]]; then
  echo "skip: no shared fixtures at $FIX"
  exit 77
fi

KEY42=0123456789abcdef0123456789abcdef
KEY43=fedcba9876543210fedcba9876543210
EVID=9f1e2d3c4b5a69788796a5b4c3d2e1f0

# An SDK-shaped envelope: header with event_id and sdk, a transaction item and a V1 profile
# item, both without length, each payload on one line, no final newline.
one_line() { tr -d '\n\r' <"$1"; }
TXN='{"type":"transaction","transaction":"GET /checkout","event_id":"'$EVID'","contexts":{"trace":{"trace_id":"4b25bc58f14243d8b208d1e22a054164","op":"http.server"}}}'
sdk_envelope() { # PROFILE_JSON_FILE OUT [HEADER_EXTRA]
  {
    printf '{"event_id":"%s","sent_at":"2026-01-01T00:00:00Z","sdk":{"name":"sentry.javascript.node","version":"8.0.0"}%s}\n' \
      "$EVID" "${3:-}"
    printf '{"type":"transaction"}\n%s\n' "$TXN"
    printf '{"type":"profile"}\n'
    one_line "$1"
  } >"$2"
}
sdk_envelope "$FIX/vroom_node_v1.json" "$E2E_TMP/node.env"   # 57 KB: gzip-sized
sdk_envelope "$FIX/relay_sample_v1_valid_cocoa.json" "$E2E_TMP/cocoa.env"
NODE_ID=18bc5f6674d9432a8d30daf22a0c16bc
COCOA_ID=41fed0925670468bb0457f61a74688ec

# post PATH FILE [curl args]: POST the envelope as SDKs do: no Content-Type
post() {
  local path=$1 file=$2
  shift 2
  http POST "$path" -H 'Content-Type:' --data-binary @"$file" "$@"
}
# sentry_error STATUS WHAT [CAUSE_SUBSTRING]: the last answer is a Relay-shaped error
sentry_error() {
  assert_eq "$1" "$HTTP_CODE" "$2: status ($HTTP_BODY)"
  [[ -n $(printf '%s' "$HTTP_BODY" | jq -r '.detail // empty') ]] || fail "$2: no detail: $HTTP_BODY"
  [[ $(printf '%s' "$HTTP_BODY" | jq -r '.causes | type') == array ]] || fail "$2: no causes: $HTTP_BODY"
  [[ -z "${3:-}" ]] || assert_contains "$(printf '%s' "$HTTP_BODY" | jq -r '.causes[0]')" "$3" "$2: cause"
}
n_profiles() { http GET /api/v1/profiles; printf '%s' "$HTTP_BODY" | jq '.profiles | length'; }

# --- configured keys: each credentials rule --------------------------------------------
start_server --sentry-key "42:$KEY42" --sentry-key "43:$KEY43"
Q42="sentry_key=$KEY42&sentry_version=7&sentry_client=sentry.javascript.node%2F8.0.0"

post "/api/42/envelope/?$Q42" "$E2E_TMP/cocoa.env"
assert_eq 200 "$HTTP_CODE" "query-string key ($HTTP_BODY)"
assert_eq "$EVID" "$(printf '%s' "$HTTP_BODY" | jq -r .id)" "answer id"
assert_eq "[{\"id\":\"$COCOA_ID\",\"stored\":true}]" "$(printf '%s' "$HTTP_BODY" | jq -c .profiles)" \
  "profiles in the answer"
# idempotent: the same envelope again stores nothing new and answers the same ids
post "/api/42/envelope/?$Q42" "$E2E_TMP/cocoa.env"
assert_eq 200 "$HTTP_CODE" "re-post ($HTTP_BODY)"
assert_eq "$EVID" "$(printf '%s' "$HTTP_BODY" | jq -r .id)" "re-post answer id"
assert_eq "$COCOA_ID true" "$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0] | "\(.id) \(.stored)"')" \
  "re-post profile entry"
assert_eq 1 "$(n_profiles)" "profiles stored after a re-post"
grep -q "msg=\"profile already stored\" id=$COCOA_ID" "$SERVER_LOG" || fail "re-post not logged"

for how in "X-Sentry-Auth: Sentry sentry_key=$KEY42, sentry_version=7, sentry_client=e2e/1.0" \
  "X-Sentry-Auth: sentry  sentry_version = 7 ,sentry_key= $KEY42 " \
  "Authorization: Sentry sentry_key=$KEY42, sentry_version=7"; do
  post /api/42/envelope "$E2E_TMP/cocoa.env" -H "$how"
  assert_eq 200 "$HTTP_CODE" "credentials '$how' ($HTTP_BODY)"
done
# the envelope header's dsn, alone
sdk_envelope "$FIX/relay_sample_v1_valid_cocoa.json" "$E2E_TMP/dsn42.env" \
  ",\"dsn\":\"http://$KEY42@127.0.0.1:9/42\""
post /api/42/envelope/ "$E2E_TMP/dsn42.env"
assert_eq 200 "$HTTP_CODE" "dsn in the envelope header ($HTTP_BODY)"
# a dsn that agrees with the query string is fine
post "/api/42/envelope/?$Q42" "$E2E_TMP/dsn42.env"
assert_eq 200 "$HTTP_CODE" "dsn agreeing with the query key ($HTTP_BODY)"

post /api/42/envelope/ "$E2E_TMP/cocoa.env"
sentry_error 401 "no credentials" "no credentials"
post "/api/42/envelope/?$Q42" "$E2E_TMP/cocoa.env" -H "X-Sentry-Auth: Sentry sentry_key=$KEY42"
sentry_error 401 "credentials in two places" "more than one place"
post /api/42/envelope/ "$E2E_TMP/cocoa.env" -H "X-Sentry-Auth: Sentry sentry_key=$KEY42" \
  -H "Authorization: Sentry sentry_key=$KEY42"
sentry_error 401 "X-Sentry-Auth and Authorization" "more than one place"
# a key given twice is ambiguous (which one counts?), also when one of them is right
post "/api/42/envelope/?sentry_key=nope&sentry_key=$KEY42" "$E2E_TMP/cocoa.env"
sentry_error 401 "sentry_key twice" "sentry_key given 2 times in the query string"
post "/api/42/envelope/?sentry_key=$KEY42&sentry_version=8" "$E2E_TMP/cocoa.env"
sentry_error 400 "sentry_version 8" "sentry_version 8"
post "/api/42/envelope/?sentry_key=$KEY42&sentry_version=seven" "$E2E_TMP/cocoa.env"
sentry_error 400 "sentry_version not a number" "not a number"
post "/api/42/envelope/?sentry_key=$KEY43" "$E2E_TMP/cocoa.env"
sentry_error 403 "another project's key" "not configured for project 42"
post "/api/42/envelope/?sentry_key=00000000000000000000000000000000" "$E2E_TMP/cocoa.env"
sentry_error 403 "unknown key"
post "/api/44/envelope/?sentry_key=$KEY42" "$E2E_TMP/cocoa.env"
sentry_error 403 "a project without keys"
post /api/43/envelope/ "$E2E_TMP/dsn42.env" -H "X-Sentry-Auth: Sentry sentry_key=$KEY43"
sentry_error 400 "dsn naming another project" "dsn names project 42"
sdk_envelope "$FIX/relay_sample_v1_valid_cocoa.json" "$E2E_TMP/dsn42b.env" \
  ",\"dsn\":\"http://$KEY43@127.0.0.1:9/42\""
post "/api/42/envelope/?$Q42" "$E2E_TMP/dsn42b.env"
sentry_error 400 "dsn with another key" "another key"
post /api/42/envelope/ "$E2E_TMP/dsn42b.env"
sentry_error 403 "dsn alone with another project's key"
post "/api/abc/envelope/?$Q42" "$E2E_TMP/cocoa.env"
sentry_error 404 "non-numeric project id"
http GET "/api/42/envelope/?$Q42"
assert_eq 405 "$HTTP_CODE" "GET on the envelope endpoint"
assert_contains "$HTTP_HEADERS" "Allow: POST" "405 Allow header"
http PUT "/api/42/envelope?$Q42" --data-binary x
assert_eq 405 "$HTTP_CODE" "PUT on the envelope endpoint"
stop_server || fail "the server did not stop cleanly"

# --- open mode: any key; SDK-shaped bodies, encodings -----------------------------------
start_server
post "/api/7/envelope/?sentry_key=anything&sentry_version=7" "$E2E_TMP/cocoa.env"
assert_eq 200 "$HTTP_CODE" "open mode, any key ($HTTP_BODY)"

# gzip above 32 KiB, chunked, no Content-Length, no Content-Type, folded slashes
gzip -c "$E2E_TMP/node.env" >"$E2E_TMP/node.env.gz"
post "//api//7//envelope//?sentry_key=k&sentry_version=7" "$E2E_TMP/node.env.gz" \
  -H 'Content-Encoding: gzip' -H 'Transfer-Encoding: chunked'
assert_eq 200 "$HTTP_CODE" "gzip chunked ($HTTP_BODY)"
assert_eq "$NODE_ID true" "$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0] | "\(.id) \(.stored)"')" \
  "gzip chunked profile entry"
grep 'path="/api/7/envelope" status=200' "$SERVER_LOG" | tail -n1 | grep -q 'bytes=[0-9]' ||
  fail "request not logged"
http GET "/api/v1/profiles/$NODE_ID/spaa"
assert_eq 200 "$HTTP_CODE" "read back the chunked upload"
assert_eq 44 "$(printf '%s\n' "$HTTP_BODY" | grep -c '"type":"sample"')" "samples read back"

# every coding gives the same result (the profile is already stored: duplicate)
zstd -q -c "$E2E_TMP/node.env" >"$E2E_TMP/node.env.zst"
# raw deflate: the gzip member without its 10-byte header (no name: -n) and 8-byte trailer
gzip -c -n "$E2E_TMP/node.env" | tail -c +11 | head -c -8 >"$E2E_TMP/node.env.zz"
for c in "x-gzip node.env.gz" "zstd node.env.zst" "deflate node.env.zz" "utf-8 node.env" \
  " node.env"; do
  read -r coding file <<<"$c"
  [[ -n "$file" ]] || { file=$coding; coding=; }
  post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/$file" -H "Content-Encoding: $coding" \
    -H 'Transfer-Encoding: chunked'
  assert_eq 200 "$HTTP_CODE" "Content-Encoding '$coding' ($HTTP_BODY)"
  assert_eq "$NODE_ID true true" \
    "$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0] | "\(.id) \(.stored) \(.duplicate)"')" \
    "Content-Encoding '$coding': duplicate"
done
assert_eq 2 "$(n_profiles)" "profiles stored after re-posts in every coding"
# the same envelope sent to another project (a transport copying it to two DSNs): another
# profile, stored under a fresh id that keeps the one it came with, and found in project 8
post "/api/8/envelope/?sentry_key=k" "$E2E_TMP/node.env"
assert_eq 200 "$HTTP_CODE" "the envelope in project 8 ($HTTP_BODY)"
ID8=$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0].id')
assert_eq "true null" "$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0] | "\(.stored) \(.duplicate)"')" \
  "project 8: stored, not a duplicate ($HTTP_BODY)"
[[ "$ID8" =~ ^[0-9a-f]{32}$ && "$ID8" != "$NODE_ID" ]] || fail "project 8's profile id: $ID8"
http GET "/api/v1/profiles/$ID8"
assert_eq "8 $NODE_ID" "$(jq -r '"\(.service) \(.attrs.source_profile_id)"' <<<"$HTTP_BODY")" \
  "project 8's profile keeps the id it came with"
post "/api/8/envelope/?sentry_key=k" "$E2E_TMP/node.env"
assert_eq "$ID8 true true" \
  "$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0] | "\(.id) \(.stored) \(.duplicate)"')" \
  "project 8 again: its copy's id, a duplicate"
assert_eq 3 "$(n_profiles)" "profiles stored with project 8's copy"

head -c 100 "$E2E_TMP/node.env.gz" >"$E2E_TMP/trunc.gz"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/trunc.gz" -H 'Content-Encoding: gzip'
sentry_error 400 "truncated gzip" "gzip"
printf 'not gzip at all' >"$E2E_TMP/notgz"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/notgz" -H 'Content-Encoding: gzip'
sentry_error 400 "corrupt gzip"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/node.env" -H 'Content-Encoding: compress'
sentry_error 400 "unknown coding" "compress"

# --- envelopes Relay refuses --------------------------------------------------------------
: >"$E2E_TMP/empty"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/empty"
sentry_error 400 "empty body" "empty"
printf '{"event_id":12\n' >"$E2E_TMP/badhdr.env"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/badhdr.env"
sentry_error 400 "envelope header not JSON" "not valid JSON"
printf '{}\n{"type":"profile","length":5000}\n{"version":"1"}' >"$E2E_TMP/trunc.env"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/trunc.env"
sentry_error 400 "truncated item" "item 0 (profile) at byte 3: truncated"
printf '{}\n{"length":2}\n{}\n' >"$E2E_TMP/notype.env"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/notype.env"
sentry_error 400 "item without type" "no \"type\""
# two profile items: as Relay, the first that converts is the envelope's profile, the other
# is dropped alone (too_many_profiles) and the envelope answered 200; the first, invalid
# here, does not count. A profile_chunk beside a profile stands alone.
{
  cat "$E2E_TMP/cocoa.env"
  printf '\n{"type":"profile"}\n'
  one_line "$FIX/vroom_node_v1.json"
} >"$E2E_TMP/two.env"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/two.env"
assert_eq 200 "$HTTP_CODE" "two profile items ($HTTP_BODY)"
assert_eq "$COCOA_ID true" "$(jq -r '.profiles[0] | "\(.id) \(.stored)"' <<<"$HTTP_BODY")" \
  "two profile items: the first stored"
assert_eq "false too_many_profiles" \
  "$(jq -r '.profiles[1] | "\(.stored) \(.reason)"' <<<"$HTTP_BODY")" "two profile items: the second dropped"
assert_contains "$(jq -r '.profiles[1].detail' <<<"$HTTP_BODY")" "item 2 (profile)" "which item"
{
  printf '{}\n{"type":"transaction"}\n%s\n{"type":"profile"}\n{nope\n{"type":"profile"}\n' "$TXN"
  one_line "$FIX/relay_sample_v1_valid_cocoa.json"
  printf '\n{"type":"profile_chunk"}\n'
  one_line "$FIX/relay_sample_v2_valid_cocoa.json"
} >"$E2E_TMP/three.env"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/three.env"
assert_eq 200 "$HTTP_CODE" "an invalid profile, a valid one and a chunk ($HTTP_BODY)"
assert_eq "false invalid_json|true|true" \
  "$(jq -r '[.profiles[] | "\(.stored)\(if .reason then " " + .reason else "" end)"] | join("|")' \
    <<<"$HTTP_BODY")" "an invalid profile does not count: the next one and the chunk stored"
# a profile item over 50 MB (with a body cap that lets it in)
stop_server || fail "the server did not stop cleanly"
start_server --max-body 64m --max-decompressed 64m
{
  printf '{}\n{"type":"profile","length":%d}\n' $((52 * 1024 * 1024))
  head -c $((52 * 1024 * 1024)) /dev/zero | tr '\0' ' '
} >"$E2E_TMP/big.env"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/big.env"
sentry_error 413 "a profile item over 50 MB" "over the 52428800 byte profile cap"
rm -f "$E2E_TMP/big.env"
# a body over the cap: 413 in the same shape
start_server --max-body 1m
head -c 2000000 /dev/zero >"$E2E_TMP/2mb"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/2mb"
sentry_error 413 "body over the cap (Content-Length)"
post "/api/7/envelope/?sentry_key=k" "$E2E_TMP/2mb" -H 'Transfer-Encoding: chunked'
sentry_error 413 "body over the cap (chunked)"
echo "ok [$E2E_NAME]"
