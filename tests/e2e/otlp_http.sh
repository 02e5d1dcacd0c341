#!/usr/bin/env bash
# OTLP/HTTP profiles against the real server: every vector of fixtures/otlp as protobuf and
# as JSON (and compressed), stored with exact totals read back from the query API; invalid
# vectors answered with partial_success; v1experimental on both paths; answers decoded and
# compared with the resp_* fixtures; content-type, method, version, cap and token errors
# answered with google.rpc.Status in the request's content type.
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:?}/fixtures/otlp"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no $FIX"
  exit 77
fi
DEV=/v1development/profiles
EXP=/v1experimental/profiles
PB=application/x-protobuf
JS=application/json

# Per-profile totals of each vector, "event:total" sorted. Computed from the fixtures'
# OTLP/JSON twins, independently of the codec: per profile, the sum of every sample's values,
# or its number of timestamps when it has no values (SOURCES.md states 01, 02, 04, 05).
declare -A WANT=(
  [v1dev_01_cpu_basic]="cpu:200000000"
  [v1dev_02_native_inlined_buildid]="samples:13"
  [v1dev_03_multi_resource_scope]="alloc_objects:8208 alloc_space:1310720 samples:19 wall:1000000000"
  [v1dev_04_attributes_links_payload]="wall:210000000"
  [v1dev_05_timestamps_offcpu]="off_cpu:412000000 samples:7"
  [v1dev_06_minimal]="samples:1"
  [v1dev_07_empty_request]=""
  [v1exp_01_ebpf_cpu]="samples:3"
)
# the genuine ebpf-profiler capture: 77 off-CPU profiles and 5 CPU ones
EBPF_WANT="off_cpu:1044859 off_cpu:10678748 off_cpu:116010 off_cpu:1363660 off_cpu:1414682639
off_cpu:171393611 off_cpu:18861499 off_cpu:1984503 off_cpu:202850 off_cpu:2030021
off_cpu:2543801 off_cpu:267599 off_cpu:2814717963 off_cpu:2846535805 off_cpu:2920715253
off_cpu:3066273 off_cpu:321835 off_cpu:3262898314 off_cpu:3321963339 off_cpu:350328591
off_cpu:3903848512 off_cpu:3993854174 off_cpu:4014299738 off_cpu:4147935 off_cpu:4273098302
off_cpu:4289618132 off_cpu:4293837271 off_cpu:4296093382 off_cpu:4416190652 off_cpu:4489596677
off_cpu:4518831055 off_cpu:4544353562 off_cpu:4587489290 off_cpu:4595199984 off_cpu:4596350500
off_cpu:4597162526 off_cpu:4598979858 off_cpu:4632393998 off_cpu:4649568864 off_cpu:4660750529
off_cpu:4669963891 off_cpu:4676776699 off_cpu:4683350267 off_cpu:4701359575 off_cpu:4728373303
off_cpu:4733687127 off_cpu:4735978351 off_cpu:4748934407 off_cpu:4760869240 off_cpu:4767551525
off_cpu:4773078282 off_cpu:4790500243 off_cpu:4847240236 off_cpu:4859268005 off_cpu:4906273761
off_cpu:490823 off_cpu:4913177069 off_cpu:5205625687 off_cpu:5209289411 off_cpu:5265097141
off_cpu:5722148058 off_cpu:5728743899 off_cpu:5875611389 off_cpu:6196587047 off_cpu:6272144524
off_cpu:6277809626 off_cpu:6436938146 off_cpu:6543019269 off_cpu:6842931467 off_cpu:6863453910
off_cpu:751632 off_cpu:759798044 off_cpu:817522020 off_cpu:838591 off_cpu:856651918
off_cpu:9028934046 off_cpu:98588 samples:1 samples:1 samples:1 samples:3 samples:4"
WANT[pyroscope_otel-ebpf-profile.pb]=$(echo $EBPF_WANT)

RESP="$E2E_TMP/resp"

# otlp_post PATH FILE CONTENT_TYPE [curl args...]: POST a file; sets HTTP_CODE, HTTP_HEADERS,
# RESP_CT (response Content-Type) and leaves the raw answer in $RESP.
otlp_post() {
  local path=$1 file=$2 ct=$3 hdr="$E2E_TMP/hdr"
  shift 3
  local args=(-H "Content-Type: $ct")
  [[ -n "$ct" ]] || args=(-H "Content-Type:")
  HTTP_CODE=$(curl -sS -o "$RESP" -D "$hdr" -w '%{http_code}' -X POST "${args[@]}" "$@" \
    --data-binary @"$file" "$SERVER_URL$path" || true)
  HTTP_HEADERS=$(tr -d '\r' <"$hdr")
  RESP_CT=$(grep -i '^Content-Type:' <<<"$HTTP_HEADERS" | head -n1 | sed 's/^[^:]*: *//' || true)
  rm -f "$hdr"
}

