#!/usr/bin/env bash
# The same pprof, the same Pyroscope metadata, the same SPAA: every fixture pushed to POST
# /ingest with name and labels, sampleRate, from/until and a sample_type_config (multipart),
# and raw with the query only, and to POST /v1/pprof with a service; the stored SPAA is
# byte-identical to `spaa-relay convert --from pprof` given the same values as flags. The
# options are checked to have done something: frequency from sampleRate on a timer event
# with no period (Java), the time range from from/until on a pprof without one (.NET), the
# sample_type_config on the cpu event.
# The pprof export of each stored fixture (GET /api/v1/profiles/ID/pprof), pushed again, gives
# the same stack ids; the Java fixture's lines without a file (AsyncProfiler.execute :135)
# stay lines through it. An OTLP profile exported as pprof carries its stack context
# (thread name and id, trace and span ids) as labels that `go tool pprof -tagfocus` uses.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pprof_lib.bash"

FIX="${SPAA_SHARED:-}/fixtures/pprof"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no fixtures at $FIX"
  exit 77
fi

FROM=1700000000        # seconds
UNTIL=1700000010000    # milliseconds
RATE=100
STC="$E2E_TMP/stc.json"
printf '%s' '{"cpu":{"units":"nanoseconds","display-name":"cpu_time","aggregation":"sum","cumulative":false,"sampled":true},"samples":{"display-name":"cpu","units":"count"}}' >"$STC"

# stored ID OUT: the stored SPAA of profile ID into OUT
stored() {
  local code
  code=$(curl -sS -o "$2" -w '%{http_code}' "$SERVER_URL/api/v1/profiles/$1/spaa") || true
  assert_eq 200 "$code" "GET /api/v1/profiles/$1/spaa"
}

# stack_ids FILE: the sorted stack ids of a SPAA file
stack_ids() {
  jq -r 'select(.type == "stack") | .id' "$1" | sort
}

# same WHAT A B: files A and B are byte for byte the same
same() {
  cmp -s "$2" "$3" || fail "$1: the stored SPAA differs from convert's ($(cmp "$2" "$3" 2>&1 | head -n1))"
}

