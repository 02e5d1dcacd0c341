#!/usr/bin/env bash
# Pyroscope's push API over Connect against the real server: a push.v1 PushRequest with two
# series and three samples, as protobuf and as JSON (and gzip-compressed), stores three pprof
# profiles with the series' labels and the samples' IDs, each with the totals the same pprof
# gets on /v1/pprof; errors answered in Connect's shape, nothing stored by a failed push.
# The same Connect calls over HTTP/2 on the h2c listener (python3-h2) get the same answers,
# byte for byte, and store the same profiles.
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:?}/fixtures/pprof"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no $FIX"
  exit 77
fi
command -v jq >/dev/null || fail "jq is needed"
BUILD="/usr/bin/python3 $(dirname "$0")/../grpc/push_request.py"
PUSH=/push.v1.PusherService/Push
A="$FIX/pyroscope_go.cpu.labels.pprof"
B="$FIX/google-pprof_sample.cpu"
C="$FIX/pyroscope_heap"
UUID=734FD599-6865-419E-9475-932762D8F469
SERIES=("__name__=process_cpu;service_name=checkout;env=prod@$A:$UUID,$B:id-2"
  "service_name=payments;region=eu;__name__=memory@$C")

# push FILE CONTENT_TYPE [curl args]: POST to the push endpoint
push() {
  local file=$1 ct=$2
  shift 2
  http POST "$PUSH" -H "Content-Type: $ct" --data-binary @"$file" "$@"
}

# The stored profiles as sorted "id service labels totals" lines (id "-" when random).
stored() {
  curl -sS "$SERVER_URL/api/v1/profiles?limit=1000" | jq -r '.profiles[] |
    [(if .attrs.pyroscope_id then .id else "-" end), .service, (.labels | tojson),
     (.events | tojson)] | join(" ")' | sort
}

# The totals of each file on /v1/pprof (the existing pprof path), as the list shows them.
start_server
for f in "$A" "$B" "$C"; do
  http POST /v1/pprof --data-binary @"$f"
  assert_eq 204 "$HTTP_CODE" "$(basename "$f") on /v1/pprof"
done
mapfile -t TOTALS < <(curl -sS "$SERVER_URL/api/v1/profiles?limit=10" | jq -c '.profiles | reverse | .[].events')
WANT=$(printf '%s\n' \
  "$UUID checkout {\"__name__\":\"process_cpu\",\"env\":\"prod\"} ${TOTALS[0]}" \
  "id-2 checkout {\"__name__\":\"process_cpu\",\"env\":\"prod\"} ${TOTALS[1]}" \
  "- payments {\"__name__\":\"memory\",\"region\":\"eu\"} ${TOTALS[2]}" | sort)

for kind in proto json; do
  $BUILD "$kind" "$E2E_TMP/req.$kind" "${SERIES[@]}"
  ct=application/$kind
  start_server
  push "$E2E_TMP/req.$kind" "$ct"
  assert_eq 200 "$HTTP_CODE" "$kind push"
  [[ $kind == json ]] && assert_eq '{}' "$HTTP_BODY" "JSON PushResponse"
  [[ $kind == proto ]] && assert_eq '' "$HTTP_BODY" "protobuf PushResponse (empty)"
  assert_eq "$ct" "$(grep -i '^Content-Type:' <<<"$HTTP_HEADERS" | sed 's/^[^:]*: *//')" \
    "$kind answer content type"
  assert_eq "$WANT" "$(stored)" "$kind push: three profiles, labels, ids, totals"
  http GET "/api/v1/profiles?source=pprof&label=region:eu"
  assert_eq 1 "$(jq '.profiles | length' <<<"$HTTP_BODY")" "$kind: stored as source pprof, label filter"
  # a client's ID is the profile's id as it was given (dashes and capitals kept)
  http GET "/api/v1/profiles/$UUID"
  assert_eq "200 $UUID" "$HTTP_CODE $(jq -r .id <<<"$HTTP_BODY")" "$kind: the profile under its push ID"
  # ... and found under the same ID written otherwise: in lowercase, as 32 hex digits
  for v in "${UUID,,}" "${UUID//-/}" "$(tr -d - <<<"${UUID,,}")"; do
    http GET "/api/v1/profiles/$v"
    assert_eq "200 $UUID" "$HTTP_CODE $(jq -r .id <<<"$HTTP_BODY")" "$kind: the profile read as $v"
  done
  # the same push again: the samples with an ID are found already stored
  push "$E2E_TMP/req.$kind" "$ct"
  assert_eq 200 "$HTTP_CODE" "$kind push again"
  assert_eq 4 "$(stored | wc -l)" "$kind push again: only the sample without an ID is new"
  # gzip Content-Encoding (Connect's compression for unary calls)
  gzip -c "$E2E_TMP/req.$kind" >"$E2E_TMP/req.$kind.gz"
  start_server
  push "$E2E_TMP/req.$kind.gz" "$ct" -H 'Content-Encoding: gzip'
  assert_eq 200 "$HTTP_CODE" "gzip $kind push"
  assert_eq "$WANT" "$(stored)" "gzip $kind push: the same profiles"