# The first bytes of the answer, as hex ("08 03 12").
resp_hex() { od -An -tx1 -N"$1" "$RESP" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }

# The first field tag inside the answer's message field 1 (partial_success): "08" when
# rejected_profiles is set, "12" when only error_message is; "" when there is none.
first_inner_tag() {
  local b=($(resp_hex 8)) i=1
  [[ "${b[0]:-}" == 0a ]] || return 0
  while ((0x${b[i]} >= 0x80)); do i=$((i + 1)); done
  echo "${b[i + 1]:-}"
}

# All OTLP profiles of the current server, newest first, as "event:total" lines.
list_totals() {
  http GET "/api/v1/profiles?source=otlp&limit=1000"
  assert_eq 200 "$HTTP_CODE" "profile list"
  grep -o '"events":\[{"name":"[^"]*","totals":{"[^"]*":-\?[0-9]*}}\]' <<<"$HTTP_BODY" |
    sed 's/^"events":\[{"name":"\([^"]*\)","totals":{"[^"]*":\(-\?[0-9]*\)}}\]$/\1:\2/' || true
}
count_profiles() { list_totals | wc -l; }

# expect_stored WHAT BEFORE WANT: the profiles stored since the list held BEFORE have
# exactly the totals WANT (sorted "event:total" words).
expect_stored() {
  local what=$1 before=$2 want=$3 all got n
  all=$(list_totals)
  n=$(($(grep -c . <<<"$all" || true) - before))
  got=$(head -n "$n" <<<"$all" | sort | tr '\n' ' ' | sed 's/ $//')
  want=$(tr ' ' '\n' <<<"$want" | grep . | sort | tr '\n' ' ' | sed 's/ $//' || true)
  assert_eq "$want" "$got" "$what: totals of the stored profiles"
}

# ingest VECTOR FILE PATH CONTENT_TYPE [curl args]: POST, expect 200 with an empty answer
# (full success) and the vector's totals stored.
ingest_ok() {
  local vec=$1 file=$2 path=$3 ct=$4 before
  shift 4
  before=$(count_profiles)
  otlp_post "$path" "$file" "$ct" "$@"
  assert_eq 200 "$HTTP_CODE" "$(basename "$file") on $path"
  assert_eq "$ct" "$RESP_CT" "$(basename "$file"): answer content type"
  if [[ "$ct" == "$JS" ]]; then
    assert_eq '{}' "$(cat "$RESP")" "$(basename "$file"): empty ExportProfilesServiceResponse"
  else
    assert_eq 0 "$(stat -c %s "$RESP")" "$(basename "$file"): empty ExportProfilesServiceResponse"
  fi
  expect_stored "$(basename "$file")" "$before" "${WANT[$vec]}"
}

VALID=(v1dev_01_cpu_basic v1dev_02_native_inlined_buildid v1dev_03_multi_resource_scope
  v1dev_04_attributes_links_payload v1dev_05_timestamps_offcpu v1dev_06_minimal
  v1dev_07_empty_request pyroscope_otel-ebpf-profile.pb)

# --- protobuf: every valid vector, exact totals -----------------------------------------
start_server
for v in "${VALID[@]}"; do
  ingest_ok "$v" "$FIX/$v.bin" "$DEV" "$PB"
done
assert_eq 92 "$(count_profiles)" "profiles stored from the protobuf vectors (1+1+4+1+2+1+0+82)"

# metadata of one profile: id from profile_id, service, source, totals
http GET /api/v1/profiles/0a1b2c3d4e5f60718293a4b5c6d7e8f9
assert_eq 200 "$HTTP_CODE" "metadata of v1dev_01 by its profile_id"
assert_eq checkout "$(json_get "$HTTP_BODY" service)" "v1dev_01 service"
assert_eq otlp "$(json_get "$HTTP_BODY" source)" "v1dev_01 source"
assert_contains "$HTTP_BODY" '"totals":{"cpu":200000000}' "v1dev_01 totals"
assert_eq 1767225600000000000 "$(json_get "$HTTP_BODY" start)" "v1dev_01 start"
http GET /api/v1/profiles/d41d8cd98f00b204e9800998ecf8427e
assert_eq 200 "$HTTP_CODE" "metadata of v1dev_04"
assert_contains "$HTTP_BODY" '"original_payload_format":"pprof"' "v1dev_04 original payload"
http GET "/api/v1/profiles?source=otlp&service=payments"
assert_contains "$HTTP_BODY" '"totals":{"wall":1000000000}' "service.name given by reference"

