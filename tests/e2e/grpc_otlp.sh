#!/usr/bin/env bash
# OTLP over gRPC against the real server, with a real gRPC client (python3-grpcio): every
# OTLP fixture stores the same profiles (totals, labels, SPAA) and gets the same
# ExportProfilesServiceResponse as over OTLP/HTTP; gzip; snappy (framed); a deadline the server enforces;
# bearer tokens; invalid protobuf; the message cap; unknown methods and encodings; 100
# concurrent streams on one connection; garbage after the preface closes that connection only;
# a client that does not acknowledge the server's SETTINGS gets GOAWAY SETTINGS_TIMEOUT; an
# answer a client's flow-control window never lets out is reset.
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:?}/fixtures/otlp"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no $FIX"
  exit 77
fi
PY=/usr/bin/python3
CLIENT="$(dirname "$0")/../grpc/grpc_client.py"
"$PY" -c 'import grpc, h2' 2>/dev/null || fail "python3-grpcio and python3-h2 are needed (scripts/install-deps.sh)"
command -v jq >/dev/null || fail "jq is needed"

client() { "$PY" "$CLIENT" "$@"; }
# field KEY JSON: a value of the client's one-line JSON
field() { jq -r ".$1" <<<"$2"; }

# The stored profiles of a server (URL) without what differs between two uploads of the same
# profile (random ids of profiles without profile_id, arrival time), sorted.
canonical() {
  curl -sS "$1/api/v1/profiles?limit=1000" |
    jq -c '[.profiles[] | del(.id, .received_at)] | sort_by(tojson)'
}

# --- every fixture: gRPC (server 1) and OTLP/HTTP (server 2) store and answer the same ----------
start_server
G1=$(grpc_port)
URL1=$SERVER_URL
start_server
URL2=$SERVER_URL
n=0
for f in "$FIX"/v1*.bin "$FIX"/pyroscope_*.pb.bin; do
  name=$(basename "$f")
  out=$(client export "$G1" "$f")
  assert_eq OK "$(field code "$out")" "$name over gRPC"
  http_resp=$(curl -sS -X POST -H 'Content-Type: application/x-protobuf' --data-binary @"$f" \
    "$URL2/v1development/profiles" | od -An -v -tx1 | tr -d ' \n')
  assert_eq "$http_resp" "$(field response "$out")" "$name: the gRPC answer is the HTTP answer"
  n=$((n + 1))
done
((n >= 10)) || fail "only $n fixtures sent"
a=$(canonical "$URL1")
b=$(canonical "$URL2")
assert_eq "$b" "$a" "profiles stored over gRPC and over HTTP"
count=$(jq length <<<"$a")
((count >= 90)) || fail "only $count profiles stored"
# a profile with its own profile_id: the same SPAA byte for byte
id=0a1b2c3d4e5f60718293a4b5c6d7e8f9
s1=$(curl -sS "$URL1/api/v1/profiles/$id/spaa" | sha256sum)
s2=$(curl -sS "$URL2/api/v1/profiles/$id/spaa" | sha256sum)
assert_eq "$s2" "$s1" "SPAA of $id over gRPC and HTTP"

# partial_success: the invalid vector is rejected alone, said in the answer
out=$(client export "$G1" "$FIX/v1dev_90_invalid_stack_index.bin")
assert_eq 1 "$(field rejected "$out")" "partial_success.rejected_profiles"
assert_contains "$(field message "$out")" "references stack" "partial_success.error_message"

# v1experimental service
out=$(client export "$G1" "$FIX/v1exp_01_ebpf_cpu.bin" --version v1experimental)
assert_eq OK "$(field code "$out")" "v1experimental Export"

# --- gzip-compressed messages ------------------------------------------------------------------
# a message sent before, now gzip-compressed: the same bytes once inflated, so its profiles
# (without profile_id: ids derived from the bytes) are found already stored
LOG1="$E2E_TMP/server1.log"
before=$(jq length <<<"$(canonical "$URL1")")
dups=$(grep -c 'msg="profile already stored"' "$LOG1" || true)
out=$(client export "$G1" "$FIX/v1dev_03_multi_resource_scope.bin" --gzip)
assert_eq OK "$(field code "$out")" "gzip message"
after=$(jq length <<<"$(canonical "$URL1")")
assert_eq 0 "$((after - before))" "profiles of a gzip message sent before: none stored twice"
assert_eq $((dups + 4)) "$(grep -c 'msg="profile already stored"' "$LOG1")" \
  "the gzip message's 4 profiles found already stored"