start_server
n=0
for f in "$FIX"/*; do
  base=$(basename "$f")
  [[ "$base" == SOURCES.md || "$base" == pyroscope_invalid_utf8.pb.gz ]] && continue
  n=$((n + 1))

  # /ingest multipart: name with labels, from/until, sampleRate, sample_type_config
  name="par$n.cpu{env=prod,fixture=$n}"
  http POST "/ingest?name=par$n.cpu%7Benv%3Dprod%2Cfixture%3D$n%7D&from=$FROM&until=$UNTIL&sampleRate=$RATE" \
    -F "profile=@$f;type=application/octet-stream" -F "sample_type_config=<$STC"
  assert_eq 200 "$HTTP_CODE" "/ingest multipart, $base: $HTTP_BODY"
  stored "$(only_id "par$n")" "$E2E_TMP/http.spaa"
  "$SPAA_BIN" convert --from pprof --name "$name" --time-from $FROM --time-until $UNTIL \
    --sample-rate $RATE --sample-type-config "$STC" "$f" >"$E2E_TMP/cli.spaa" ||
    fail "convert --from pprof with the push's flags, $base"
  same "/ingest multipart, $base" "$E2E_TMP/http.spaa" "$E2E_TMP/cli.spaa"
  case "$base" in
  pyroscope_profile_java)
    assert_eq "$RATE" "$(head -n1 "$E2E_TMP/cli.spaa" | jq -r '.events[] | select(.name == "cpu") | .sampling.frequency_hz')" \
      "sampleRate as the frequency of the Java cpu event"
    ;;
  pyroscope_dotnet.labels.pprof)
    assert_eq '"time_range":{"start":1700000000000000000,"end":1700000010000000000,"unit":"nanoseconds"}' \
      "$(head -n1 "$E2E_TMP/cli.spaa" | grep -o '"time_range":{[^}]*}')" \
      "from/until as the .NET profile's time range"
    assert_eq "cpu_time,nanoseconds,sum,false,true" \
      "$(head -n1 "$E2E_TMP/cli.spaa" | jq -r '.events[] | select(.name == "cpu") |
         [.x_pyroscope_display_name, .x_pyroscope_units, .x_pyroscope_aggregation,
          .x_pyroscope_cumulative, .x_pyroscope_sampled] | map(tostring) | join(",")')" \
      "sample_type_config of the .NET cpu type, on the one event: cpu, the name's type (par$n.cpu), not lock_time, the last type"
    ;;
  esac

  # /ingest raw body, the query only
  http POST "/ingest?name=raw$n&from=$FROM&until=$UNTIL&sampleRate=$RATE" \
    -H 'Content-Type: application/octet-stream' --data-binary @"$f"
  assert_eq 200 "$HTTP_CODE" "/ingest raw, $base: $HTTP_BODY"
  stored "$(only_id "raw$n")" "$E2E_TMP/http.spaa"
  "$SPAA_BIN" convert --from pprof --name "raw$n" --time-from $FROM --time-until $UNTIL \
    --sample-rate $RATE "$f" >"$E2E_TMP/cli.spaa" || fail "convert --from pprof, raw flags, $base"
  same "/ingest raw, $base" "$E2E_TMP/http.spaa" "$E2E_TMP/cli.spaa"

  # /v1/pprof: no Pyroscope metadata, the plain conversion
  http POST "/v1/pprof?service=col$n" --data-binary @"$f"
  assert_eq 204 "$HTTP_CODE" "/v1/pprof, $base: $HTTP_BODY"
  stored "$(only_id "col$n")" "$E2E_TMP/http.spaa"
  "$SPAA_BIN" convert --from pprof --service "col$n" "$f" >"$E2E_TMP/cli.spaa" ||
    fail "convert --from pprof --service, $base"
  same "/v1/pprof, $base" "$E2E_TMP/http.spaa" "$E2E_TMP/cli.spaa"

  # its pprof export pushed again: the same stack ids
  id=$(only_id "col$n")
  code=$(curl -sS -o "$E2E_TMP/export.pb.gz" -w '%{http_code}' "$SERVER_URL/api/v1/profiles/$id/pprof") || true
  assert_eq 200 "$code" "GET /api/v1/profiles/$id/pprof ($base)"
  http POST "/v1/pprof?service=rt$n" --data-binary @"$E2E_TMP/export.pb.gz"
  assert_eq 204 "$HTTP_CODE" "/v1/pprof, $base exported and pushed again: $HTTP_BODY"
  stored "$(only_id "rt$n")" "$E2E_TMP/again.spaa"
  assert_eq "$(stack_ids "$E2E_TMP/http.spaa")" "$(stack_ids "$E2E_TMP/again.spaa")" \
    "stack ids of $base after its pprof export was pushed again"
  if [[ "$base" == pyroscope_profile_java ]]; then
    assert_eq ":135" "$(jq -r 'select(.type == "frame" and .func == "jpprof/one/profiler/AsyncProfiler.execute") | .srcline' "$E2E_TMP/again.spaa")" \
      "the Java line without a file, stored after the round trip"
    if command -v go >/dev/null; then
      assert_contains "$(go tool pprof -raw "$E2E_TMP/export.pb.gz" 2>/dev/null)" \
        "jpprof/one/profiler/AsyncProfiler.execute :135" "go tool pprof -raw of the Java export"
    fi
  fi
done
((n == 14)) || fail "expected 14 valid fixtures, found $n"

# an OTLP profile's stack context as pprof labels: thread name and id, trace and span ids
OTLP="${SPAA_SHARED:-}/fixtures/otlp/v1dev_04_attributes_links_payload.bin"
http POST /v1development/profiles -H 'Content-Type: application/x-protobuf' --data-binary @"$OTLP"
assert_eq 200 "$HTTP_CODE" "OTLP profile with thread and trace attributes"
id=$(only_id orders)
code=$(curl -sS -o "$E2E_TMP/otlp.pb.gz" -w '%{http_code}' "$SERVER_URL/api/v1/profiles/$id/pprof") || true
assert_eq 200 "$code" "GET /api/v1/profiles/$id/pprof (OTLP)"
http POST "/v1/pprof?service=otlprt" --data-binary @"$E2E_TMP/otlp.pb.gz"
assert_eq 204 "$HTTP_CODE" "the OTLP profile's pprof pushed again: $HTTP_BODY"
stored "$(only_id otlprt)" "$E2E_TMP/otlprt.spaa"
assert_eq "http-nio-8080-exec-3,pool-2-thread-1" \
  "$(jq -r 'select(.type == "stack") | .context["x_pprof_label_x_otel_attr_thread.name"]' "$E2E_TMP/otlprt.spaa" | sort -u | paste -sd,)" \
  "thread names as labels of the OTLP profile's pprof"
assert_eq "4bf92f3577b34da6a3ce929d0e0e4736,5b8efff798038103d269b633813fc60c" \
  "$(jq -r 'select(.type == "stack") | .context.x_pprof_label_x_otel_trace_id // empty' "$E2E_TMP/otlprt.spaa" | sort -u | paste -sd,)" \
  "trace ids as labels of the OTLP profile's pprof"
assert_eq "57,88" \
  "$(jq -r 'select(.type == "stack") | .context["x_pprof_label_x_otel_attr_thread.id"].value' "$E2E_TMP/otlprt.spaa" | sort -u | paste -sd,)" \
  "thread ids as numeric labels of the OTLP profile's pprof"
if command -v go >/dev/null; then
  tags=$(go tool pprof -tags "$E2E_TMP/otlp.pb.gz" 2>/dev/null)
  assert_contains "$tags" "x_otel_attr_thread.name" "go tool pprof -tags of the OTLP profile's pprof"
  assert_contains "$tags" "5b8efff798038103d269b633813fc60c" "go tool pprof -tags: a trace id"
  assert_eq "wall=110000000" \
    "$(go tool pprof -raw -tagfocus=x_otel_attr_thread.name=pool-2-thread-1 "$E2E_TMP/otlp.pb.gz" 2>/dev/null |
      awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
           s && /^ *[0-9]+:/ { sub(/:.*/, ""); t += $1 } END { printf "wall=%.0f\n", t }')" \
    "go tool pprof -tagfocus on a thread name"
