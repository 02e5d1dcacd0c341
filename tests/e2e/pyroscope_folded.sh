#!/usr/bin/env bash
# Folded stacks through Pyroscope's POST /ingest, pushed as its agents push them: the
# pyroscope-rs agents (format=folded, Content-Type binary/octet-stream, name with tags,
# from/until in seconds, sampleRate, spyName), a text/plain push without `format` (folded is
# Pyroscope's default) and format=lines; read back through /api/v1/top, the profile's
# metadata, /collapsed (the stacks as sent) and /spaa (what `convert --from folded` writes
# with the same values as flags). Refusals: 4xx JSON naming the line or the
# parameter, nothing stored, the server still serving; a body without `format` that is no
# text is still a pprof, and folded stacks in a multipart body are its pprof form.
source "$(dirname "$0")/lib.bash"
command -v jq >/dev/null || fail "jq is required"
ids_header() { printf '%s\n' "$HTTP_HEADERS" | sed -n 's/^X-Spaa-Profile-Ids: //Ip' | head -n1; }
count_of() { curl -sS "$SERVER_URL/api/v1/profiles?service=$1" | jq '.profiles | length'; }
start_server

# --- a pyroscope-rs push: cpu at 100 Hz, tags in the name ----------------------------------------
cat >"$E2E_TMP/rs.folded" <<'EOF'
main;server::run;handler::checkout;db::query 40
main;server::run;handler::checkout;json::encode 25
main;server::run;handler::health 5
main;server::run;handler::checkout;db::query 10
main;gc 20
EOF
http POST '/ingest?name=rustapp.cpu%7Benv%3Dprod%2Chost%3Da1%7D&from=1700000000&until=1700000010&format=folded&sampleRate=100&spyName=pyroscope-rs' \
  -H 'Content-Type: binary/octet-stream' --data-binary @"$E2E_TMP/rs.folded"
assert_eq 200 "$HTTP_CODE" "pyroscope-rs push ($HTTP_BODY)"
assert_eq "" "$HTTP_BODY" "/ingest answers an empty body"
ID=$(ids_header)
[[ "$ID" =~ ^[0-9a-f]{32}$ ]] || fail "no profile id: $HTTP_HEADERS"

http GET '/api/v1/top?service=rustapp&limit=3'
assert_eq 200 "$HTTP_CODE" "merged top ($HTTP_BODY)"
# 100 samples at 100 Hz: one second of cpu, 10 ms a sample
assert_eq "cpu nanoseconds 1000000000" "$(jq -r '"\(.metric) \(.unit) \(.total)"' <<<"$HTTP_BODY")" "top: metric, unit, total"
assert_eq "db::query 500000000|json::encode 250000000|gc 200000000" \
  "$(jq -r '[.top[] | "\(.name) \(.self)"] | join("|")' <<<"$HTTP_BODY")" "top functions by self"
http GET '/api/v1/top?service=rustapp&metric=samples&limit=1'
assert_eq "samples 100 db::query 50" "$(jq -r '"\(.metric) \(.total) \(.top[0].name) \(.top[0].self)"' <<<"$HTTP_BODY")" "top by samples"

http GET "/api/v1/profiles/$ID"
assert_eq 200 "$HTTP_CODE" "the profile's metadata ($HTTP_BODY)"
assert_eq "rustapp folded cpu 1000000000 100" \
  "$(jq -r '"\(.service) \(.source) \(.events[0].name) \(.events[0].totals.cpu) \(.events[0].totals.samples)"' <<<"$HTTP_BODY")" "service, source, totals"
assert_eq '{"__name__":"cpu","env":"prod","host":"a1"}' "$(jq -cS '.labels' <<<"$HTTP_BODY")" "labels"
assert_eq "pyroscope-rs 100 folded 2023-11-14T22:13:20.000000000Z 2023-11-14T22:13:30.000000000Z" \
  "$(jq -r '"\(.attrs.spy_name) \(.attrs.sample_rate) \(.attrs.folded_format) \(.start_at) \(.end_at)"' <<<"$HTTP_BODY")" "attrs and time range"

# the stacks come back as they were sent (equal ones summed), counted in samples
http GET "/api/v1/profiles/$ID/collapsed?metric=samples"
assert_eq 200 "$HTTP_CODE" "collapsed ($HTTP_BODY)"
want=$(printf '%s\n' 'main;gc 20' 'main;server::run;handler::checkout;db::query 50' \
  'main;server::run;handler::checkout;json::encode 25' 'main;server::run;handler::health 5')
assert_eq "$want" "$(printf '%s\n' "$HTTP_BODY" | sort)" "collapsed stacks"

# the stored SPAA is what `convert --from folded` writes given the push's query as flags
curl -sS -o "$E2E_TMP/http.spaa" "$SERVER_URL/api/v1/profiles/$ID/spaa" || fail "GET the stored SPAA"
"$SPAA_BIN" convert --from folded --name 'rustapp.cpu{env=prod,host=a1}' --time-from 1700000000 \
  --time-until 1700000010 --sample-rate 100 "$E2E_TMP/rs.folded" >"$E2E_TMP/cli.spaa" ||
  fail "convert --from folded with the push's flags"