done

# --- an ID as Alloy and the SDKs send it (a lowercase dashed UUID, stored as sent) is found
# when asked in capitals or as 32 hex digits; the other reads of a profile by id too ---------
LID=5d5b5b5b-0000-4000-8000-000000000001
$BUILD proto "$E2E_TMP/alloy.pb" "service_name=alloy@$A:$LID"
start_server
push "$E2E_TMP/alloy.pb" application/proto
assert_eq 200 "$HTTP_CODE" "a push with a lowercase dashed ID"
for v in "$LID" "${LID^^}" "${LID//-/}" "$(tr -d - <<<"${LID^^}")"; do
  http GET "/api/v1/profiles/$v"
  assert_eq "200 $LID" "$HTTP_CODE $(jq -r .id <<<"$HTTP_BODY")" "the profile read as $v"
  http GET "/api/v1/profiles/$v/top?limit=1"
  assert_eq 200 "$HTTP_CODE" "its top read as $v ($HTTP_BODY)"
done
http GET "/api/v1/profiles/5D5B5B5B-0000-4000-8000-000000000002"
assert_eq 404 "$HTTP_CODE" "another ID is no profile"

# --- the same push as a gRPC call on the h2c listener ----------------------------------------
PY=/usr/bin/python3
CLIENT="$(dirname "$0")/../grpc/grpc_client.py"
"$PY" -c 'import grpc' 2>/dev/null || fail "python3-grpcio is needed (scripts/install-deps.sh)"
start_server
out=$("$PY" "$CLIENT" export "$(grpc_port)" "$E2E_TMP/req.proto" --method "$PUSH")
assert_eq OK "$(jq -r .code <<<"$out")" "push over gRPC"
assert_eq "" "$(jq -r .response <<<"$out")" "empty PushResponse over gRPC"
assert_eq "$WANT" "$(stored)" "push over gRPC: the same three profiles"
printf '\x0a\x05\x12\x09' >"$E2E_TMP/bad.pb"
out=$("$PY" "$CLIENT" export "$(grpc_port)" "$E2E_TMP/bad.pb" --method "$PUSH")
assert_eq INVALID_ARGUMENT "$(jq -r .code <<<"$out")" "bad push over gRPC"
assert_contains "$(jq -r .details <<<"$out")" "malformed" "its message"
# a gRPC message is protobuf: the JSON form of the same push is refused, nothing stored
start_server
out=$("$PY" "$CLIENT" export "$(grpc_port)" "$E2E_TMP/req.json" --method "$PUSH")
assert_eq INVALID_ARGUMENT "$(jq -r .code <<<"$out")" "a JSON push over gRPC"
assert_contains "$(jq -r .details <<<"$out")" "the body is JSON" "its message"
assert_eq 0 "$(stored | grep -c . || true)" "nothing stored by a JSON push over gRPC"

