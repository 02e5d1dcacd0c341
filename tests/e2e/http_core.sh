#!/usr/bin/env bash
# The HTTP core against the real server: config errors exit 2, the log format, /healthz,
# /readyz, 404/405 JSON, body caps (and the memory they cost), Content-Encoding errors,
# read and ingest tokens.
source "$(dirname "$0")/lib.bash"

# --- bad configuration: exit 2, with the origin of the error in the message -------------
expect_config_error() { # WANT_SUBSTRING command...
  local want=$1 out rc=0
  shift
  out=$("$@" 2>&1) || rc=$?
  assert_eq 2 "$rc" "exit status of: $*"
  assert_contains "$out" "$want" "message of: $*"
}
expect_config_error "--workers: bad number '0'" "$SPAA_BIN" serve --workers 0
expect_config_error "--bogus: unknown option" "$SPAA_BIN" serve --bogus
printf '# comment\nlisten = 127.0.0.1:0\nbogus = 1\n' >"$E2E_TMP/bad.conf"
expect_config_error "$E2E_TMP/bad.conf:3: unknown key 'bogus'" \
  "$SPAA_BIN" serve --config "$E2E_TMP/bad.conf"
expect_config_error "SPAA_RELAY_LOG_LEVEL: bad log level 'loud'" \
  env SPAA_RELAY_LOG_LEVEL=loud "$SPAA_BIN" serve

# --- one server with the defaults -----------------------------------------------------
start_server
A_PID=$SERVER_PID A_URL=$SERVER_URL A_LOG=$SERVER_LOG
grep -q 'level=warn msg="open mode' "$A_LOG" || fail "no open-mode warning at start"
grep -q 'msg="configuration" .*max_body=52428800 max_decompressed=52428800' "$A_LOG" ||
  fail "the effective configuration is not logged"

http GET /healthz
assert_eq 200 "$HTTP_CODE" "/healthz"
assert_eq '{"status":"ok"}' "$HTTP_BODY" "/healthz body"
http GET //healthz/
assert_eq 200 "$HTTP_CODE" "/healthz with folded and trailing slashes"
http GET /readyz
assert_eq 200 "$HTTP_CODE" "/readyz"

http GET /no/such/thing
assert_eq 404 "$HTTP_CODE" "unknown path"
assert_eq not_found "$(json_get "$HTTP_BODY" error)" "404 error code"
assert_contains "$HTTP_HEADERS" "Content-Type: application/json" "404 content type"
http DELETE /healthz
assert_eq 405 "$HTTP_CODE" "wrong method"
assert_eq method "$(json_get "$HTTP_BODY" error)" "405 error code"
assert_contains "$HTTP_HEADERS" "Allow: GET" "405 Allow header"
http PUT /api/v1/spaa --data-binary x
assert_eq 405 "$HTTP_CODE" "PUT on an ingest path"
assert_contains "$HTTP_HEADERS" "Allow: POST" "405 Allow header"

# --- 60 MB with Content-Length: 413 before the body, memory stays low ------------------
head -c 60000000 /dev/zero >"$E2E_TMP/60mb"
http POST /api/v1/spaa --data-binary @"$E2E_TMP/60mb"
assert_eq 413 "$HTTP_CODE" "60 MB body with Content-Length"
assert_eq too_large "$(json_get "$HTTP_BODY" error)" "413 error code"
assert_contains "$HTTP_BODY" "60000000 bytes, over the 52428800-byte cap" "413 detail"
http POST /api/v1/spaa -H 'Expect:' --data-binary @"$E2E_TMP/60mb"
assert_eq 413 "$HTTP_CODE" "60 MB body with Content-Length, no Expect: 100-continue"
assert_rss_below "$A_PID" 20000 "after refusing 60 MB bodies by Content-Length"

# --- 60 MB chunked: kept up to the 50 MiB cap at most, 413 at the end --------------------
http POST /api/v1/spaa -T "$E2E_TMP/60mb" -H 'Transfer-Encoding: chunked'
assert_eq 413 "$HTTP_CODE" "60 MB chunked body"
assert_contains "$HTTP_BODY" "passed the 52428800-byte cap" "chunked 413 detail"
# (memory for chunked bodies is checked below with a small cap, where it tells)

