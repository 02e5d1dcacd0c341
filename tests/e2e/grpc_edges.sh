#!/usr/bin/env bash
# The gRPC listener's answers at the edges of the protocol, against the real server with
# hand-made HTTP/2 calls (python3-h2), each as grpc-go (the OpenTelemetry Collector's gRPC
# server) answers it: a content type that is not gRPC is HTTP 415 with INVALID_ARGUMENT; a
# content-subtype without a codec is read as protobuf (OTLP/JSON under application/grpc+json
# is refused, not stored), the answer in the request's content type; a method other than
# POST is 405 and a
# malformed grpc-timeout 400, both INTERNAL; a message stream that breaks gRPC's framing (no
# message, two, a flag that says compressed with no grpc-encoding, an unknown flag, a cut
# message, a message that does not decompress) is INTERNAL, stores nothing and is counted.
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:?}/fixtures/otlp"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no $FIX"
  exit 77
fi
PY=/usr/bin/python3
CLIENT="$(dirname "$0")/../grpc/grpc_client.py"
"$PY" -c 'import h2' 2>/dev/null || fail "python3-h2 is needed (scripts/install-deps.sh)"
command -v jq >/dev/null || fail "jq is needed"
MIN="$FIX/v1dev_06_minimal.bin"
PUSH=/push.v1.PusherService/Push

# field KEY JSON: a value of the client's one-line JSON
field() { jq -r ".[\"$1\"]" <<<"$2"; }
# expect HTTP_STATUS GRPC_STATUS WHAT [raw args]: one hand-made call carrying the minimal
# ExportProfilesServiceRequest; its :status and grpc-status, its answer kept in OUT
expect() {
  local st=$1 gs=$2 what=$3
  shift 3
  OUT=$("$PY" "$CLIENT" raw "$G" "$MIN" "$@")
  assert_eq "$st $gs" "$(field :status "$OUT") $(field grpc-status "$OUT")" "$what"
}
stored() { curl -sS "$SERVER_URL/api/v1/profiles?limit=1000" | jq '.profiles | length'; }

start_server
G=$(grpc_port)

# --- content type (PROTOCOL-HTTP2: not application/grpc*, 415; grpc-go adds INVALID_ARGUMENT) ---
expect 415 3 "application/json: 415, INVALID_ARGUMENT" --ctype application/json
assert_contains "$(field grpc-message "$OUT")" 'invalid gRPC request content-type "application/json"' \
  "the content type is named"
assert_eq application/grpc "$(field content-type "$OUT")" "the 415 is a gRPC answer"
expect 415 3 "no content-type: 415" --ctype ''
assert_contains "$(field grpc-message "$OUT")" 'content-type ""' "an absent content type said so"
expect 415 3 "application/grpc-web: 415" --ctype application/grpc-web
expect 415 3 "the prefix compared as grpc-go compares it (case kept)" --ctype Application/grpc
expect 415 3 "the content type is checked before the method" --ctype text/plain --http-method GET
# a content-subtype with no codec: grpc-go reads the message with its default codec, protobuf,
# and answers in the request's content type; so OTLP/JSON under application/grpc+json is a
# message that is not protobuf (refused as any malformed message is: INVALID_ARGUMENT, the
# OTLP specification's code), and stores nothing
for ct in application/grpc+json application/grpc; do
  OUT=$("$PY" "$CLIENT" raw "$G" "$FIX/v1dev_06_minimal.json" --ctype $ct)
  assert_eq "200 3" "$(field :status "$OUT") $(field grpc-status "$OUT")" \
    "OTLP/JSON as $ct: not protobuf"
  assert_contains "$(field grpc-message "$OUT")" "OTLP/JSON goes to POST /v1development/profiles" \
    "where JSON goes instead"