# the same profile_id again: already stored, answered as a success, nothing added
otlp_post "$DEV" "$FIX/v1dev_01_cpu_basic.bin" "$PB"
assert_eq 200 "$HTTP_CODE" "v1dev_01 sent twice"
assert_eq 0 "$(stat -c %s "$RESP")" "v1dev_01 sent twice: full success"
assert_eq 92 "$(count_profiles)" "a profile sent twice is stored once"

# invalid vectors: 200 with partial_success, nothing stored
otlp_post "$DEV" "$FIX/v1dev_90_invalid_stack_index.bin" "$PB"
assert_eq 200 "$HTTP_CODE" "v1dev_90"
cmp -s "$RESP" "$FIX/resp_partial_success.bin" ||
  fail "v1dev_90: the answer differs from resp_partial_success.bin: $(resp_hex 200)"
otlp_post "$DEV" "$FIX/v1dev_91_invalid_values_timestamps_mismatch.bin" "$PB"
assert_eq 200 "$HTTP_CODE" "v1dev_91"
# ExportProfilesServiceResponse{partial_success(1){rejected_profiles(1)=1, error_message(2)}}
assert_eq 08 "$(first_inner_tag)" "v1dev_91: partial_success{rejected_profiles}"
[[ "$(resp_hex 4)" =~ ^0a\ [0-7][0-9a-f]\ 08\ 01$ ]] ||
  fail "v1dev_91: not partial_success{rejected_profiles: 1}: $(resp_hex 8)"
assert_contains "$(tr -d '\0' <"$RESP")" "sample 0 has 2 values but 3 timestamps" "v1dev_91 message"
assert_eq 92 "$(count_profiles)" "nothing stored from the invalid vectors"

# v1experimental on its own path: stored, with no warning: its last sample lies at the
# container's end time, which v1experimental senders set to the last sample's (inclusive)
before=$(count_profiles)
otlp_post "$EXP" "$FIX/v1exp_01_ebpf_cpu.bin" "$PB"
assert_eq 200 "$HTTP_CODE" "v1exp_01 on $EXP"
assert_eq "" "$(first_inner_tag)" "v1exp_01: no partial_success ($(resp_hex 16))"
expect_stored v1exp_01 "$before" "${WANT[v1exp_01_ebpf_cpu]}"
http GET /api/v1/profiles/112233445566778899aabbccddeeff01
assert_contains "$HTTP_BODY" '"otlp_version":"v1experimental"' "v1exp_01 stored as v1experimental"

# application/protobuf is answered in kind; parameters and case are ignored. A profile
# without a profile_id gets an id derived from the request's bytes: v1dev_06, sent above,
# sent again twice (as an exporter retries) is found already stored, not stored again.
before=$(count_profiles)
otlp_post "$DEV" "$FIX/v1dev_06_minimal.bin" application/protobuf
assert_eq 200 "$HTTP_CODE" "application/protobuf"
assert_eq application/protobuf "$RESP_CT" "answer to application/protobuf"
ids1=$(grep -i '^X-Spaa-Profile-Ids:' <<<"$HTTP_HEADERS" | sed 's/^[^:]*: *//')
[[ "$ids1" =~ ^[0-9a-f]{32}$ ]] || fail "v1dev_06: no profile id in the answer ('$ids1')"
otlp_post "$DEV" "$FIX/v1dev_06_minimal.bin" "Application/X-Protobuf; charset=binary"
assert_eq 200 "$HTTP_CODE" "Content-Type with a parameter"
assert_eq 0 "$(stat -c %s "$RESP")" "v1dev_06 sent again: full success"
assert_eq "$ids1" "$(grep -i '^X-Spaa-Profile-Ids:' <<<"$HTTP_HEADERS" | sed 's/^[^:]*: *//')" \
  "v1dev_06 sent again: the same id"