fi

# the flags are refused as the query is, and only for pprof
S="$FIX/google-pprof_sample.cpu"
for bad in "--name app{env}" "--sample-rate 99999999999" "--time-from yesterday" \
  "--time-from 1700000010 --time-until 1700000000"; do
  rc=0
  # shellcheck disable=SC2086 # the flags are meant to split
  "$SPAA_BIN" convert --from pprof $bad "$S" >/dev/null 2>"$E2E_TMP/err" || rc=$?
  assert_eq 2 "$rc" "convert --from pprof $bad"
  [[ -s "$E2E_TMP/err" ]] || fail "convert --from pprof $bad: no message"
done
printf '{nope' >"$E2E_TMP/bad.json"
rc=0
"$SPAA_BIN" convert --from pprof --sample-type-config "$E2E_TMP/bad.json" "$S" >/dev/null 2>"$E2E_TMP/err" || rc=$?
assert_eq 2 "$rc" "convert with a bad --sample-type-config"
assert_contains "$(cat "$E2E_TMP/err")" "sample_type_config is not valid JSON" "bad --sample-type-config message"
rc=0
"$SPAA_BIN" convert --from spaa --name app "$S" >/dev/null 2>"$E2E_TMP/err" || rc=$?
assert_eq 2 "$rc" "--name with --from spaa"
assert_contains "$(cat "$E2E_TMP/err")" "apply to --from pprof and folded only" "--name with --from spaa message"
stop_server || fail "the server did not exit cleanly"
echo "ok [$E2E_NAME]: $n fixtures, 3 paths each, stored SPAA = convert's, pprof exports keep stack ids; OTLP context as pprof labels"
