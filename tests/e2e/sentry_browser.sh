#!/usr/bin/env bash
# The Sentry envelope endpoint as a browser SDK and Relay's parsers see it:
#  - CORS: every answer of POST /api/{project}/envelope/ (200, 4xx, the 429 with Retry-After
#    and X-Sentry-Rate-Limits, refusals made before the handler) carries
#    Access-Control-Allow-Origin: * and Access-Control-Expose-Headers; the OPTIONS preflight
#    answers 200 with the allowed methods, headers and a max age; other methods get 405 in
#    Relay's {"detail","causes"} shape with Allow;
#  - project ids are u64 as Relay reads them: /api/0042/ is project 42 (key, dsn, service);
#    ids that are not a decimal u64 are refused in Relay's shape;
#  - sentry_version=7.0 (header or query) is version 7.
source "$(dirname "$0")/lib.bash"

FIX=${SPAA_SHARED:-}/fixtures/sentry
if [[ ! -d "$FIX" ]]; then
  echo "skip: no shared fixtures at $FIX"
  exit 77
fi

KEY42=0123456789abcdef0123456789abcdef
EVID=9f1e2d3c4b5a69788796a5b4c3d2e1f0
COCOA_ID=41fed0925670468bb0457f61a74688ec
ORIGIN='https://app.example.com'
EXPOSE='Access-Control-Expose-Headers: x-sentry-error, x-sentry-rate-limits, retry-after'
C=(--max-time 20) # every request is bounded in time

# An SDK-shaped envelope: event header (HEADER_EXTRA appended), a transaction item and the
# cocoa V1 profile, one line each.
TXN='{"type":"transaction","transaction":"GET /checkout","event_id":"'$EVID'","contexts":{"trace":{"trace_id":"4b25bc58f14243d8b208d1e22a054164","op":"http.server"}}}'
sdk_envelope() { # OUT [HEADER_EXTRA]
  {
    printf '{"event_id":"%s","sdk":{"name":"sentry.javascript.browser","version":"8.0.0"}%s}\n' \
      "$EVID" "${2:-}"
    printf '{"type":"transaction"}\n%s\n' "$TXN"
    printf '{"type":"profile"}\n'
    tr -d '\n\r' <"$FIX/relay_sample_v1_valid_cocoa.json"
  } >"$1"
}
sdk_envelope "$E2E_TMP/cocoa.env"
sdk_envelope "$E2E_TMP/dsn42.env" ",\"dsn\":\"http://$KEY42@127.0.0.1:9/42\""
sdk_envelope "$E2E_TMP/dsn0042.env" ",\"dsn\":\"http://$KEY42@127.0.0.1:9/0042\""

# browser_post PATH FILE [curl args]: what the browser SDK's fetch sends (a "simple" request:
# text/plain, the key in the query string, an Origin)
browser_post() {
  local path=$1 file=$2
  shift 2
  http POST "$path" "${C[@]}" -H "Origin: $ORIGIN" -H 'Content-Type: text/plain;charset=UTF-8' \
    --data-binary @"$file" "$@"
}
# has_cors WHAT: the last answer carries the CORS headers of every answer of the route
has_cors() {
  assert_contains "$HTTP_HEADERS" "Access-Control-Allow-Origin: *" "$1: Access-Control-Allow-Origin"
  assert_contains "$HTTP_HEADERS" "$EXPOSE" "$1: Access-Control-Expose-Headers"
}
# sentry_error STATUS WHAT [CAUSE_SUBSTRING]: the last answer is a Relay-shaped error
sentry_error() {
  assert_eq "$1" "$HTTP_CODE" "$2: status ($HTTP_BODY)"
  [[ -n $(printf '%s' "$HTTP_BODY" | jq -r '.detail // empty') ]] || fail "$2: no detail: $HTTP_BODY"
  [[ $(printf '%s' "$HTTP_BODY" | jq -r '.causes | type') == array ]] || fail "$2: no causes: $HTTP_BODY"
  [[ -z "${3:-}" ]] || assert_contains "$(printf '%s' "$HTTP_BODY" | jq -r '.causes[0]')" "$3" "$2: cause"
}
header() { # NAME: the value of a header of the last answer (case-insensitive name)
  printf '%s\n' "$HTTP_HEADERS" | awk -v n="$1" 'tolower($0) ~ "^" tolower(n) ":" {
    sub(/^[^:]*: */, ""); print; exit }'
}
# services: the stored services, sorted, comma-separated
services() {
  http GET /api/v1/services "${C[@]}"
  printf '%s' "$HTTP_BODY" | jq -r '[.services[] | (.name // .service)] | sort | join(",")'
}

