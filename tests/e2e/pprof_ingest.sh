#!/usr/bin/env bash
# pprof through the real server: every fixture pushed to POST /ingest (raw body and
# multipart) and POST /v1/pprof, read back through the REST read path with its per-type
# totals checked against the file's own; the invalid UTF-8 fixture refused with 422 on every
# path; error answers for bad queries and bodies; tokens as Bearer and as Basic password.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pprof_lib.bash"

FIX="${SPAA_SHARED:-}/fixtures/pprof"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no fixtures at $FIX"
  exit 77
fi

start_server
n=0
for f in "$FIX"/*; do
  base=$(basename "$f")
  [[ "$base" == SOURCES.md ]] && continue
  n=$((n + 1))
  if [[ "$base" == pyroscope_invalid_utf8.pb.gz ]]; then
    http POST "/ingest?name=bad.cpu&format=pprof" --data-binary @"$f"
    assert_eq 422 "$HTTP_CODE" "/ingest raw, $base"
    assert_eq invalid "$(json_get "$HTTP_BODY" error)" "/ingest raw error code, $base"
    assert_contains "$HTTP_BODY" "string_table[4] is not valid UTF-8" "/ingest raw detail, $base"
    http POST "/ingest?name=bad.cpu" -F "profile=@$f"
    assert_eq 422 "$HTTP_CODE" "/ingest multipart, $base"
    assert_contains "$HTTP_BODY" "is not valid UTF-8" "/ingest multipart detail, $base"
    http POST "/v1/pprof?service=bad" --data-binary @"$f"
    assert_eq 422 "$HTTP_CODE" "/v1/pprof, $base"
    assert_contains "$HTTP_BODY" "is not valid UTF-8" "/v1/pprof detail, $base"
    continue
  fi
  # /ingest, raw body (from in seconds, until in milliseconds)
  svc="raw$n"
  http POST "/ingest?name=$svc.cpu%7Bfixture%3D$n%2Cmode%3Draw%7D&from=1700000000&until=1700000010000&format=pprof&sampleRate=100&spyName=gospy" \
    -H 'Content-Type: application/octet-stream' --data-binary @"$f"
  assert_eq 200 "$HTTP_CODE" "/ingest raw, $base: $HTTP_BODY"
  assert_eq "" "$HTTP_BODY" "/ingest answers an empty body, $base"
  id=$(only_id "$svc")
  push_readback "$f" "$id" "/ingest raw $base"
  http GET "/api/v1/profiles/$id"
  assert_eq pprof "$(json_get "$HTTP_BODY" source)" "source of $base"
  assert_eq "cpu,$n,raw" "$(printf '%s' "$HTTP_BODY" | jq -r '[.labels.__name__, .labels.fixture, .labels.mode] | join(",")')" \
    "labels of $base"
  assert_eq "gospy,100" "$(printf '%s' "$HTTP_BODY" | jq -r '[.attrs.spy_name, .attrs.sample_rate] | join(",")')" \
    "attrs of $base"

  # /ingest, multipart with field `profile` (and /pyroscope/ingest)
  svc="mp$n"
  http POST "/pyroscope/ingest?name=$svc&from=1700000000000000" -F "profile=@$f;type=application/octet-stream"
  assert_eq 200 "$HTTP_CODE" "/pyroscope/ingest multipart, $base: $HTTP_BODY"
  push_readback "$f" "$(only_id "$svc")" "/ingest multipart $base"

  # /v1/pprof, service from the header
  svc="otel$n"
  http POST /v1/pprof -H "X-Service-Name: $svc" --data-binary @"$f"
  assert_eq 204 "$HTTP_CODE" "/v1/pprof, $base: $HTTP_BODY"
  push_readback "$f" "$(only_id "$svc")" "/v1/pprof $base"
done
((n == 15)) || fail "expected 15 fixtures, found $n"
echo "ok [$E2E_NAME]: $n fixtures through 3 paths, totals checked against $PPROF_ORACLE"

# --- time range from the query when the pprof has none (dotnet: time_nanos 0) -------------
http POST "/ingest?name=timed&from=1700000000&until=1700000010" --data-binary @"$FIX/pyroscope_dotnet.labels.pprof"
assert_eq 200 "$HTTP_CODE" "/ingest with from/until"
http GET "/api/v1/profiles/$(only_id timed)"
assert_eq 1700000000000000000 "$(json_get "$HTTP_BODY" start)" "start from the query"
assert_eq 1700000010000000000 "$(json_get "$HTTP_BODY" end)" "end from the query"

# --- a service_name label is the service, as Pyroscope's ingest makes the series: the label
# not kept, the application name (its type taken off) kept as app_name unless the name has one
http POST "/ingest?name=legacyapp2.cpu%7Bservice_name%3Dbilling%2Cenv%3Dprod%7D" \
  --data-binary @"$FIX/google-pprof_sample.cpu"
assert_eq 200 "$HTTP_CODE" "/ingest with a service_name label: $HTTP_BODY"
http GET "/api/v1/top?service=billing&limit=1"
assert_eq 200 "$HTTP_CODE" "top of the service_name's service: $HTTP_BODY"
http GET "/api/v1/profiles/$(only_id billing)"
assert_eq '{"__name__":"cpu","app_name":"legacyapp2","env":"prod"}' "$(jq -cS .labels <<<"$HTTP_BODY")" \
  "labels of a pprof pushed with service_name"
http POST "/ingest?name=legacyapp3%7Bapp_name%3Dmine%2Cservice_name%3Dpayments%7D" \
  -F "profile=@$FIX/google-pprof_sample.cpu"
assert_eq 200 "$HTTP_CODE" "/ingest multipart with service_name and app_name: $HTTP_BODY"
http GET "/api/v1/profiles/$(only_id payments)"
assert_eq '{"app_name":"mine"}' "$(jq -cS .labels <<<"$HTTP_BODY")" "an app_name label given is kept"
assert_eq "0 0" "$(curl -sS "$SERVER_URL/api/v1/profiles?service=legacyapp2" | jq '.profiles | length') $(curl -sS "$SERVER_URL/api/v1/profiles?service=legacyapp3" | jq '.profiles | length')" \
  "nothing stored under the application names"

# --- /v1/pprof: Content-Encoding, service from the query, no service name --------------
gzip -dc "$FIX/google-pprof_sample.cpu" | gzip -c >"$E2E_TMP/sample.gz"
http POST "/v1/pprof?service=ce" -H 'Content-Encoding: gzip' --data-binary @"$E2E_TMP/sample.gz"
assert_eq 204 "$HTTP_CODE" "/v1/pprof with Content-Encoding: gzip over a gzipped pprof"
push_readback "$FIX/google-pprof_sample.cpu" "$(only_id ce)" "/v1/pprof Content-Encoding"
gzip -dc "$FIX/google-pprof_sample.cpu" >"$E2E_TMP/sample.raw"
http POST /v1/pprof --data-binary @"$E2E_TMP/sample.raw"
assert_eq 204 "$HTTP_CODE" "/v1/pprof plain protobuf"
# no service name: stored under OpenTelemetry's unknown_service
push_readback "$FIX/google-pprof_sample.cpu" "$(only_id unknown_service)" "/v1/pprof service unknown_service"

# --- sample_type_config is kept on the events -------------------------------------------
printf '{"cpu":{"units":"nanoseconds","display-name":"cpu_time","aggregation":"sum","sampled":true}}' \
  >"$E2E_TMP/stc.json"
http POST "/ingest?name=stc.cpu" -F "profile=@$FIX/google-pprof_sample.cpu" \
  -F "sample_type_config=<$E2E_TMP/stc.json"
assert_eq 200 "$HTTP_CODE" "/ingest with sample_type_config: $HTTP_BODY"
http GET "/api/v1/profiles/$(only_id stc)/spaa"
assert_eq "cpu_time,nanoseconds,sum,true" \
  "$(printf '%s\n' "$HTTP_BODY" | jq -r 'select(.type == "header") | .events[] | select(.name == "cpu") |
     [.x_pyroscope_display_name, .x_pyroscope_units, .x_pyroscope_aggregation, .x_pyroscope_sampled] | join(",")')" \
  "sample_type_config on the cpu event"

# --- errors -------------------------------------------------------------------------------
S="$FIX/google-pprof_sample.cpu"
http POST "/ingest?name=app.cpu&format=speedscope" --data-binary @"$S"
assert_eq 400 "$HTTP_CODE" "format=speedscope"
assert_contains "$HTTP_BODY" "format 'speedscope' is not supported here; this server accepts: pprof, folded (the default for text), lines" "bad format detail"
http POST "/ingest?name=app.cpu&format=jfr" --data-binary @"$S"
assert_eq 400 "$HTTP_CODE" "format=jfr"
http POST "/ingest" --data-binary @"$S"
assert_eq 400 "$HTTP_CODE" "no name"
assert_contains "$HTTP_BODY" "'name' is required" "no name detail"
http POST "/ingest?name=app%7Benv%7D" --data-binary @"$S"
assert_eq 400 "$HTTP_CODE" "label without '='"
assert_contains "$HTTP_BODY" "bad name: expected '=' after label key 'env'" "bad name detail"
http POST "/ingest?name=app%7Benv%3Dx" --data-binary @"$S"
assert_eq 400 "$HTTP_CODE" "unclosed label list"
http POST "/ingest?name=my%20app" --data-binary @"$S"
assert_eq 400 "$HTTP_CODE" "space in the application name"
http POST "/ingest?name=app%7B__name__%3Dx%7D" --data-binary @"$S"
assert_eq 400 "$HTTP_CODE" "reserved label key"
http POST "/ingest?name=app.cpu&from=yesterday" --data-binary @"$S"
assert_eq 400 "$HTTP_CODE" "bad from"
assert_contains "$HTTP_BODY" "bad from 'yesterday'" "bad from detail"
http POST "/ingest?name=app.cpu&from=1700000010&until=1700000000" --data-binary @"$S"
assert_eq 400 "$HTTP_CODE" "until before from"
# pyroscope-go sends sampleRate=0 for heap, mutex, block and goroutine: "not given", as
# Pyroscope reads it (and so is a rate that is not a number); an absurd one is refused
http POST "/ingest?name=app.heap&sampleRate=0" --data-binary @"$S"
assert_eq 200 "$HTTP_CODE" "sampleRate=0 (not given)"
http POST "/ingest?name=app.cpu&sampleRate=fast" --data-binary @"$S"
assert_eq 200 "$HTTP_CODE" "sampleRate=fast (not given)"
http POST "/ingest?name=app.cpu&sampleRate=99999999999" --data-binary @"$S"
assert_eq 400 "$HTTP_CODE" "sampleRate over the largest rate"
assert_contains "$HTTP_BODY" "bad sampleRate" "sampleRate over the largest rate: detail"
http POST "/ingest?name=app.cpu" -F "profile=@$S" -F "prev_profile=@$S"
assert_eq 400 "$HTTP_CODE" "prev_profile"
assert_contains "$HTTP_BODY" "unsupported client version" "prev_profile detail"
http POST "/ingest?name=app.cpu" -F "other=@$S"
assert_eq 400 "$HTTP_CODE" "multipart without profile"
assert_contains "$HTTP_BODY" "no 'profile' field" "multipart without profile detail"
http POST "/ingest?name=app.cpu" -F "profile=@$S" -F "sample_type_config={nope"
assert_eq 400 "$HTTP_CODE" "bad sample_type_config"
http POST "/ingest?name=app.cpu" -H 'Content-Type: multipart/form-data; boundary=xyz' \
  --data-binary $'--xyz\r\nContent-Disposition: form-data; name="profile"\r\n\r\nabc'
assert_eq 400 "$HTTP_CODE" "truncated multipart"
assert_contains "$HTTP_BODY" "truncated" "truncated multipart detail"
http POST "/ingest?name=app.cpu" -H 'Content-Type: application/octet-stream' --data-binary ''
assert_eq 400 "$HTTP_CODE" "empty body"
printf 'this is not a protobuf' >"$E2E_TMP/junk"
http POST /v1/pprof --data-binary @"$E2E_TMP/junk"
assert_eq 400 "$HTTP_CODE" "junk on /v1/pprof"
assert_eq bad_protobuf "$(json_get "$HTTP_BODY" error)" "junk error code"
head -c 600 "$FIX/pyroscope_heap" >"$E2E_TMP/trunc.gz"
http POST "/ingest?name=app" --data-binary @"$E2E_TMP/trunc.gz"
assert_eq 400 "$HTTP_CODE" "truncated gzip pprof"
assert_eq bad_compression "$(json_get "$HTTP_BODY" error)" "truncated gzip error code"
http GET /v1/pprof
assert_eq 405 "$HTTP_CODE" "GET /v1/pprof"
assert_contains "$HTTP_HEADERS" "Allow: POST" "405 Allow header"
http PUT /ingest --data-binary @"$S"
assert_eq 405 "$HTTP_CODE" "PUT /ingest"
grep -q 'msg="request" method=POST path="/ingest[^"]*" status=400 .*answer=' "$SERVER_LOG" ||
  fail "rejections are not logged with their answer"
n=$(grep -c 'pprof upload rejected' "$SERVER_LOG" || true)
assert_eq 0 "$n" "a second line per rejection at the default log level"

# unresolved frames (addresses in a mapping) are named alike by a profile's own views and the
# merged ones: a diff of the profile against its service moves nothing
http POST "/v1/pprof?service=cppbench" --data-binary @"$FIX/google-pprof_cppbench.cpu_no_samples_type"
assert_eq 204 "$HTTP_CODE" "the cppbench pprof"
cpp=$(curl -sS "$SERVER_URL/api/v1/profiles?service=cppbench" | jq -r '.profiles[0].id')
http GET "/api/v1/diff?base=$cpp&target.service=cppbench&limit=1000"
assert_eq 200 "$HTTP_CODE" "diff of a profile against its service ($HTTP_BODY)"
moved=$(printf '%s' "$HTTP_BODY" | jq '[.functions[] | select(.status != "same")] | length')
assert_eq 0 "$moved" "functions not \"same\" in a diff of a profile against itself"
one=$(curl -sS "$SERVER_URL/api/v1/profiles/$cpp/top?limit=5" | jq -c '[.top[].name]')
all=$(curl -sS "$SERVER_URL/api/v1/top?service=cppbench&limit=5" | jq -c '[.top[].name]')
assert_eq "$all" "$one" "the top functions' names, one profile vs its service"
stop_server || fail "the server did not exit cleanly"

# --- tokens: Bearer or Basic password; 413 over a small cap ---------------------------------
start_server --ingest-token s3cret --max-body 100000
http POST "/ingest?name=auth.cpu" --data-binary @"$S"
assert_eq 401 "$HTTP_CODE" "/ingest without a token"
http POST /v1/pprof --data-binary @"$S"
assert_eq 401 "$HTTP_CODE" "/v1/pprof without a token"
http POST "/ingest?name=auth.cpu" -u pyroscope:wrong --data-binary @"$S"
assert_eq 401 "$HTTP_CODE" "/ingest with a wrong Basic password"
http POST "/ingest?name=auth.cpu" -u pyroscope:s3cret --data-binary @"$S"
assert_eq 200 "$HTTP_CODE" "/ingest with the token as Basic password"
http POST "/v1/pprof?service=auth2" -H 'Authorization: Bearer s3cret' --data-binary @"$S"
assert_eq 204 "$HTTP_CODE" "/v1/pprof with the token as Bearer"
http POST "/ingest?name=big" -H 'Authorization: Bearer s3cret' --data-binary @"$FIX/pyroscope_heap"
assert_eq 413 "$HTTP_CODE" "a pprof over --max-body"
assert_eq too_large "$(json_get "$HTTP_BODY" error)" "413 error code"
stop_server || fail "the second server did not exit cleanly"
echo "ok [$E2E_NAME]"