# --- errors, in Connect's shape; a failed push stores nothing -----------------------------------
start_server
# connect_error STATUS CODE WHAT: the last answer is a Connect error
connect_error() {
  assert_eq "$1" "$HTTP_CODE" "$3: status"
  assert_eq "$2" "$(jq -r .code <<<"$HTTP_BODY")" "$3: code"
  [[ -n "$(jq -r .message <<<"$HTTP_BODY")" ]] || fail "$3: no message"
}
printf '\x0a\x05\x12\x09' >"$E2E_TMP/bad.pb"
push "$E2E_TMP/bad.pb" application/proto
connect_error 400 invalid_argument "malformed protobuf"
printf '{"series": [' >"$E2E_TMP/bad.json"
push "$E2E_TMP/bad.json" application/json
connect_error 400 invalid_argument "malformed JSON"
printf '{"series":[{"labels":[],"samples":[{"rawProfile":"***"}]}]}' >"$E2E_TMP/b64.json"
push "$E2E_TMP/b64.json" application/json
connect_error 400 invalid_argument "rawProfile not base64"
assert_contains "$(jq -r .message <<<"$HTTP_BODY")" "series 0 sample 0" "where the fault is"
printf '{"series":[]}' >"$E2E_TMP/empty.json"
push "$E2E_TMP/empty.json" application/json
connect_error 400 invalid_argument "no sample"
push "$E2E_TMP/req.proto" text/plain
connect_error 415 invalid_argument "content type"
# Connect: the body is read with the codec Content-Type names (JSON is no protobuf), and an
# unsupported Content-Encoding is "unimplemented" (501) naming the encodings taken
push "$E2E_TMP/req.json" application/proto
connect_error 400 invalid_argument "JSON sent as application/proto"
push "$E2E_TMP/req.proto" application/proto -H 'Content-Encoding: compress'
connect_error 501 unimplemented "Content-Encoding compress"
assert_contains "$(jq -r .message <<<"$HTTP_BODY")" "gzip" "the encodings taken are named"
# the second sample is no pprof: the whole push fails, the first sample is not stored
printf 'not a profile' >"$E2E_TMP/junk"
$BUILD proto "$E2E_TMP/half.pb" "service_name=half@$A:good-one,$E2E_TMP/junk:bad-one"
push "$E2E_TMP/half.pb" application/proto
connect_error 400 invalid_argument "a sample that is no pprof"
assert_contains "$(jq -r .message <<<"$HTTP_BODY")" "series 0 sample 1" "the sample at fault"
assert_eq 0 "$(stored | grep -c . || true)" "nothing stored by the failed push"

start_server --ingest-token s3cret
push "$E2E_TMP/req.proto" application/proto
connect_error 401 unauthenticated "no token"
push "$E2E_TMP/req.proto" application/proto -H 'Authorization: Bearer s3cret'
assert_eq 200 "$HTTP_CODE" "push with the ingest token"
start_server --max-body 1k
push "$E2E_TMP/req.proto" application/proto
connect_error 429 resource_exhausted "over max_body"
# --- Connect unary over HTTP/2 on the h2c listener: the HTTP/1.1 route's answers -------------
"$PY" -c 'import h2' 2>/dev/null || fail "python3-h2 is needed (scripts/install-deps.sh)"
# h2push FILE CTYPE [client args]: the same push as a Connect call over HTTP/2
h2push() {
  local file=$1 ct=$2
  shift 2
  H2=$("$PY" "$CLIENT" connect "$(grpc_port)" "$file" "$ct" "$@")
}
# same_answer WHAT: the last HTTP/1.1 answer (http) and the last HTTP/2 one (h2push) agree on
# status, Content-Type, Retry-After and body
same_answer() {
  local hdr
  hdr() { grep -i "^$1:" <<<"$HTTP_HEADERS" | sed 's/^[^:]*: *//' || true; }
  assert_eq "$HTTP_CODE" "$(jq -r '.[":status"]' <<<"$H2")" "$1 over HTTP/2: status"
  assert_eq "$(hdr Content-Type)" "$(jq -r '.["content-type"]' <<<"$H2")" "$1 over HTTP/2: content type"
  assert_eq "$(hdr Retry-After)" "$(jq -r '.["retry-after"]' <<<"$H2")" "$1 over HTTP/2: Retry-After"
  assert_eq "$(hdr Allow)" "$(jq -r '.allow' <<<"$H2")" "$1 over HTTP/2: Allow"
  assert_eq "$HTTP_BODY" "$(jq -r .body <<<"$H2")" "$1 over HTTP/2: body"
}
for kind in proto json; do
  ct=application/$kind
  start_server
  h2push "$E2E_TMP/req.$kind" "$ct"
  push "$E2E_TMP/req.$kind" "$ct" # again over HTTP/1.1: the samples with an ID are stored already
  same_answer "$kind push"
  assert_eq 200 "$HTTP_CODE" "$kind push over HTTP/2"
  assert_eq 4 "$(stored | wc -l)" "$kind push over HTTP/2, then HTTP/1.1: the same three, one new"
  start_server
  h2push "$E2E_TMP/req.$kind" "$ct" --gzip
  assert_eq 200 "$(jq -r '.[":status"]' <<<"$H2")" "gzip $kind push over HTTP/2"
  assert_eq "$WANT" "$(stored)" "gzip $kind push over HTTP/2: three profiles, labels, ids, totals"