# --- errors -------------------------------------------------------------------------------------
printf 'this is not protobuf' >"$E2E_TMP/garbage.bin"
out=$(client export "$G1" "$E2E_TMP/garbage.bin")
assert_eq INVALID_ARGUMENT "$(field code "$out")" "bad protobuf"
assert_contains "$(field details "$out")" "malformed protobuf" "bad protobuf message"

# a deadline already passed when the message is complete: the server answers it, stores nothing
out=$(client raw "$G1" "$FIX/v1dev_06_minimal.bin" --timeout 1n)
assert_eq 4 "$(field '"grpc-status"' "$out")" "grpc-timeout 1n: DEADLINE_EXCEEDED from the server"
# the answer does not claim what it cannot know (a deadline can pass while the profiles are
# stored)
assert_contains "$out" "may have been stored" "DEADLINE_EXCEEDED says the profiles may be stored"
assert_eq "$after" "$(jq length <<<"$(canonical "$URL1")")" "nothing stored past the deadline"
# a deadline that leaves time: OK
out=$(client export "$G1" "$FIX/v1dev_06_minimal.bin" --timeout 60)
assert_eq OK "$(field code "$out")" "a 60 s deadline"
out=$(client raw "$G1" "$FIX/v1dev_06_minimal.bin" --timeout 1x)
assert_eq "400 13" "$(field '":status"' "$out") $(field '"grpc-status"' "$out")" \
  "malformed grpc-timeout: grpc-go's HTTP 400 and INTERNAL (grpc_edges.sh: the other edges)"

out=$(client raw "$G1" "$FIX/v1dev_06_minimal.bin" --path /no.Such/Method)
assert_eq 12 "$(field '"grpc-status"' "$out")" "unknown method: UNIMPLEMENTED"
out=$(client raw "$G1" "$FIX/v1dev_06_minimal.bin" --encoding lz4)
assert_eq 12 "$(field '"grpc-status"' "$out")" "unknown grpc-encoding: UNIMPLEMENTED"
assert_contains "$(field '"grpc-message"' "$out")" "gzip" "the encodings we take are named"
assert_contains "$(field '"grpc-message"' "$out")" "snappy" "snappy named among them"

# --- grpc-encoding snappy: the framed stream the Collector's gRPC exporter sends ------------------
# (made by python3-snappy; its own CRC-32C fails on Python 3.11, python3-crcmod's stands in)
"$PY" -c 'import snappy, crcmod' 2>/dev/null ||
  fail "python3-snappy and python3-crcmod are needed (scripts/install-deps.sh)"
"$PY" - "$FIX/v1dev_01_cpu_basic.bin" "$E2E_TMP/framed.sz" <<'EOF_PY'
import sys
import crcmod.predefined
import snappy
import snappy.snappy
try:
    snappy.snappy._masked_crc32c(b"")
except SystemError:
    snappy.snappy._crc32c = crcmod.predefined.mkCrcFun("crc-32c")
open(sys.argv[2], "wb").write(snappy.StreamCompressor().add_chunk(open(sys.argv[1], "rb").read()))
EOF_PY
start_server
G3=$(grpc_port)
URL3=$SERVER_URL
out=$(client raw "$G3" "$E2E_TMP/framed.sz" --flag 1 --encoding snappy)
assert_eq "200 0" "$(field '":status"' "$out") $(field '"grpc-status"' "$out")" \
  "a framed snappy message: OK"
start_server
curl -sS -o /dev/null -X POST -H 'Content-Type: application/x-protobuf' \
  --data-binary @"$FIX/v1dev_01_cpu_basic.bin" "$SERVER_URL/v1development/profiles"