done
assert_eq 0 "$(stored)" "nothing stored from OTLP/JSON over gRPC"
expect 200 0 "application/grpc+json: read as protobuf" --ctype application/grpc+json
assert_eq application/grpc+json "$(field content-type "$OUT")" "answered as application/grpc+json"
assert_eq 1 "$(stored)" "the protobuf message under application/grpc+json stored"
expect 200 0 "application/grpc+proto" --ctype application/grpc+proto
assert_eq application/grpc+proto "$(field content-type "$OUT")" "answered as application/grpc+proto"
expect 200 0 "application/grpc" --ctype application/grpc
assert_eq application/grpc "$(field content-type "$OUT")" "answered as application/grpc"

# --- method and grpc-timeout: grpc-go's header checks, HTTP 405 / 400 with INTERNAL ------------
expect 405 13 "GET: 405, INTERNAL" --http-method GET
assert_contains "$(field grpc-message "$OUT")" "should be POST" "the method's message"
expect 400 13 "malformed grpc-timeout: 400, INTERNAL" --timeout 1x
assert_contains "$(field grpc-message "$OUT")" "malformed grpc-timeout" "the timeout's message"
expect 400 13 "grpc-timeout of 9 digits: 400" --timeout 123456789S

# --- the message stream: gRPC's framing broken is INTERNAL, nothing stored -------------------
M=$(curl -sS "$SERVER_URL/metrics")
bad0=$(awk '/^spaa_relay_requests_total\{route="\/opentelemetry\.proto\.collector\.profiles\.v1development\.ProfilesService\/Export",status="400"\}/ { print $2 }' <<<"$M")
before=$(stored)
expect 200 13 "no message (the stream ends with the headers)" --no-body
assert_contains "$(field grpc-message "$OUT")" "no request message" "zero messages said so"
expect 200 13 "no message (an empty DATA frame ends it)" --cut 1000000
expect 200 13 "two messages on a unary call" --twice
assert_contains "$(field grpc-message "$OUT")" "not more than one" "two messages said so"
expect 200 13 "compressed flag, no grpc-encoding" --flag 1
assert_contains "$(field grpc-message "$OUT")" "grpc-encoding" "the missing encoding named"
expect 200 13 "compressed flag, grpc-encoding identity" --flag 1 --encoding identity
expect 200 13 "flag byte 2" --flag 2
assert_contains "$(field grpc-message "$OUT")" "flag" "the flag named"
expect 200 13 "a message cut short" --cut 3
expect 200 13 "a prefix cut short" --cut "$(($(stat -c %s "$MIN") + 2))"
expect 200 13 "compressed flag and gzip, but not gzip" --flag 1 --encoding gzip
assert_contains "$(field grpc-message "$OUT")" "decompress" "the decompression named"
assert_eq "$before" "$(stored)" "nothing stored by the broken calls"
M=$(curl -sS "$SERVER_URL/metrics")
bad1=$(awk '/^spaa_relay_requests_total\{route="\/opentelemetry\.proto\.collector\.profiles\.v1development\.ProfilesService\/Export",status="400"\}/ { print $2 }' <<<"$M")
assert_eq 9 "$((${bad1:-0} - ${bad0:-0}))" "each broken call counted once as a 400"
grep -q 'msg="grpc call refused".*no request message' "$SERVER_LOG" || fail "the refusal is not logged"

# the push method follows the same rules
expect 200 13 "push: no message" --no-body --path "$PUSH"
expect 200 13 "push: compressed flag, no grpc-encoding" --flag 1 --path "$PUSH"

# still serving, the malformed protobuf still INVALID_ARGUMENT (the OTLP specification's code)
expect 200 0 "served after all that"
printf 'not protobuf' >"$E2E_TMP/garbage.bin"
OUT=$("$PY" "$CLIENT" raw "$G" "$E2E_TMP/garbage.bin")
assert_eq "200 3" "$(field :status "$OUT") $(field grpc-status "$OUT")" "bad protobuf: INVALID_ARGUMENT"
stop_server || fail "server exit status"
echo "ok [$E2E_NAME]"