start_server --sentry-key "42:$KEY42"
Q42="sentry_key=$KEY42&sentry_version=7&sentry_client=sentry.javascript.browser%2F8.0.0"

# --- CORS on the answers of the POST ------------------------------------------------------
browser_post "/api/42/envelope/?$Q42" "$E2E_TMP/cocoa.env"
assert_eq 200 "$HTTP_CODE" "browser-shaped POST ($HTTP_BODY)"
assert_eq "[{\"id\":\"$COCOA_ID\",\"stored\":true}]" "$(printf '%s' "$HTTP_BODY" | jq -c .profiles)" \
  "the browser's profile is stored"
has_cors "200"
browser_post "/api/42/envelope/?sentry_key=fedcba9876543210fedcba9876543210" "$E2E_TMP/cocoa.env"
sentry_error 403 "another key"
has_cors "403"
browser_post "/api/42/envelope/" "$E2E_TMP/cocoa.env"
sentry_error 401 "no credentials"
has_cors "401"
: >"$E2E_TMP/empty"
browser_post "/api/42/envelope/?$Q42" "$E2E_TMP/empty"
sentry_error 400 "empty body"
has_cors "400"
browser_post "/api/abc/envelope/?$Q42" "$E2E_TMP/cocoa.env"
sentry_error 404 "non-numeric project id"
has_cors "404"
# refused by the core before the handler runs (an unknown Content-Encoding; over max_body)
browser_post "/api/42/envelope/?$Q42" "$E2E_TMP/cocoa.env" -H 'Content-Encoding: bogus'
sentry_error 400 "unknown Content-Encoding"
has_cors "400 from the core"

# --- the preflight ----------------------------------------------------------------------
http OPTIONS /api/42/envelope/ "${C[@]}" -H "Origin: $ORIGIN" \
  -H 'Access-Control-Request-Method: POST' \
  -H 'Access-Control-Request-Headers: content-type,x-sentry-auth'
[[ $HTTP_CODE == 200 || $HTTP_CODE == 204 ]] || fail "preflight: status $HTTP_CODE ($HTTP_BODY)"
assert_eq "*" "$(header Access-Control-Allow-Origin)" "preflight: Access-Control-Allow-Origin"
assert_contains "$(header Access-Control-Allow-Methods)" "POST" "preflight: Allow-Methods"
allowed=$(header Access-Control-Allow-Headers | tr 'A-Z' 'a-z')
for h in content-type x-sentry-auth authorization sentry-trace baggage; do
  [[ ",${allowed// /}," == *",$h,"* ]] || fail "preflight: $h not in Allow-Headers: $allowed"
done
[[ $(header Access-Control-Max-Age) =~ ^[1-9][0-9]*$ ]] ||
  fail "preflight: no Access-Control-Max-Age: $HTTP_HEADERS"
# the same without a trailing slash, and on any project (the preflight reads no credentials)
http OPTIONS /api/0042/envelope "${C[@]}" -H "Origin: $ORIGIN" -H 'Access-Control-Request-Method: POST'
[[ $HTTP_CODE == 200 || $HTTP_CODE == 204 ]] || fail "preflight without slash: $HTTP_CODE"
assert_eq "*" "$(header Access-Control-Allow-Origin)" "preflight without slash: Allow-Origin"

# --- other methods: 405 in Relay's shape ------------------------------------------------
for m in GET PUT DELETE PATCH; do
  http "$m" "/api/42/envelope/?$Q42" "${C[@]}" -H "Origin: $ORIGIN" --data-binary x
  sentry_error 405 "$m on the envelope route" "$m is not allowed"
  assert_contains "$(header Allow)" "POST" "$m: Allow"
  has_cors "405 ($m)"
done
http HEAD "/api/42/envelope/" "${C[@]}" -I
assert_eq 405 "$HTTP_CODE" "HEAD on the envelope route"
assert_contains "$(header Allow)" "POST" "HEAD: Allow"