a=$(canonical "$URL3")
(($(jq length <<<"$a") >= 1)) || fail "nothing stored from the snappy message"
# payload_bytes: what came on the wire (the compressed message; over HTTP, the plain body)
assert_eq "$(stat -c %s "$E2E_TMP/framed.sz")" "$(jq '.[0].payload_bytes' <<<"$a")" \
  "payload_bytes of the snappy message"
assert_eq "$(canonical "$SERVER_URL" | jq -c 'map(del(.payload_bytes))')" \
  "$(jq -c 'map(del(.payload_bytes))' <<<"$a")" "stored as the same request sent plain over HTTP"
head -c 40 "$E2E_TMP/framed.sz" >"$E2E_TMP/cut.sz"
out=$(client raw "$G3" "$E2E_TMP/cut.sz" --flag 1 --encoding snappy)
assert_eq 13 "$(field '"grpc-status"' "$out")" "a cut snappy message: INTERNAL, as grpc-go"
assert_contains "$(field '"grpc-message"' "$out")" "snappy" "the coding named"
out=$(client raw "$G1" "$FIX/v1dev_06_minimal.bin" --ctype application/json)
assert_eq 415 "$(field '":status"' "$out")" "not application/grpc: HTTP 415"

# --- 100 concurrent streams on one connection -----------------------------------------------------
out=$(client many "$G1" "$FIX/v1dev_01_cpu_basic.bin" 100)
assert_eq '{"OK": 100}' "$out" "100 concurrent calls on one channel"

# --- garbage after the preface closes that connection, not another -----------------------------
client many "$G1" "$FIX/v1dev_02_native_inlined_buildid.bin" 20 >"$E2E_TMP/other" &
other=$!
out=$(client garbage "$G1")
assert_eq true "$(field goaway "$out")" "GOAWAY after garbage"
wait "$other" || fail "the other connection's client failed"
assert_eq '{"OK": 20}' "$(cat "$E2E_TMP/other")" "calls on another connection meanwhile"
out=$(client export "$G1" "$FIX/v1dev_06_minimal.bin")
assert_eq OK "$(field code "$out")" "the server still serves after garbage"

# --- the message cap -------------------------------------------------------------------------
start_server --grpc-max-message 1k
G3=$(grpc_port)
out=$(client export "$G3" "$FIX/v1dev_06_minimal.bin")
assert_eq OK "$(field code "$out")" "a message under the cap"
out=$(client export "$G3" "$FIX/pyroscope_otel-ebpf-profile.pb.bin")
assert_eq RESOURCE_EXHAUSTED "$(field code "$out")" "a message over the cap"
assert_contains "$(field details "$out")" "1024-byte cap" "the cap is named"

# --- bearer tokens (and Basic) -------------------------------------------------------------------------
start_server --ingest-token s3cret
G4=$(grpc_port)
out=$(client export "$G4" "$FIX/v1dev_06_minimal.bin")
assert_eq UNAUTHENTICATED "$(field code "$out")" "no token"
out=$(client export "$G4" "$FIX/v1dev_06_minimal.bin" --token wrong)
assert_eq UNAUTHENTICATED "$(field code "$out")" "a wrong token"
out=$(client export "$G4" "$FIX/v1dev_06_minimal.bin" --token s3cret)
assert_eq OK "$(field code "$out")" "the ingest token"
out=$(client export "$G4" "$FIX/v1dev_06_minimal.bin" --basic collector:s3cret)
assert_eq OK "$(field code "$out")" "the ingest token as a Basic password (the basicauth extension)"
out=$(client export "$G4" "$FIX/v1dev_06_minimal.bin" --basic collector:wrong)
assert_eq UNAUTHENTICATED "$(field code "$out")" "a wrong Basic password"

# --- PING answered; a connection that is not HTTP/2 is closed ------------------------------
out=$(client raw "$G4" "$FIX/v1dev_06_minimal.bin")
assert_eq ack "$(field ping "$out")" "PING answered"
out=$(client garbage "$G4" --no-preface)
assert_eq true "$(field closed "$out")" "an HTTP/1.1 request on the gRPC port: closed"
out=$(client export "$G4" "$FIX/v1dev_06_minimal.bin" --token s3cret)
assert_eq OK "$(field code "$out")" "served after a bad preface"