cmp -s "$E2E_TMP/http.spaa" "$E2E_TMP/cli.spaa" ||
  fail "the stored SPAA differs from convert's ($(cmp "$E2E_TMP/http.spaa" "$E2E_TMP/cli.spaa" 2>&1 | head -n1))"
"$SPAA_BIN" validate --quiet "$E2E_TMP/http.spaa" >/dev/null || fail "the stored SPAA does not validate"

# the listing filters by the new source
assert_eq "1" "$(curl -sS "$SERVER_URL/api/v1/profiles?source=folded" | jq '.profiles | length')" "source=folded"

# --- no format, text/plain: folded, Pyroscope's default; CRLF lines; a wall profile at 50 Hz ---
printf 'main;loop;sleep 30\r\nmain;loop;work 20\r\n' >"$E2E_TMP/py.folded"
http POST '/ingest?name=pyapp.wall&from=1700000100&until=1700000110&sampleRate=50&spyName=pyspy' \
  -H 'Content-Type: text/plain' --data-binary @"$E2E_TMP/py.folded"
assert_eq 200 "$HTTP_CODE" "text push without format ($HTTP_BODY)"
http GET '/api/v1/top?service=pyapp&limit=1'
assert_eq "wall nanoseconds 1000000000 sleep" "$(jq -r '"\(.metric) \(.unit) \(.total) \(.top[0].name)"' <<<"$HTTP_BODY")" "wall at 50 Hz"

# --- format=lines: one stack per line, each one sample; sampleRate=0: counts only -----------------
printf 'main;a\nmain;a\nmain;b\n\nmain;a\n' >"$E2E_TMP/lines.txt"
http POST '/ingest?name=linesapp.cpu&format=lines&sampleRate=0' --data-binary @"$E2E_TMP/lines.txt"
assert_eq 200 "$HTTP_CODE" "format=lines ($HTTP_BODY)"
http GET '/api/v1/top?service=linesapp&limit=1'
assert_eq "samples count 4 a 3" "$(jq -r '"\(.metric) \(.unit) \(.total) \(.top[0].name) \(.top[0].self)"' <<<"$HTTP_BODY")" "lines counted"

# --- an allocation profile: the values are bytes as sent --------------------------------------
printf 'main;alloc;make 4096\nmain;grow 1024\n' | gzip -c >"$E2E_TMP/alloc.gz"
http POST '/ingest?name=memapp.alloc_space&format=folded' -H 'Content-Encoding: gzip' \
  --data-binary @"$E2E_TMP/alloc.gz"
assert_eq 200 "$HTTP_CODE" "gzip Content-Encoding ($HTTP_BODY)"
http GET '/api/v1/top?service=memapp&limit=1'
assert_eq "alloc_space bytes 5120" "$(jq -r '"\(.metric) \(.unit) \(.total)"' <<<"$HTTP_BODY")" "alloc_space in bytes"

# --- a service_name label is the service (as Pyroscope's ingest adapter makes the series), the
# application name without its type kept as app_name; with format=folded and without format ---
printf 'main;charge 5\n' >"$E2E_TMP/billing.folded"
http POST '/ingest?name=legacyapp2.cpu%7Bservice_name%3Dbilling%7D&format=folded' \
  --data-binary @"$E2E_TMP/billing.folded"
assert_eq 200 "$HTTP_CODE" "folded push with a service_name label ($HTTP_BODY)"
http POST '/ingest?name=legacyapp2.cpu%7Bservice_name%3Dbilling%2Cenv%3Dprod%7D' \
  --data-binary @"$E2E_TMP/billing.folded"
assert_eq 200 "$HTTP_CODE" "the same without format ($HTTP_BODY)"
http GET '/api/v1/top?service=billing&limit=1'
assert_eq "200 cpu 100000000 charge" "$HTTP_CODE $(jq -r '"\(.metric) \(.total) \(.top[0].name)"' <<<"$HTTP_BODY")" \
  "top of the service_name's service"
assert_eq '__name__=cpu,app_name=legacyapp2,env=prod|__name__=cpu,app_name=legacyapp2' \
  "$(curl -sS "$SERVER_URL/api/v1/profiles?service=billing" | jq -r '[.profiles[].labels | to_entries |
     sort_by(.key) | map("\(.key)=\(.value)") | join(",")] | sort | reverse | join("|")')" \
  "labels: service_name not kept, app_name added"
assert_eq 0 "$(count_of legacyapp2)" "profiles stored under the application name"

