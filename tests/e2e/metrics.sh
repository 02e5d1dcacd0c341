#!/usr/bin/env bash
# GET /metrics: parsed by a real Prometheus parser (Debian's python3-prometheus-client); the
# counters move with an upload (requests, bytes, profiles stored, store batches and rows),
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
scrape() {
  curl -sS -H 'Authorization: Bearer rd' "$SERVER_URL/metrics" >"$E2E_TMP/$1.txt" || fail "scrape"
  "$PY" - "$E2E_TMP/$1.txt" >"$E2E_TMP/$1.flat" <<'PYEOF' || fail "the parser refused the metrics: $(head -c 400 "$E2E_TMP/$1.flat")"
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
for fam in text_string_to_metric_families(text):
    if fam.type == "counter":
        for s in fam.samples:
            assert not s.name.endswith("_total_total"), s.name
    for s in fam.samples:
        labels = ",".join("%s=%s" % kv for kv in sorted(s.labels.items()))
        print("%s{%s} %s" % (s.name, labels, s.value))
PYEOF
}

# value FILE NAME{LABELS}
value() { awk -v k="$2" '$1 == k { print $2 }' "$E2E_TMP/$1.flat"; }

start_server --read-token rd --ingest-token in
http GET /metrics
assert_eq 401 "$HTTP_CODE" "metrics need the read token"
scrape before
http POST "/ingest?name=m.cpu&format=pprof" -H 'Authorization: Bearer in' --data-binary @"$FIX"
assert_eq 200 "$HTTP_CODE" "push: $HTTP_BODY"
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
echo "ok [$E2E_NAME]"
