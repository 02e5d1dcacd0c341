#!/usr/bin/env bash
# The pprof exports (GET /api/v1/profiles/ID/pprof and the merged GET /api/v1/pprof) read by
# `go tool pprof`: a Sentry frame without a function name keeps its file and line, each such
# frame its own location (a Node profile_chunk made from the shared V2 envelope, two
# anonymous frames at app.js:20 and :30 under main); the period keeps the type and unit the
# source gave (OTLP's period_type: cpu and wall nanoseconds, 10 ms; pprof's own, as the
# original file says). Needs Debian's golang-go and ../shared/fixtures (exit 77 without).
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pprof_lib.bash"

if ! command -v go >/dev/null; then
  echo "skip [$E2E_NAME]: Go is not installed (apt-get install golang-go; scripts/install-deps.sh does)"
  exit 77
fi
FIX="${SPAA_SHARED:-}/fixtures"
if [[ ! -d "$FIX/sentry" || ! -d "$FIX/otlp" || ! -d "$FIX/pprof" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures at ${SPAA_SHARED:-(SPAA_SHARED unset)}"
  exit 77
fi
export GOCACHE="${SPAA_BUILD:-$E2E_TMP}/go-cache" GOTOOLCHAIN=local GOPROXY=off GOTELEMETRY=off

# traces FILE: `go tool pprof -traces -lines` as one "WEIGHT leaf;caller;..." line per
# trace, sorted
traces() {
  go tool pprof -traces -lines "$1" 2>/dev/null | awk '
    /^-+\+-+$/ { if (t != "") print t; t = ""; next }
    t == "" && /^ +[0-9]+ +/ { w = $1; sub(/^ +[0-9]+ +/, ""); t = w " " $0; next }
    t != "" { sub(/^ +/, ""); t = t ";" $0 }
    END { if (t != "") print t }' | sort
}

# period FILE: the "PeriodType:" and "Period:" lines of `go tool pprof -raw`
period() {
  go tool pprof -raw "$1" 2>/dev/null | grep -E '^(PeriodType|Period):' || true
}

start_server

# a Node profile_chunk: the fixture's V2 chunk with three frames, two of them anonymous
jq -c '.platform = "node" | .chunk_id = "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0" | del(.debug_meta) |
  .profile.frames = [{"function": "", "filename": "/app/app.js", "lineno": 20},
                     {"function": "", "filename": "/app/app.js", "lineno": 30},
                     {"function": "main", "filename": "/app/app.js", "lineno": 5}] |
  .profile.stacks = [[0, 2], [1, 2]] |
  .profile.samples[0] as $s |
  .profile.samples = [range(5) as $i | $s | .stack_id = (if $i < 2 then 0 else 1 end) |
                      .timestamp = ($s.timestamp + 0.01 * $i)]' \
  <(sed -n 3p "$FIX/sentry/constructed_envelope_profile_chunk_v2.envelope") >"$E2E_TMP/chunk.json" ||
  fail "building the Node chunk from the fixture"
{
  sed -n 1p "$FIX/sentry/constructed_envelope_profile_chunk_v2.envelope"
  echo '{"type":"profile_chunk","platform":"node"}'
  cat "$E2E_TMP/chunk.json"
} >"$E2E_TMP/node.envelope"
http POST "/api/77/envelope/?sentry_key=k" --data-binary @"$E2E_TMP/node.envelope"
assert_eq 200 "$HTTP_CODE" "the Node chunk with anonymous frames: $HTTP_BODY"
id=a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0
http GET "/api/v1/profiles/$id/collapsed?by=frame"
assert_eq 200 "$HTTP_CODE" "collapsed by frame of the Node chunk"
assert_eq $'main (/app/app.js:5);[unknown] (/app/app.js:30) 3\nmain (/app/app.js:5);[unknown] (/app/app.js:20) 2' \
  "$HTTP_BODY" "the stored Node chunk keeps both anonymous frames"
want=$'2 [unknown] /app/app.js:20;main /app/app.js:5\n3 [unknown] /app/app.js:30;main /app/app.js:5'
curl -sS -o "$E2E_TMP/node.pb.gz" "$SERVER_URL/api/v1/profiles/$id/pprof" || fail "GET the Node chunk's pprof"
assert_eq "$want" "$(traces "$E2E_TMP/node.pb.gz")" "go tool pprof -traces -lines of the Node chunk's export"
curl -sS -o "$E2E_TMP/merged.pb.gz" "$SERVER_URL/api/v1/pprof?service=77" || fail "GET the merged pprof"
assert_eq "$want" "$(traces "$E2E_TMP/merged.pb.gz")" "go tool pprof -traces -lines of the merged export"

# OTLP: the period_type as the profile gave it (the fixtures' comments say 10 ms)
for f in v1dev_01_cpu_basic:checkout:cpu v1dev_04_attributes_links_payload:orders:wall; do
  IFS=: read -r file service type <<<"$f"
  http POST /v1development/profiles -H 'Content-Type: application/x-protobuf' \
    --data-binary @"$FIX/otlp/$file.bin"
  assert_eq 200 "$HTTP_CODE" "$file to /v1development/profiles"
  curl -sS -o "$E2E_TMP/$file.pb.gz" "$SERVER_URL/api/v1/profiles/$(only_id "$service")/pprof" ||
    fail "GET the pprof of $file"
  assert_eq $'PeriodType: '"$type"$' nanoseconds\nPeriod: 10000000' "$(period "$E2E_TMP/$file.pb.gz")" \
    "go tool pprof -raw of the export of $file"
  # the merged pprof of the service: the period of its newest profile (here its only one)
  curl -sS -o "$E2E_TMP/merged-$service.pb.gz" "$SERVER_URL/api/v1/pprof?service=$service" ||
    fail "GET the merged pprof of $service"
  assert_eq $'PeriodType: '"$type"$' nanoseconds\nPeriod: 10000000' \
    "$(period "$E2E_TMP/merged-$service.pb.gz")" "go tool pprof -raw of the merged export of $service"
done

# pprof: its own period type and unit come back (wall microseconds; py-spy's empty type)
for file in pyroscope_nodejs-wall.pb.gz pyroscope_pyspy-1.pb.gz pyroscope_heap; do
  service=p${file%%.*}
  service=${service//_/-}
  http POST "/v1/pprof?service=$service" --data-binary @"$FIX/pprof/$file"
  assert_eq 204 "$HTTP_CODE" "$file to /v1/pprof"
  curl -sS -o "$E2E_TMP/export.pb.gz" "$SERVER_URL/api/v1/profiles/$(only_id "$service")/pprof" ||
    fail "GET the pprof of $file"
  want=$(period "$FIX/pprof/$file")
  assert_contains "$want" "Period:" "go tool pprof -raw of $file"
  assert_eq "$want" "$(period "$E2E_TMP/export.pb.gz")" "the period of $file, original vs export"
  curl -sS -o "$E2E_TMP/merged.pb.gz" "$SERVER_URL/api/v1/pprof?service=$service" ||
    fail "GET the merged pprof of $service"
  assert_eq "$want" "$(period "$E2E_TMP/merged.pb.gz")" "the period of $file, original vs merged export"
done

# two profiles of one service with different periods: the merged pprof takes the newest one's
# (pyroscope_profile_java, then large.cpu's 10 ms cpu)
for file in pyroscope_profile_java google-pprof_large.cpu; do
  http POST "/v1/pprof?service=mixed" --data-binary @"$FIX/pprof/$file"
  assert_eq 204 "$HTTP_CODE" "$file to /v1/pprof?service=mixed"
  sleep 0.01 # received apart: the newest is the second
done
curl -sS -o "$E2E_TMP/merged.pb.gz" "$SERVER_URL/api/v1/pprof?service=mixed" ||
  fail "GET the merged pprof of mixed"
assert_eq "$(period "$FIX/pprof/google-pprof_large.cpu")" "$(period "$E2E_TMP/merged.pb.gz")" \
  "the merged period of two profiles: the newest one's"
# and its time and duration: what the two span, from large.cpu's start (2022-10-18) to the
# Java profile's end (2022-11-21), a duration neither has
timeline() { go tool pprof -raw "$1" 2>/dev/null | grep -E "^$2:" || true; }
assert_eq "$(timeline "$FIX/pprof/google-pprof_large.cpu" Time)" "$(timeline "$E2E_TMP/merged.pb.gz" Time)" \
  "the merged pprof's time: the earliest start"
mdur=$(timeline "$E2E_TMP/merged.pb.gz" Duration)
assert_eq "Duration: 810h" "$mdur" "the merged pprof's duration: 33.8 days, to the Java profile's end (-raw writes its first 4 characters)"

stop_server || fail "the server did not exit cleanly"
echo "ok [$E2E_NAME]: anonymous frames kept apart, periods as their sources gave them, merged: the newest one's"