# --- refusals: a 4xx JSON that names the line or parameter; nothing stored --------------------
bad() { # query body status error detail
  http POST "/ingest?$1" --data-binary "$2"
  assert_eq "$3" "$HTTP_CODE" "$1 ($HTTP_BODY)"
  assert_eq "$4" "$(json_get "$HTTP_BODY" error)" "$1: error code"
  assert_contains "$HTTP_BODY" "$5" "$1: detail"
}
bad 'name=badapp.cpu&format=folded' $'main;a 3\nmain;b x7\n' 422 invalid "line 2: 'x7' is not a count"
bad 'name=badapp.cpu' $'main;a 3\nmain;b\n' 422 invalid "line 2 has no count"
bad 'name=badapp.cpu' $'main;a -3\n' 422 invalid "line 1: the count -3 is negative"
bad 'name=badapp.cpu&format=folded' $'ok 1\nmain;\xff 2\n' 422 invalid "line 2: byte 6 is not valid UTF-8"
bad 'name=badapp.app&format=folded' $'main 1\n' 400 bad_request "ends in no profile type known for folded stacks"
bad 'name=.cpu&format=folded' $'main 1\n' 400 bad_request "bad name: the application name before '.cpu' (the profile type) is empty"
bad 'name=badapp.cpu&format=folded&sampleRate=-100' $'main 1\n' 400 bad_request "bad sampleRate '-100'"
bad 'name=badapp.cpu&format=jfr' $'main 1\n' 400 unsupported "this server accepts: pprof, folded (the default for text), lines"
bad 'format=folded' $'main 1\n' 400 bad_request "'name' is required"
http POST '/ingest?name=badapp.cpu&format=folded' --data-binary @"$E2E_TMP/alloc.gz"
assert_eq 422 "$HTTP_CODE" "a gzip body without Content-Encoding ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "gzip-compressed" "gzip body detail"
# without format, a body that is no text is read as a pprof (it is no folded stacks for this
# server, whatever Pyroscope would make of it): refused as one, the answer saying why it was
# not read as folded stacks and what would have it read so
bad 'name=badapp.cpu' $'main;caf\xe9 3\n' 400 bad_protobuf "not a pprof profile: the bytes are neither gzip nor a protobuf Profile; the body was read as a pprof because it is no text (at offset 8, byte 0xe9 is not UTF-8): a body is read as folded stacks when it is UTF-8 without control characters other than tab, CR and LF, or when format=folded is given"
bad 'name=badapp.cpu' $'main;a\x01b 3\n' 400 bad_protobuf "(at offset 6, byte 0x01 is a control character)"
http POST '/ingest?name=badapp.cpu' --data-binary @"$E2E_TMP/alloc.gz"
assert_eq 400 "$HTTP_CODE" "a gzip body without Content-Encoding nor format ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "not a pprof profile: the decompressed bytes are not a protobuf Profile; the body was read as a pprof because it is gzip-compressed and sent without Content-Encoding: send gzipped folded stacks with the header Content-Encoding: gzip" \
  "gzip body without format: detail"
# ... and a pprof sent without format that is broken says nothing of folded stacks
http POST '/ingest?name=badapp.cpu&format=pprof' --data-binary $'main;caf\xe9 3\n'
assert_eq 400 "$HTTP_CODE" "format=pprof, not a pprof ($HTTP_BODY)"
assert_eq '{"error":"bad_protobuf","detail":"not a pprof profile: the bytes are neither gzip nor a protobuf Profile"}' \
  "$HTTP_BODY" "format=pprof: no word of folded stacks"
http POST '/ingest?name=badapp.cpu' -H 'Content-Type: binary/octet-stream+trie' --data-binary 'xx'
assert_eq 400 "$HTTP_CODE" "trie ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "Pyroscope's trie format" "trie detail"
http POST '/ingest?name=badapp.cpu&format=folded' -H 'Content-Type: text/plain' --data-binary ''
assert_eq 400 "$HTTP_CODE" "empty body ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "the body is empty: expected folded stacks" "empty body detail"
head -c $((1024 * 1024 + 10)) /dev/zero | tr '\0' 'x' >"$E2E_TMP/long.txt"
printf ' 1\n' >>"$E2E_TMP/long.txt"
http POST '/ingest?name=badapp.cpu&format=folded' --data-binary @"$E2E_TMP/long.txt"
assert_eq 413 "$HTTP_CODE" "a line over the cap ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "line 1 is longer than 1048576 bytes" "long line detail"
assert_eq 0 "$(count_of badapp)" "profiles stored by refused uploads"
http GET /healthz
assert_eq 200 "$HTTP_CODE" "the server still serves"

# --- a pprof sent without format is still a pprof; folded stacks in multipart are pprof -------
F=${SPAA_SHARED:-}/fixtures/pprof/google-pprof_sample.cpu
if [[ -f "$F" ]]; then
  http POST '/ingest?name=goapp.cpu' --data-binary @"$F"
  assert_eq 200 "$HTTP_CODE" "a pprof without format ($HTTP_BODY)"
  http POST '/ingest?name=goapp2.cpu&format=folded' -F "profile=@$F"
  assert_eq 200 "$HTTP_CODE" "multipart with format=folded ($HTTP_BODY)"
  assert_eq "pprof pprof" "$(curl -sS "$SERVER_URL/api/v1/profiles?service=goapp" | jq -r '.profiles[0].source') $(curl -sS "$SERVER_URL/api/v1/profiles?service=goapp2" | jq -r '.profiles[0].source')" "stored as pprof"
else
  echo "note [$E2E_NAME]: no pprof fixture, the pprof-without-format check is skipped"
fi
stop_server || fail "the server did not exit cleanly"
echo "ok [$E2E_NAME]"
