#!/usr/bin/env bash
# GET /metrics: parsed by a real Prometheus parser (Debian's python3-prometheus-client); the
# counters move with an upload (requests, bytes received and decoded, profiles stored and
# rejected, store batches and rows), the request duration histogram counts every route
# (buckets cumulative, +Inf equal to _count), the gauges move (connections open while a
# client holds one, the memory budget held by a body in flight) and refusals are counted;
# names follow the conventions (_total counters, _bytes, _seconds), read tokens apply.
source "$(dirname "$0")/lib.bash"

PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3
"$PY" -c 'import prometheus_client.parser' 2>/dev/null ||
  fail "python3-prometheus-client is not installed (scripts/install-deps.sh installs it)"
FIX="${SPAA_SHARED:-}/fixtures/pprof/google-pprof_sample.cpu"
if [[ ! -f "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures ($FIX)"
  exit 77
fi

# scrape NAME: the metrics as "name{labels} value" lines, after the parser read them all
# (and checked every histogram: buckets cumulative, +Inf equal to _count)
scrape() {
  local code t
  for ((t = 0; t < 100; t++)); do # a refused connection may still count for a moment
    code=$(curl -sS -o "$E2E_TMP/$1.txt" -w '%{http_code}' -H 'Authorization: Bearer rd' \
      "$SERVER_URL/metrics") || fail "scrape"
    [[ $code == 200 ]] && break
    sleep 0.05
  done
  assert_eq 200 "$code" "scrape $1: $(head -c 300 "$E2E_TMP/$1.txt")"
  "$PY" - "$E2E_TMP/$1.txt" >"$E2E_TMP/$1.flat" <<'PYEOF' || fail "the parser refused the metrics: $(tail -c 600 "$E2E_TMP/$1.flat")"
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
for fam in text_string_to_metric_families(text):
    if fam.type == "counter":
        for s in fam.samples:
            assert not s.name.endswith("_total_total"), s.name
    if fam.type == "histogram":
        assert fam.name.endswith("_seconds"), fam.name
        series = {}
        for s in fam.samples:
            key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            series.setdefault(key, {"buckets": []})
            if s.name.endswith("_bucket"):
                series[key]["buckets"].append((float(s.labels["le"]), s.value))
            else:
                series[key][s.name.rsplit("_", 1)[1]] = s.value
        for key, h in series.items():
            les = [le for le, _ in h["buckets"]]
            counts = [c for _, c in h["buckets"]]
            assert les == sorted(les) and les[-1] == float("inf"), (key, les)
            assert counts == sorted(counts), (key, counts)
            assert counts[-1] == h["count"], (key, counts, h)
            assert h["sum"] >= 0, (key, h)
    for s in fam.samples:
        labels = ",".join("%s=%s" % kv for kv in sorted(s.labels.items()))
        print("%s{%s} %s" % (s.name, labels, s.value))
PYEOF
}

# wait_value NAME{LABELS} WANT: scrape until the value is WANT
wait_value() {
  local t v
  for ((t = 0; t < 100; t++)); do
    scrape wait
    v=$(value wait "$1")
    [[ $v == "$2" ]] && return 0
    sleep 0.05
  done
  fail "$1 is ${v:-absent}, want $2"
}

# value FILE NAME{LABELS}
value() { awk -v k="$2" '$1 == k { print $2 }' "$E2E_TMP/$1.flat"; }

start_server --read-token rd --ingest-token in --admin-token adm --memory-budget 64m
http GET /metrics
assert_eq 401 "$HTTP_CODE" "metrics need the read token"
scrape before
http POST "/ingest?name=m.cpu&format=pprof" -H 'Authorization: Bearer in' --data-binary @"$FIX"
assert_eq 200 "$HTTP_CODE" "push: $HTTP_BODY"
http GET /no/such/route
assert_eq 404 "$HTTP_CODE" "unknown route"
scrape after

b=$(value before 'spaa_relay_profiles_stored_total{source=pprof}')
a=$(value after 'spaa_relay_profiles_stored_total{source=pprof}')
assert_eq "1.0" "$a" "profiles stored after one upload (before: ${b:-absent})"
a=$(value after 'spaa_relay_requests_total{route=/ingest,status=200}')
assert_eq "1.0" "$a" "requests by route and status"
a=$(value after 'spaa_relay_request_bytes_total{route=/ingest}')
assert_eq "$(stat -c %s "$FIX").0" "$a" "request bytes"
[[ $(value before 'spaa_relay_store_batches_total{}') == 0.0 ]] || fail "batches before"
[[ $(value after 'spaa_relay_store_batches_total{}') != 0.0 ]] || fail "batches did not move"
[[ $(value after 'spaa_relay_store_rows{kind=profile}') == 1.0 ]] || fail "profile rows"
[[ $(value after 'spaa_relay_store_rows{kind=stack}') != 0.0 ]] || fail "stack rows"
bytes=$(value after 'spaa_relay_store_bytes{}')
[[ ${bytes%.*} -gt 0 ]] || fail "store bytes: $bytes"
grep -q '^# TYPE spaa_relay_retention_deleted_profiles_total counter' "$E2E_TMP/after.txt" ||
  fail "retention counters missing"

# every route's requests, by status, and the duration histogram
assert_eq "1.0" "$(value after 'spaa_relay_requests_total{route=/metrics,status=401}')" \
  "the refused scrape"
[[ -n $(value after 'spaa_relay_requests_total{route=/metrics,status=200}') ]] ||
  fail "scrapes not counted"
assert_eq "1.0" "$(value after 'spaa_relay_requests_total{route=-,status=404}')" "no route: -"
b=$(value before 'spaa_relay_http_request_duration_seconds_count{route=/ingest}')
assert_eq "" "$b" "no /ingest duration before the upload"
assert_eq "1.0" "$(value after 'spaa_relay_http_request_duration_seconds_count{route=/ingest}')" \
  "an /ingest duration observed"
assert_eq "1.0" \
  "$(value after 'spaa_relay_http_request_duration_seconds_bucket{le=+Inf,route=/ingest}')" \
  "the +Inf bucket"
[[ $(value after 'spaa_relay_http_request_duration_seconds_sum{route=/ingest}') != 0.0 ]] ||
  fail "the /ingest duration sum did not move"
assert_eq "1.0" "$(value after 'spaa_relay_http_request_duration_seconds_count{route=-}')" \
  "the 404's duration"
m1=$(value after 'spaa_relay_http_request_duration_seconds_count{route=/metrics}')
scrape again
m2=$(value again 'spaa_relay_http_request_duration_seconds_count{route=/metrics}')
awk -v a="$m1" -v b="$m2" 'BEGIN { exit !(b == a + 1) }' ||
  fail "/metrics durations: $m1 then $m2, want one more"

# bytes received and decoded: a gzip-encoded upload
gzip -c "$FIX" >"$E2E_TMP/fix.gz"
http POST "/ingest?name=m.cpu&format=pprof" -H 'Authorization: Bearer in' \
  -H 'Content-Encoding: gzip' --data-binary @"$E2E_TMP/fix.gz"
assert_eq 200 "$HTTP_CODE" "gzip push: $HTTP_BODY"
# rejections by source and reason: an upload that is no pprof
http POST "/ingest?name=m.cpu&format=pprof" -H 'Authorization: Bearer in' --data-binary 'no pprof'
assert_eq 400 "$HTTP_CODE" "bad push: $HTTP_BODY"
http POST "/ingest?name=m.cpu&format=pprof" --data-binary @"$FIX"
assert_eq 401 "$HTTP_CODE" "push without a token"
scrape bytes
size=$(stat -c %s "$FIX")
gz=$(stat -c %s "$E2E_TMP/fix.gz")
assert_eq "$((size + gz + 8)).0" "$(value bytes 'spaa_relay_request_bytes_total{route=/ingest}')" \
  "bytes as received"
assert_eq "$((size + size + 8)).0" \
  "$(value bytes 'spaa_relay_request_decoded_bytes_total{route=/ingest}')" "bytes decoded"
rej=$(grep '^spaa_relay_profiles_rejected_total{' "$E2E_TMP/bytes.flat" | grep 'source=pprof' |
  awk '{ n += $2 } END { print n + 0 }')
assert_eq 2 "$rej" "pprof profiles rejected: $(grep rejected "$E2E_TMP/bytes.flat")"
assert_eq "1.0" "$(value bytes 'spaa_relay_profiles_rejected_total{reason=unauthorized,source=pprof}')" \
  "the refusal's reason"

# gauges: connections open while a client holds one; the budget a body in flight holds
assert_eq "67108864.0" "$(value bytes 'spaa_relay_memory_budget_limit_bytes{}')" "budget limit"
wait_value 'spaa_relay_memory_budget_used_bytes{}' 0.0
open0=$(value wait 'spaa_relay_connections_open{}') # the scrape's own connection
((${open0%.*} >= 1)) || fail "connections open during a scrape: $open0"
exec 7<>"/dev/tcp/127.0.0.1/$SERVER_PORT"
printf 'POST /ingest?name=m.cpu&format=pprof HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer in\r\nContent-Length: 1048576\r\n\r\nxxxx' >&7
wait_value 'spaa_relay_connections_open{}' "$((${open0%.*} + 1)).0"
wait_value 'spaa_relay_memory_budget_used_bytes{}' 1048576.0
exec 7>&-
wait_value 'spaa_relay_connections_open{}' "$open0"
wait_value 'spaa_relay_memory_budget_used_bytes{}' 0.0

# a delete's steps on the store's writer
assert_eq "0.0" "$(value bytes 'spaa_relay_store_maintenance_steps_total{}')" "steps before a delete"
http DELETE "/api/v1/profiles?service=m" -H 'Authorization: Bearer adm'
assert_eq 200 "$HTTP_CODE" "delete: $HTTP_BODY"
scrape deleted
[[ $(value deleted 'spaa_relay_store_maintenance_steps_total{}') != 0.0 ]] ||
  fail "the delete's steps were not counted"
[[ $(value deleted 'spaa_relay_store_maintenance_step_max_seconds{}') != 0.0 ]] ||
  fail "the longest step is 0"
assert_eq "0.0" "$(value deleted 'spaa_relay_store_rows{kind=stack}')" "stacks left"
stop_server || fail "server exit"

# refusals over max_connections, counted by reason (every reason listed at 0 from the start)
start_server --read-token rd --max-connections 1
scrape refused0
for r in max_connections hard_limit; do
  assert_eq "0.0" "$(value refused0 "spaa_relay_connections_refused_total{reason=$r}")" "$r at start"
done
exec 7<>"/dev/tcp/127.0.0.1/$SERVER_PORT"
for ((t = 0; t < 100; t++)); do # (until the server has taken the held connection)
  http GET /api/v1/profiles -H 'Authorization: Bearer rd'
  [[ $HTTP_CODE == 503 ]] && break
  sleep 0.05
done
assert_eq 503 "$HTTP_CODE" "over max_connections: $HTTP_BODY"
exec 7>&-
wait_value 'spaa_relay_connections_refused_total{reason=max_connections}' 1.0
echo "ok [$E2E_NAME]"