# --- /metrics counts gRPC calls by method and status, like the HTTP routes --------------------
M=$(curl -sS "$SERVER_URL/metrics") || fail "scrape /metrics"
ok=$(printf '%s\n' "$M" | awk -F' ' '/^spaa_relay_requests_total\{route="\/opentelemetry\.proto\.collector\.profiles\.v1development\.ProfilesService\/Export",status="200"\}/ { print $2 }')
[[ -n "$ok" && "$ok" -ge 2 ]] || fail "gRPC Export calls not counted with status 200: $(printf '%s\n' "$M" | grep requests_total | head -5)"
bad=$(printf '%s\n' "$M" | awk '/^spaa_relay_requests_total\{route="\/opentelemetry\.proto\.collector\.profiles\.v1development\.ProfilesService\/Export",status="401"\}/ { print $2 }')
[[ -n "$bad" && "$bad" -ge 2 ]] || fail "the refused gRPC calls (no or a wrong token) are not counted as 401"
dur=$(printf '%s\n' "$M" | awk '/^spaa_relay_http_request_duration_seconds_count\{route="\/opentelemetry\.proto\.collector\.profiles\.v1development\.ProfilesService\/Export"\}/ { print $2 }')
[[ -n "$dur" && "$dur" -ge "$ok" ]] || fail "gRPC Export calls not in the duration histogram: '$dur' (answered 200: $ok)"

# --- a connection that never sends the preface is closed by the idle timeout ---------------
start_server --idle-timeout 1
out=$(client garbage "$(grpc_port)" --silent)
assert_eq true "$(field closed "$out")" "a silent connection closed after idle_timeout"
assert_eq true "$(field goaway "$out")" "with a GOAWAY first"

# --- SETTINGS timeout (min(10 s, idle_timeout)): a client that keeps the connection busy with
# PINGs but never acknowledges the server's SETTINGS gets GOAWAY SETTINGS_TIMEOUT (0x4) and is
# closed; a client that acknowledges them keeps its connection past that deadline
out=$(client settings "$(grpc_port)")
assert_eq true "$(field server_settings "$out")" "the server sent its SETTINGS"
assert_eq 4 "$(field goaway_error "$out")" "SETTINGS not acknowledged: GOAWAY SETTINGS_TIMEOUT"
assert_eq true "$(field closed "$out")" "SETTINGS not acknowledged: closed"
grep -q 'msg="grpc connection closed: SETTINGS not acknowledged" timeout_ms=1000' "$SERVER_LOG" ||
  fail "the SETTINGS timeout is not logged"
out=$(client settings "$(grpc_port)" --ack 3)
assert_eq "" "$(field goaway "$out")" "SETTINGS acknowledged: no GOAWAY after 3 s of PINGs"
assert_eq 12 "$(field '"grpc-status"' "$out")" "SETTINGS acknowledged: a call after 3 s is answered"
# a client whose stream window stays 0 (its answer can never be sent) does not keep the
# stream: RST_STREAM CANCEL (0x8) once the answer has not moved for twice idle_timeout
out=$(client stall "$(grpc_port)" "$FIX/v1dev_06_minimal.bin")
assert_eq 200 "$(field status "$out")" "stalled answer: its HEADERS were sent"
assert_eq 8 "$(field reset "$out")" "stalled answer: RST_STREAM CANCEL"

# --- shutdown: GOAWAY, and a call already open is finished and stored ------------------------
start_server
G5=$(grpc_port)
out=$(client shutdown "$G5" "$FIX/v1dev_03_multi_resource_scope.bin" "$SERVER_PID")
assert_eq yes "$(field goaway "$out")" "GOAWAY on SIGTERM"
assert_eq 0 "$(field '"grpc-status"' "$out")" "the call open at SIGTERM is answered OK"
wait "$SERVER_PID" || fail "server exit status after SIGTERM"
assert_eq 4 "$(grep -c 'msg="profile stored"' "$SERVER_LOG")" "its profiles stored before exit"

# --- the listener can be turned off --------------------------------------------------------------
start_server --grpc-listen ''
if grep -q 'listening on gRPC' "$SERVER_LOG"; then fail "grpc_listen '' still listens"; fi
stop_server || fail "server exit status"
echo "ok [$E2E_NAME]"