done
# errors: every one answered as the HTTP/1.1 route answers it, nothing stored
start_server
for c in "bad.pb application/proto" "bad.json application/json" "b64.json application/json" \
  "empty.json application/json" "req.proto text/plain" "half.pb application/proto" \
  "req.json application/proto"; do
  read -r f ct <<<"$c"
  push "$E2E_TMP/$f" "$ct"
  h2push "$E2E_TMP/$f" "$ct"
  same_answer "$f as $ct"
done
push "$E2E_TMP/req.proto" application/proto -H 'Connect-Protocol-Version: 2'
h2push "$E2E_TMP/req.proto" application/proto --header 'connect-protocol-version:2'
same_answer "Connect-Protocol-Version 2"
push "$E2E_TMP/req.proto" application/proto -H 'Content-Encoding: compress'
h2push "$E2E_TMP/req.proto" application/proto --header 'content-encoding:compress'
same_answer "Content-Encoding compress"
assert_eq 501 "$(jq -r '.[":status"]' <<<"$H2")" "Content-Encoding compress over HTTP/2: 501"
printf 'not gzip at all' >"$E2E_TMP/notgz"
push "$E2E_TMP/notgz" application/proto -H 'Content-Encoding: gzip'
h2push "$E2E_TMP/notgz" application/proto --header 'content-encoding:gzip'
same_answer "a body that is not gzip"
http GET "$PUSH"
h2push "$E2E_TMP/empty.json" application/json --method GET
same_answer "GET"
assert_eq 0 "$(stored | grep -c . || true)" "nothing stored by the failed pushes over HTTP/2"
start_server --ingest-token s3cret
push "$E2E_TMP/req.proto" application/proto
h2push "$E2E_TMP/req.proto" application/proto
same_answer "no token"
push "$E2E_TMP/req.proto" application/proto -H 'Authorization: Bearer wrong'
h2push "$E2E_TMP/req.proto" application/proto --token wrong
same_answer "a wrong token"
h2push "$E2E_TMP/req.proto" application/proto --token s3cret
assert_eq 200 "$(jq -r '.[":status"]' <<<"$H2")" "the ingest token over HTTP/2"
h2push "$E2E_TMP/req.proto" application/proto --header "authorization:Basic $(printf 'u:s3cret' | base64)"
assert_eq 200 "$(jq -r '.[":status"]' <<<"$H2")" "the ingest token as Basic password over HTTP/2"
start_server --max-body 1k
push "$E2E_TMP/req.proto" application/proto
h2push "$E2E_TMP/req.proto" application/proto --header "content-length:$(stat -c %s "$E2E_TMP/req.proto")"
same_answer "over max_body (Content-Length)"
h2push "$E2E_TMP/req.proto" application/proto
connect_h2() { jq -r "$1" <<<"$H2"; }
assert_eq 429 "$(connect_h2 '.[":status"]')" "over max_body (no Content-Length) over HTTP/2"
assert_eq resource_exhausted "$(connect_h2 .body | jq -r .code)" "over max_body: its code"
# the calls counted like the HTTP route's
M=$(curl -sS "$SERVER_URL/metrics") || fail "scrape /metrics"
grep -q '^spaa_relay_requests_total{route="/push.v1.PusherService/Push",status="429"} 3$' <<<"$M" ||
  fail "the pushes over max_body are not counted as 429: $(grep PusherService <<<"$M")"
echo "ok [$E2E_NAME]"