# --- Content-Encoding ------------------------------------------------------------------
head -c 200000000 /dev/zero | gzip -c >"$E2E_TMP/bomb.gz"
(($(stat -c %s "$E2E_TMP/bomb.gz") < 1000000)) || fail "the gzip bomb is not small"
http POST /api/v1/spaa -H 'Content-Encoding: gzip' --data-binary @"$E2E_TMP/bomb.gz"
assert_eq 413 "$HTTP_CODE" "gzip that inflates past the cap"
assert_contains "$HTTP_BODY" "gzip body decodes to more than the 52428800-byte cap" "bomb detail"
assert_rss_below "$A_PID" 150000 "while refusing a gzip bomb of 200 MB"

printf 'this is not gzip at all' >"$E2E_TMP/bad.gz"
http POST /api/v1/spaa -H 'Content-Encoding: gzip' --data-binary @"$E2E_TMP/bad.gz"
assert_eq 400 "$HTTP_CODE" "corrupt gzip"
assert_eq bad_compression "$(json_get "$HTTP_BODY" error)" "corrupt gzip error code"
head -c 3000 "$E2E_TMP/bomb.gz" >"$E2E_TMP/trunc.gz"
http POST /api/v1/spaa -H 'Content-Encoding: x-gzip' --data-binary @"$E2E_TMP/trunc.gz"
assert_eq 400 "$HTTP_CODE" "truncated gzip"
assert_contains "$HTTP_BODY" "truncated" "truncated gzip detail"
http POST /api/v1/spaa -H 'Content-Encoding: zstd' --data-binary 'not zstd'
assert_eq 400 "$HTTP_CODE" "corrupt zstd"
# a .spaa.zst sent as is (no Content-Encoding; the SPAA reader takes zstd) is held to the
# same cap: 200 MB of newlines in a few KB used to be decoded and read to the end
head -c 200000000 /dev/zero | tr '\0' '\n' | zstd -q -19 -c >"$E2E_TMP/bomb.zst"
(($(stat -c %s "$E2E_TMP/bomb.zst") < 100000)) || fail "the zstd bomb is not small"
http POST /api/v1/spaa --data-binary @"$E2E_TMP/bomb.zst"
assert_eq 413 "$HTTP_CODE" "a raw zstd body that decodes past the cap ($HTTP_BODY)"
head -c 200000000 /dev/zero | tr '\0' '\n' | zstd -q -19 -c | gzip -c >"$E2E_TMP/bomb.zst.gz"
http POST /api/v1/spaa -H 'Content-Encoding: gzip' --data-binary @"$E2E_TMP/bomb.zst.gz"
assert_eq 413 "$HTTP_CODE" "a zstd body inside gzip that decodes past the cap ($HTTP_BODY)"
# a service name that is not UTF-8 is refused (it was stored, then left out of every answer)
http POST '/api/v1/spaa?service=%FF%FE' --data-binary 'whatever'
assert_eq 400 "$HTTP_CODE" "a service name that is not UTF-8 ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "the service name is not valid UTF-8 (byte 0)" "what is wrong"
http POST /api/v1/spaa -H $'X-Service-Name: ok\xc3' --data-binary 'whatever'
assert_eq 400 "$HTTP_CODE" "X-Service-Name that is not UTF-8 ($HTTP_BODY)"
http POST /api/v1/spaa -H 'Content-Encoding: compress' --data-binary 'whatever'
assert_eq 415 "$HTTP_CODE" "unknown Content-Encoding"
assert_eq media_type "$(json_get "$HTTP_BODY" error)" "415 error code"
assert_contains "$HTTP_BODY" "'compress'" "415 names the coding"

stop_server "$A_PID" || fail "the default server did not exit 0"
grep -q 'msg="stopped"' "$A_LOG" || fail "no 'stopped' line"
# every line of the log has the documented shape
bad=$(grep -Evc '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z level=(debug|info|warn|error) msg="' "$A_LOG" || true)
assert_eq 0 "$bad" "log lines not in the documented format"