# --- project ids as u64 ---------------------------------------------------------------------
assert_eq 42 "$(services)" "services before the 0042 posts"
post0042() { # PATH FILE [curl args]: the cocoa profile under another event, stored anew
  sed "s/$COCOA_ID/$2/" "$E2E_TMP/$3" >"$E2E_TMP/p.env"
  browser_post "$1" "$E2E_TMP/p.env" "${@:4}"
}
post0042 "/api/0042/envelope/?$Q42" 00000000000000000000000000000a01 cocoa.env
assert_eq 200 "$HTTP_CODE" "/api/0042/ with project 42's key ($HTTP_BODY)"
assert_eq true "$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0].stored')" "0042: stored"
post0042 "/api/0042/envelope/" 00000000000000000000000000000a02 dsn42.env
assert_eq 200 "$HTTP_CODE" "/api/0042/ with a dsn naming 42 ($HTTP_BODY)"
post0042 "/api/42/envelope/" 00000000000000000000000000000a03 dsn0042.env
assert_eq 200 "$HTTP_CODE" "/api/42/ with a dsn naming 0042 ($HTTP_BODY)"
post0042 "/api/000000000000000000000042/envelope/?$Q42" 00000000000000000000000000000a04 cocoa.env
assert_eq 200 "$HTTP_CODE" "24 digits, leading zeros ($HTTP_BODY)"
assert_eq 42 "$(services)" "every 0042 post is stored under service 42"
http GET "/api/v1/profiles?service=42" "${C[@]}"
assert_eq 5 "$(printf '%s' "$HTTP_BODY" | jq '.profiles | length')" "five profiles of project 42"
browser_post "/api/18446744073709551616/envelope/?$Q42" "$E2E_TMP/cocoa.env"
sentry_error 404 "a project id over 2^64-1" "below 2^64"
has_cors "404 (project id over u64)"
browser_post "/api/4x2/envelope/?$Q42" "$E2E_TMP/cocoa.env"
sentry_error 404 "a project id with a letter"

# --- sentry_version=7.0 ---------------------------------------------------------------------
browser_post "/api/42/envelope/?sentry_key=$KEY42&sentry_version=7.0" "$E2E_TMP/cocoa.env"
assert_eq 200 "$HTTP_CODE" "sentry_version=7.0 in the query ($HTTP_BODY)"
browser_post /api/42/envelope/ "$E2E_TMP/cocoa.env" \
  -H "X-Sentry-Auth: Sentry sentry_key=$KEY42, sentry_version=7.0, sentry_client=x/1"
assert_eq 200 "$HTTP_CODE" "sentry_version=7.0 in X-Sentry-Auth ($HTTP_BODY)"
browser_post "/api/42/envelope/?sentry_key=$KEY42&sentry_version=8.0" "$E2E_TMP/cocoa.env"
sentry_error 400 "sentry_version=8.0" "sentry_version 8 is not supported"
browser_post "/api/42/envelope/?sentry_key=$KEY42&sentry_version=.7" "$E2E_TMP/cocoa.env"
sentry_error 400 "sentry_version=.7" "not a number"
stop_server || fail "the server did not stop cleanly"

# --- the 429 of back-pressure: all its headers and CORS -----------------------------------
# A slow 6 MB upload holds most of an 8 MiB memory budget; a second one does not fit and is
# refused from its headers (Expect: 100-continue, curl's default for large bodies).
start_server --memory-budget 8m --max-body 64m --max-decompressed 64m
head -c 6000000 /dev/zero >"$E2E_TMP/6m"
curl -s -o /dev/null --max-time 30 --limit-rate 200k -H 'Expect:' --data-binary @"$E2E_TMP/6m" \
  "$SERVER_URL/api/42/envelope/?sentry_key=k" &
slow=$!
E2E_PIDS+=("$slow")
for ((i = 0; i < 50; i++)); do
  sleep 0.2
  browser_post "/api/42/envelope/?sentry_key=k" "$E2E_TMP/6m"
  [[ $HTTP_CODE == 429 ]] && break
done
kill "$slow" 2>/dev/null || true
wait "$slow" 2>/dev/null || true
sentry_error 429 "a body over the memory budget"
assert_eq 1 "$(header Retry-After)" "429: Retry-After"
assert_eq "1::organization:server_busy" "$(header X-Sentry-Rate-Limits)" "429: X-Sentry-Rate-Limits"
has_cors "429"
stop_server || fail "the server did not stop cleanly"
echo "ok"
