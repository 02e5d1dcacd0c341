#!/usr/bin/env bash
# The size of a PostgreSQL store: spaa_relay_store_bytes is what the store's tables take in the
# database (heap, indexes and TOAST, as pg_total_relation_size counts them), and a DELETE's
# answer gives it before and after. max_db_size is not applied there (deleting does not make
# the tables smaller: their space is reused): a relay with a 1 MiB cap on a larger store runs
# its retention passes and deletes nothing.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pg_lib.bash"

FIX="${SPAA_SHARED:-}/fixtures/pprof"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures ($FIX)"
  exit 77
fi
command -v jq >/dev/null || fail "jq is not installed (scripts/install-deps.sh installs it)"
pg_start || exit $?
trap 'pg_stop; e2e_cleanup' EXIT

tables_bytes() {
  pg_sql "SELECT sum(pg_total_relation_size(t::regclass)) FROM unnest(ARRAY['spaa_schema',
    'spaa_meta', 'dso', 'frame', 'stack', 'block_dict', 'profile', 'profile_label',
    'profile_event', 'profile_block']) t"
}
metric() {
  curl -sS "$SERVER_URL/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}

start_server --store "$SPAA_TEST_STORE" --admin-token adm --max-db-size 1m \
  --retention-interval 1s
grep -q 'max_db_size applies to a SQLite store only' "$SERVER_LOG" ||
  fail "no warning that max_db_size is not applied: $(head -5 "$SERVER_LOG")"
for f in pyroscope_heap pyroscope_dotnet.labels.pprof; do
  for svc in a b; do
    http POST "/ingest?name=$svc.cpu" --data-binary @"$FIX/$f"
    assert_eq 200 "$HTTP_CODE" "upload $f ($HTTP_BODY)"
  done
done

# the gauge is the tables' size, read between two readings of it (autovacuum may add a page)
before=$(tables_bytes)
got=$(metric spaa_relay_store_bytes)
after=$(tables_bytes)
[[ -n $got ]] || fail "no spaa_relay_store_bytes in /metrics"
got=$(printf '%.0f' "$got")
((got >= before && got <= after)) ||
  fail "spaa_relay_store_bytes $got, the tables take $before then $after bytes"
((got > 1048576)) || fail "the store takes $got bytes: not over the 1 MiB cap, nothing tested"

# retention passes go by with the store over the cap: nothing deleted
p0=$(metric spaa_relay_retention_passes_total)
for ((t = 0; t < 300; t++)); do
  p=$(metric spaa_relay_retention_passes_total)
  ((${p%.*} >= ${p0%.*} + 2)) && break
  sleep 0.1
done
((${p%.*} >= ${p0%.*} + 2)) || fail "no retention pass ran in 30 s"
assert_eq 4 "$(pg_sql 'SELECT count(*) FROM profile')" "profiles after retention passes over the cap"
assert_eq 0 "$(metric 'spaa_relay_retention_deleted_profiles_total{reason="size"}')" \
  "profiles deleted for size"

# a delete's answer: the size before and after (not smaller: the space is kept for reuse)
http DELETE "/api/v1/profiles?service=a" -H 'Authorization: Bearer adm'
assert_eq 200 "$HTTP_CODE" "delete ($HTTP_BODY)"
assert_eq 2 "$(jq .deleted <<<"$HTTP_BODY")" "profiles deleted"
b0=$(jq .bytes_before <<<"$HTTP_BODY")
b1=$(jq .bytes_after <<<"$HTTP_BODY")
((b0 >= got && b1 > 1048576)) || fail "bytes_before $b0, bytes_after $b1 (the gauge said $got): $HTTP_BODY"
grep 'msg="profiles deleted"' "$SERVER_LOG" | grep -q "bytes_before=$b0 bytes_after=$b1" ||
  fail "the delete's log line: $(grep 'msg="profiles deleted"' "$SERVER_LOG")"
stop_server || fail "server exit"
echo "ok [$E2E_NAME]"