# --- a small cap: a chunked body is never kept past it, and cut off far past it ---------
start_server --max-body 4m --log-level warn
http POST /api/v1/spaa -T "$E2E_TMP/60mb" -H 'Transfer-Encoding: chunked'
assert_eq 413 "$HTTP_CODE" "60 MB chunked body over a 4 MiB cap"
assert_rss_below "$SERVER_PID" 24000 "with a 4 MiB cap and a 60 MB chunked body"
head -c 80000000 /dev/zero >"$E2E_TMP/80mb"
rm -f "$E2E_TMP/60mb"
http POST /api/v1/spaa -T "$E2E_TMP/80mb" -H 'Transfer-Encoding: chunked'
# no final answer: curl reports 000, or the 100 Continue it got before the cut
[[ "$HTTP_CODE" == 000 || "$HTTP_CODE" == 100 ]] ||
  fail "a body 68 MiB past the cap: the connection should be dropped, got $HTTP_CODE"
rm -f "$E2E_TMP/80mb"
http GET /healthz
assert_eq 200 "$HTTP_CODE" "still serving after a dropped connection"
grep -q 'msg="dropping connection: body far past the cap"' "$SERVER_LOG" ||
  fail "the drop is not logged"
if grep -v 'msg="listening on' "$SERVER_LOG" | grep 'level=info' >/dev/null; then
  fail "info lines (other than 'listening on') despite --log-level warn"
fi
stop_server || fail "the small-cap server did not exit 0"

# --- tokens -----------------------------------------------------------------------------
SPAA_RELAY_READ_TOKENS=r1,r2 start_server --ingest-token i1
if grep -q 'open mode' "$SERVER_LOG"; then fail "open-mode warning with tokens set"; fi
grep -q 'level=warn msg="no sentry keys configured' "$SERVER_LOG" || fail "no sentry-key warning"
http GET /api/v1/profiles
assert_eq 401 "$HTTP_CODE" "query without a token"
assert_eq unauthorized "$(json_get "$HTTP_BODY" error)" "401 error code"
assert_contains "$HTTP_HEADERS" "WWW-Authenticate: Bearer" "401 challenge"
http GET /api/v1/profiles -H 'Authorization: Bearer r3'
assert_eq 401 "$HTTP_CODE" "query with a wrong token"
http GET /api/v1/profiles -H 'Authorization: Bearer i1'
assert_eq 401 "$HTTP_CODE" "query with an ingest token"
http GET /api/v1/profiles -H 'Authorization: Bearer r2'
assert_eq 200 "$HTTP_CODE" "query with a read token"
assert_contains "$HTTP_BODY" '"profiles":[' "list answer"
http GET /api/v1/profiles/0123456789abcdef0123456789abcdef -H 'Authorization: Bearer r1'
assert_eq 404 "$HTTP_CODE" "metadata of a missing profile"
http GET /api/v1/profiles/0123456789abcdef0123456789abcdef/spaa
assert_eq 401 "$HTTP_CODE" "SPAA download without a token"
http POST /api/v1/spaa --data-binary 'x'
assert_eq 401 "$HTTP_CODE" "upload without a token"
http POST /api/v1/spaa --data-binary 'x' -H 'Authorization: Bearer r1'
assert_eq 401 "$HTTP_CODE" "upload with a read token"
http POST /api/v1/spaa --data-binary 'x' -H 'Authorization: Bearer i1'
[[ "$HTTP_CODE" != 401 && "$HTTP_CODE" =~ ^4 ]] ||
  fail "upload of junk with the ingest token: got $HTTP_CODE, want a 4xx other than 401"
[[ -n "$(json_get "$HTTP_BODY" error)" ]] || fail "no error code in: $HTTP_BODY"
http GET /healthz
assert_eq 200 "$HTTP_CODE" "/healthz needs no token"
stop_server || fail "the token server did not exit 0"
echo "PASS [$E2E_NAME]"