expect_stored "application/protobuf" "$before" ""
grep -q "msg=\"profile already stored\" id=$ids1" "$SERVER_LOG" ||
  fail "v1dev_06 sent again is not logged as already stored"

# --- errors, protobuf flavour: google.rpc.Status -------------------------------------------
printf 'hello' >"$E2E_TMP/hello"
otlp_post "$DEV" "$E2E_TMP/hello" text/plain
assert_eq 415 "$HTTP_CODE" "text/plain"
assert_eq "08 03 12" "$(resp_hex 3)" "415 Status{code: 3, message}"
assert_contains "$(cat "$RESP")" "Content-Type 'text/plain' is not supported" "415 message"
otlp_post "$DEV" "$E2E_TMP/hello" ""
assert_eq 415 "$HTTP_CODE" "no Content-Type"
http GET "$DEV"
assert_eq 405 "$HTTP_CODE" "GET on $DEV"
assert_contains "$HTTP_HEADERS" "Allow: POST" "405 Allow"
http PUT "$EXP" --data-binary x
assert_eq 405 "$HTTP_CODE" "PUT on $EXP"

printf '\x0a\x05\x12\x03\x0a\x01' >"$E2E_TMP/truncated.bin"
otlp_post "$DEV" "$E2E_TMP/truncated.bin" "$PB"
assert_eq 400 "$HTTP_CODE" "truncated protobuf"
assert_eq "$PB" "$RESP_CT" "400 content type"
assert_eq "08 03 12" "$(resp_hex 3)" "400 Status{code: 3, message}"

# JSON sent as protobuf, protobuf sent as JSON: the answer names the Content-Type
printf '[{"resourceProfiles":[]}]' >"$E2E_TMP/array.json"
otlp_post "$DEV" "$E2E_TMP/array.json" "$PB"
assert_eq 400 "$HTTP_CODE" "JSON sent as protobuf"
assert_contains "$(tr -d '\0' <"$RESP")" "Content-Type says protobuf but the body looks like JSON" \
  "JSON sent as protobuf: the message names the Content-Type"
otlp_post "$DEV" "$E2E_TMP/truncated.bin" application/json
assert_eq 400 "$HTTP_CODE" "protobuf sent as JSON"
assert_contains "$(cat "$RESP")" "Content-Type says application/json but the body is not JSON" \
  "protobuf sent as JSON: the message names the Content-Type"
# whole and valid, but not what the Content-Type says: refused as a Collector's receiver
# refuses them (it decodes with the codec the Content-Type names), nothing stored
n0=$(curl -sS "$SERVER_URL/api/v1/profiles?limit=1000" | jq '.profiles | length')
otlp_post "$DEV" "$FIX/v1dev_01_cpu_basic.json" "$PB"
assert_eq 400 "$HTTP_CODE" "valid OTLP/JSON sent as protobuf"
assert_contains "$(tr -d '\0' <"$RESP")" "Content-Type says protobuf but the body is OTLP/JSON" \
  "valid OTLP/JSON sent as protobuf: the message"
otlp_post "$DEV" "$FIX/v1dev_01_cpu_basic.bin" "$JS"
assert_eq 400 "$HTTP_CODE" "valid OTLP protobuf sent as JSON"
assert_contains "$(cat "$RESP")" "Content-Type says application/json but the body is OTLP protobuf" \
  "valid OTLP protobuf sent as JSON: the message"
assert_eq "$n0" "$(curl -sS "$SERVER_URL/api/v1/profiles?limit=1000" | jq '.profiles | length')" \
  "nothing stored from a body its Content-Type misnames"
# an empty body, or JSON that is no object, sent as OTLP/JSON: said as such (an empty body is
# a valid protobuf request of no profiles, but no JSON one)
printf '' >"$E2E_TMP/empty"
otlp_post "$DEV" "$E2E_TMP/empty" "$JS"
assert_eq 400 "$HTTP_CODE" "an empty OTLP/JSON body"
assert_contains "$(cat "$RESP")" "the body is empty" "an empty OTLP/JSON body: the message"
printf 'null' >"$E2E_TMP/null.json"
otlp_post "$DEV" "$E2E_TMP/null.json" "$JS"
assert_eq 400 "$HTTP_CODE" "JSON null as OTLP/JSON"
assert_contains "$(cat "$RESP")" "the body is not a JSON object" "JSON null: the message"

