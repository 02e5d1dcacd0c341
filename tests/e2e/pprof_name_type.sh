#!/usr/bin/env bash
# The Pyroscope application name's type picks the primary sample type over POST /ingest: the
# .NET fixture (six types, no default_sample_type, the last one, lock_time, all zero) sent as
# `dotnetapp.cpu{env=prod}` is stored with the event cpu, and the merged and single views
# weigh it by cpu (total > 0), event=cpu finds it; without a type in the name the last type
# stays the primary; a default_sample_type still wins over the name's type. Views list every
# metric their selection offers (`metrics`), the one summed first.
source "$(dirname "$0")/lib.bash"
F=${SPAA_SHARED:-}/fixtures/pprof
if [[ ! -f "$F/pyroscope_dotnet.labels.pprof" ]]; then
  echo "skip [$E2E_NAME]: shared fixtures not found"
  exit 77
fi
command -v jq >/dev/null || fail "jq is required"
ids_header() { printf '%s\n' "$HTTP_HEADERS" | sed -n 's/^X-Spaa-Profile-Ids: //Ip' | head -n1; }
start_server

# --- the .NET fixture named .cpu: cpu is the primary ------------------------------------------
http POST '/ingest?name=dotnetapp.cpu%7Benv%3Dprod%7D' --data-binary @"$F/pyroscope_dotnet.labels.pprof"
assert_eq 200 "$HTTP_CODE" "/ingest dotnetapp.cpu ($HTTP_BODY)"
ID=$(ids_header)
[[ "$ID" =~ ^[0-9a-f]{32}$ ]] || fail "no profile id: $HTTP_HEADERS"
http GET "/api/v1/profiles/$ID"
assert_eq cpu "$(jq -r '.events[0].name' <<<"$HTTP_BODY")" "the stored event ($HTTP_BODY)"
http GET '/api/v1/top?service=dotnetapp&limit=1'
assert_eq 200 "$HTTP_CODE" "merged top ($HTTP_BODY)"
assert_eq "cpu nanoseconds true" "$(jq -r '"\(.metric) \(.unit) \(.total > 0)"' <<<"$HTTP_BODY")" "merged top weighs cpu"
http GET '/api/v1/top?service=dotnetapp&event=cpu&limit=1'
assert_eq 200 "$HTTP_CODE" "merged top of event cpu ($HTTP_BODY)"
assert_eq "cpu true" "$(jq -r '"\(.metric) \(.total > 0)"' <<<"$HTTP_BODY")" "event=cpu finds the profile"
http GET "/api/v1/profiles/$ID/top?limit=1"
assert_eq "cpu true" "$(jq -r '"\(.metric) \(.total > 0)"' <<<"$HTTP_BODY")" "the profile's top weighs cpu"
# the other types are still metrics of it
http GET "/api/v1/profiles/$ID/top?metric=alloc_size&limit=1"
assert_eq "alloc_size bytes" "$(jq -r '"\(.metric) \(.unit)"' <<<"$HTTP_BODY")" "alloc_size still a metric"
# and every answer lists them, the one summed first, so that metric= can ask for another
assert_eq "alloc_size true" "$(jq -r '"\(.metrics[0]) \(.metrics | index("cpu") != null)"' <<<"$HTTP_BODY")" "the profile's top lists its metrics ($HTTP_BODY)"
http GET '/api/v1/flamegraph?service=dotnetapp&max_nodes=1'
assert_eq "cpu true" "$(jq -r '"\(.metrics[0]) \(.metrics | index("alloc_size") != null)"' <<<"$HTTP_BODY")" "the merged flamegraph lists the types its stacks carry ($HTTP_BODY)"

# event= naming one of its other types finds no event, and the 404 says to ask metric=
http GET '/api/v1/top?service=dotnetapp&event=alloc_size'
assert_eq 404 "$HTTP_CODE" "event= naming a metric ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "ask metric=alloc_size" "the 404 names the metric="
http GET '/api/v1/top?service=dotnetapp&event=nosuch'
assert_eq 404 "$HTTP_CODE" "event= naming nothing ($HTTP_BODY)"
[[ "$HTTP_BODY" != *"ask metric"* ]] || fail "a hint for a name that is no metric: $HTTP_BODY"

# --- no type in the name: the last type, as pprof tools choose ----------------------------------
http POST '/ingest?name=dotnetplain%7Benv%3Dprod%7D' --data-binary @"$F/pyroscope_dotnet.labels.pprof"
assert_eq 200 "$HTTP_CODE" "/ingest dotnetplain ($HTTP_BODY)"
http GET "/api/v1/profiles/$(ids_header)"
assert_eq lock_time "$(jq -r '.events[0].name' <<<"$HTTP_BODY")" "no type in the name: the last type"

# --- default_sample_type wins over the name's type ----------------------------------------------
# a small pprof: types samples/count and cpu/nanoseconds, one sample, default_sample_type as
# given (0: none)
mkpprof() {
  python3 - "$1" "$2" <<'PY'
import sys

def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)

def ln(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload

def it(num, v):
    return varint(num << 3) + varint(v)

strings = ["", "samples", "count", "cpu", "nanoseconds", "main"]
b = ln(1, it(1, 1) + it(2, 2)) + ln(1, it(1, 3) + it(2, 4))
b += ln(2, ln(1, varint(1)) + ln(2, varint(2) + varint(20000000)))
b += ln(4, it(1, 1) + ln(4, it(1, 1) + it(2, 7)))
b += ln(5, it(1, 1) + it(2, 5))
for s in strings:
    b += ln(6, s.encode())
if int(sys.argv[2]):
    b += it(14, int(sys.argv[2]))
open(sys.argv[1], "wb").write(b)
PY
}
mkpprof "$E2E_TMP/default.pb" 1 # default_sample_type "samples"
mkpprof "$E2E_TMP/nodefault.pb" 0
# name, file, the primary wanted
while read -r name file want; do
  http POST "/ingest?name=$name" --data-binary @"$E2E_TMP/$file"
  assert_eq 200 "$HTTP_CODE" "/ingest $name $file ($HTTP_BODY)"
  http GET "/api/v1/profiles/$(ids_header)"
  assert_eq "$want" "$(jq -r '.events[0].name' <<<"$HTTP_BODY")" "$name of $file: the primary"
done <<'EOF'
def1.cpu default.pb samples
def2 default.pb samples
nodef1.samples nodefault.pb samples
nodef2.cpu nodefault.pb cpu
nodef3.wall nodefault.pb cpu
nodef4 nodefault.pb cpu
EOF
# --- a selection of two kinds: the newest one's primary is summed, the others are listed --------
http POST '/ingest?name=mixed.cpu' --data-binary @"$F/pyroscope_dotnet.labels.pprof"
assert_eq 200 "$HTTP_CODE" "/ingest mixed.cpu ($HTTP_BODY)"
http POST '/ingest?name=mixed' --data-binary @"$E2E_TMP/default.pb"
assert_eq 200 "$HTTP_CODE" "/ingest mixed ($HTTP_BODY)"
http GET '/api/v1/top?service=mixed&limit=1'
assert_eq 200 "$HTTP_CODE" "merged top of two kinds ($HTTP_BODY)"
assert_eq "samples true true" "$(jq -r '"\(.metric) \(.metrics | index("samples") != null) \(.metrics | index("alloc_size") != null)"' <<<"$HTTP_BODY")" "the merged top names the metrics of both kinds ($HTTP_BODY)"
stop_server || fail "server exit status"
echo "ok [$E2E_NAME]"
