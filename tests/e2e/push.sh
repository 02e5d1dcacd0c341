#!/usr/bin/env bash
# Pyroscope's push API over Connect against the real server: a push.v1 PushRequest with two
# series and three samples, as protobuf and as JSON (and gzip-compressed), stores three pprof
# profiles with the series' labels and the samples' IDs, each with the totals the same pprof
# gets on /v1/pprof; errors answered in Connect's shape, nothing stored by a failed push.
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
echo "ok [$E2E_NAME]"