# a v1.9 Sample (values in field 2, attribute_indices as LEN in field 3) and a v1.8 Profile
# (profile_id in field 8): refused, naming the version
printf '\x0a\x0e\x12\x0c\x12\x0a\x12\x08\x08\x01\x12\x01\x05\x1a\x01\x01' >"$E2E_TMP/v19.bin"
otlp_post "$DEV" "$E2E_TMP/v19.bin" "$PB"
assert_eq 400 "$HTTP_CODE" "v1.9 sample layout"
assert_contains "$(tr -d '\0' <"$RESP")" "v1.9" "v1.9 named"
printf '\x0a\x16\x12\x14\x12\x12\x42\x10\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10' \
  >"$E2E_TMP/v18.bin"
otlp_post "$DEV" "$E2E_TMP/v18.bin" "$PB"
assert_eq 400 "$HTTP_CODE" "v1.8 profile layout"
assert_contains "$(tr -d '\0' <"$RESP")" "v1.8" "v1.8 named"

otlp_post "$DEV" "$E2E_TMP/hello" "$PB" -H 'Content-Encoding: compress'
assert_eq 415 "$HTTP_CODE" "Content-Encoding compress"
assert_eq "08 03 12" "$(resp_hex 3)" "415 (core) as Status"
otlp_post "$DEV" "$E2E_TMP/hello" "$PB" -H 'Content-Encoding: gzip'
assert_eq 400 "$HTTP_CODE" "corrupt gzip"
assert_eq "08 03 12" "$(resp_hex 3)" "corrupt gzip as Status"

# caps: 64 MiB on this route (not the server's 50 MiB default), body and decoded body
head -c 56000000 /dev/zero >"$E2E_TMP/56mb"
otlp_post "$DEV" "$E2E_TMP/56mb" "$PB"
assert_eq 400 "$HTTP_CODE" "56 MB of zeros: under the 64 MiB cap, so decoded (and refused)"
rm -f "$E2E_TMP/56mb"
head -c 67108865 /dev/zero >"$E2E_TMP/big"
otlp_post "$DEV" "$E2E_TMP/big" "$PB"
assert_eq 413 "$HTTP_CODE" "64 MiB + 1 byte"
assert_eq "08 08 12" "$(resp_hex 3)" "413 Status{code: 8 RESOURCE_EXHAUSTED}"
assert_contains "$(cat "$RESP")" "67108865 bytes, over the 67108864-byte cap" "413 message"
gzip -c "$E2E_TMP/big" >"$E2E_TMP/big.gz"
rm -f "$E2E_TMP/big"
otlp_post "$DEV" "$E2E_TMP/big.gz" "$JS" -H 'Content-Encoding: gzip'
assert_eq 413 "$HTTP_CODE" "gzip inflating past 64 MiB"
assert_eq "$JS" "$RESP_CT" "413 answered in JSON for a JSON request"
assert_contains "$(cat "$RESP")" '"code":8' "413 JSON Status code"
rm -f "$E2E_TMP/big.gz"
stop_server || fail "the protobuf server did not exit 0"

# --- OTLP/JSON: every valid vector, exact totals; answers in JSON ------------------------
start_server
for v in "${VALID[@]}"; do
  ingest_ok "$v" "$FIX/$v.json" "$DEV" "$JS"
done
assert_eq 92 "$(count_profiles)" "profiles stored from the JSON vectors"
otlp_post "$DEV" "$FIX/v1dev_90_invalid_stack_index.json" "$JS"
assert_eq 200 "$HTTP_CODE" "v1dev_90.json"
assert_contains "$(cat "$RESP")" '"rejectedProfiles":"1"' "v1dev_90.json rejected count"
want_msg=$(grep -o '"errorMessage": *"[^"]*"' "$FIX/resp_partial_success.json" | sed 's/^"errorMessage": *//')
assert_contains "$(cat "$RESP")" "\"errorMessage\":$want_msg" "v1dev_90.json message as in the fixture"
otlp_post "$DEV" "$FIX/v1dev_91_invalid_values_timestamps_mismatch.json" "application/json; charset=utf-8"
assert_eq 200 "$HTTP_CODE" "v1dev_91.json"
assert_contains "$(cat "$RESP")" '"rejectedProfiles":"1"' "v1dev_91.json rejected count"
before=$(count_profiles)
otlp_post "$EXP" "$FIX/v1exp_01_ebpf_cpu.json" "$JS"
assert_eq 200 "$HTTP_CODE" "v1exp_01.json on $EXP"
[[ "$(cat "$RESP")" != *partialSuccess* ]] || fail "v1exp_01.json: a warning: $(cat "$RESP")"
expect_stored v1exp_01.json "$before" "${WANT[v1exp_01_ebpf_cpu]}"
printf '{"resourceProfiles": [' >"$E2E_TMP/bad.json"
otlp_post "$DEV" "$E2E_TMP/bad.json" "$JS"
assert_eq 400 "$HTTP_CODE" "truncated JSON"
assert_eq "$JS" "$RESP_CT" "400 answered in JSON"
assert_contains "$(cat "$RESP")" '{"code":3,"message":"' "400 JSON Status"
assert_eq 93 "$(count_profiles)" "nothing stored from invalid JSON"
stop_server || fail "the JSON server did not exit 0"

# --- Content-Encoding gzip, deflate, zlib, zstd; v1experimental on the v1development path ------
start_server
ingest_ok v1dev_01_cpu_basic "$FIX/v1dev_01_cpu_basic.bin.gz" "$DEV" "$PB" -H 'Content-Encoding: gzip'
ingest_ok v1dev_02_native_inlined_buildid "$FIX/v1dev_02_native_inlined_buildid.json.gz" "$DEV" "$JS" \
  -H 'Content-Encoding: gzip'
# raw deflate: the gzip member without its 10-byte header and 8-byte trailer
gzip -9 -n -c "$FIX/v1dev_05_timestamps_offcpu.json" | tail -c +11 | head -c -8 >"$E2E_TMP/05.deflate"
ingest_ok v1dev_05_timestamps_offcpu "$E2E_TMP/05.deflate" "$DEV" "$JS" -H 'Content-Encoding: deflate'
# the zlib format under the name a Collector exporter set to `compression: zlib` sends
python3 -c 'import sys, zlib; sys.stdout.buffer.write(zlib.compress(open(sys.argv[1], "rb").read()))' \
  "$FIX/v1dev_04_attributes_links_payload.bin" >"$E2E_TMP/04.zlib"
ingest_ok v1dev_04_attributes_links_payload "$E2E_TMP/04.zlib" "$DEV" "$PB" -H 'Content-Encoding: zlib'
if command -v zstd >/dev/null; then
  zstd -q -c "$FIX/v1dev_03_multi_resource_scope.bin" >"$E2E_TMP/03.zst"
  ingest_ok v1dev_03_multi_resource_scope "$E2E_TMP/03.zst" "$DEV" "$PB" -H 'Content-Encoding: zstd'
else
  echo "note [$E2E_NAME]: no zstd command, Content-Encoding: zstd not sent"
fi
before=$(count_profiles)
otlp_post "$DEV" "$FIX/v1exp_01_ebpf_cpu.bin" "$PB"
assert_eq 200 "$HTTP_CODE" "v1exp_01 on $DEV"
expect_stored "v1exp_01 on $DEV" "$before" "${WANT[v1exp_01_ebpf_cpu]}"
http GET /api/v1/profiles/112233445566778899aabbccddeeff01
assert_contains "$HTTP_BODY" '"otlp_version":"v1experimental"' "v1exp_01 on $DEV decoded as v1experimental"
stop_server || fail "the encoding server did not exit 0"
grep -q 'msg="otlp export" status=200 format=protobuf version=v1experimental profiles=1 stored=1' \
  "$SERVER_LOG" || fail "the export outcome is not logged"

# --- ingest token: 401 as Status; the token opens the door --------------------------------
start_server --ingest-token it-1 --read-token rt-1
otlp_post "$DEV" "$FIX/v1dev_06_minimal.bin" "$PB"
assert_eq 401 "$HTTP_CODE" "no token"
assert_eq "08 10 12" "$(resp_hex 3)" "401 Status{code: 16 UNAUTHENTICATED}"
assert_contains "$HTTP_HEADERS" "WWW-Authenticate: Bearer" "401 challenge"
otlp_post "$DEV" "$FIX/v1dev_06_minimal.json" "$JS" -H 'Authorization: Bearer rt-1'
assert_eq 401 "$HTTP_CODE" "read token on ingest"
assert_contains "$(cat "$RESP")" '"code":16' "401 as JSON Status"
otlp_post "$DEV" "$FIX/v1dev_06_minimal.bin" "$PB" -H 'Authorization: Bearer it-1'
assert_eq 200 "$HTTP_CODE" "ingest token"
stop_server || fail "the token server did not exit 0"
echo "PASS [$E2E_NAME]"
