#!/usr/bin/env bash
# Three relays on one PostgreSQL (a throwaway cluster, tests/support/pg.sh): clients post
# SPAA, pprof and OTLP uploads to all three for a bounded time; every acknowledged SPAA
# upload reads back byte-identical from every relay, every relay lists the same profiles, and
# the dictionaries hold each content id once. Then PostgreSQL stops in the middle of ingest:
# uploads get 503 with Retry-After and /readyz says 503 while it is down; once it is back
# every relay recovers by itself and nothing acknowledged is lost. Last, one relay is killed
# with SIGKILL in the middle of ingest: the others go on, nothing acknowledged is lost.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pg_lib.bash"

[[ -d "${SPAA_SHARED:-}/fixtures" ]] || { echo "skipped: no shared fixtures"; exit 77; }
pg_start || exit $?
trap 'pg_stop; e2e_cleanup' EXIT

FX=$SPAA_SHARED/fixtures
URLS=()
for i in 1 2 3; do
  start_server --store "$SPAA_TEST_STORE" --read-token rt --ingest-token it
  URLS+=("$SERVER_URL")
done

shop_spaa "$E2E_TMP/p.spaa"

# One client: uploads round-robin over the relays until $2 (epoch seconds); each answer's
# code and, for SPAA, id go to $1.
client() {
  local out=$1 until=$2 k=$3 n=0 url code
  while (($(date +%s) < until)); do
    url=${URLS[$(((n + k) % 3))]}
    case $(((n + k) % 3)) in
      0) code=$(curl -sS -o "$out.body" -w '%{http_code}' -H 'Authorization: Bearer it' \
           --data-binary @"$E2E_TMP/p.spaa" "$url/api/v1/spaa?service=svc$k" || true)
         echo "spaa $code $(jq -r '.id // empty' "$out.body" 2>/dev/null)" >>"$out" ;;
      1) code=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer it' \
           --data-binary @"$FX/pprof/pyroscope_go.cpu.labels.pprof" \
           "$url/v1/pprof?service=go$k" || true)
         echo "pprof $code" >>"$out" ;;
      2) code=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer it' \
           -H 'Content-Type: application/x-protobuf' \
           --data-binary @"$FX/otlp/v1dev_01_cpu_basic.bin" "$url/v1development/profiles" ||
           true)
         echo "otlp $code" >>"$out" ;;
    esac
    n=$((n + 1))
  done
}

# The ids every relay lists, sorted, into $2 (paging with the cursor).
list_all() {
  local url=$1 out=$2 cursor="" q
  : >"$out"
  while :; do
    q="limit=1000"
    [[ -n "$cursor" ]] && q="$q&cursor=$cursor"
    curl -sS -H 'Authorization: Bearer rt' "$url/api/v1/profiles?$q" >"$out.page"
    jq -e .profiles "$out.page" >/dev/null || fail "listing on $url: $(head -c 300 "$out.page")"
    jq -r '.profiles[].id' "$out.page" >>"$out"
    cursor=$(jq -r '.next_cursor // empty' "$out.page")
    [[ -n "$cursor" ]] || break
  done
  sort -o "$out" "$out"
}

check_everything() {
  local phase=$1 id i
  for i in 0 1 2; do list_all "${URLS[$i]}" "$E2E_TMP/list$i"; done
  cmp -s "$E2E_TMP/list0" "$E2E_TMP/list1" && cmp -s "$E2E_TMP/list0" "$E2E_TMP/list2" ||
    fail "$phase: the relays list different profiles"
  acked=$(cat "$E2E_TMP"/client*.log | awk '$2 ~ /^2/' | wc -l)
  spaa_acked=$(cat "$E2E_TMP"/client*.log | awk '$1 == "spaa" && $2 == 200' | wc -l)
  listed=$(wc -l <"$E2E_TMP/list0")
  # (the OTLP fixture names its profile id: its uploads after the first are duplicates)
  ((listed >= spaa_acked)) || fail "$phase: $spaa_acked SPAA uploads acknowledged, $listed listed"
  for id in $(cat "$E2E_TMP"/client*.log | awk '$1 == "spaa" && $2 == 200 { print $3 }'); do
    grep -qx "$id" "$E2E_TMP/list0" || fail "$phase: acknowledged profile $id is not listed"
  done
  # a sample of acknowledged SPAA profiles, byte-identical from every relay
  for id in $(cat "$E2E_TMP"/client*.log | awk '$1 == "spaa" && $2 == 200 { print $3 }' |
              head -20); do
    for i in 0 1 2; do
      curl -sS -H 'Authorization: Bearer rt' -o "$E2E_TMP/get$i" \
        "${URLS[$i]}/api/v1/profiles/$id/spaa"
    done
    cmp -s "$E2E_TMP/get0" "$E2E_TMP/get1" && cmp -s "$E2E_TMP/get0" "$E2E_TMP/get2" ||
      fail "$phase: profile $id differs between relays"
    grep -q 'checkout::charge' "$E2E_TMP/get0" || fail "$phase: profile $id reads back wrong"
  done
  for t in dso frame stack block_dict; do
    dup=$(pg_sql "SELECT count(*) - count(DISTINCT $([[ $t == block_dict ]] && echo service ||
      echo cid)) FROM $t")
    assert_eq 0 "$dup" "$phase: duplicate rows in $t"
  done
  echo "$phase: $acked acknowledged, $listed listed on each of 3 relays"
}

# Clients numbered $2... in the background for $1 seconds; their pids in PIDS.
start_clients() {
  local secs=$1 k until
  shift
  until=$(($(date +%s) + secs))
  PIDS=()
  for k in "$@"; do
    client "$E2E_TMP/client$k.log" "$until" "$k" &
    PIDS+=($!)
  done
}

# ---- phase 1: 6 clients, 3 relays, 6 seconds ----------------------------------------------
start_clients 6 1 2 3 4 5 6
pids=("${PIDS[@]}")
for p in "${pids[@]}"; do wait "$p"; done
bad=$(cat "$E2E_TMP"/client*.log | awk '$2 !~ /^2/' | wc -l)
assert_eq 0 "$bad" "uploads refused while PostgreSQL was up: $(awk '$2 !~ /^2/' "$E2E_TMP"/client*.log | sort | uniq -c | head)"
check_everything "three relays"

# ---- phase 2: PostgreSQL stops in the middle of ingest ------------------------------------
start_clients 8 7 8 9
pids=("${PIDS[@]}")
sleep 2
pg_down immediate
sleep 1
SERVER_URL=${URLS[0]}
http POST "/api/v1/spaa?service=down" -H 'Authorization: Bearer it' --data-binary @"$E2E_TMP/p.spaa"
assert_eq 503 "$HTTP_CODE" "an upload while PostgreSQL is down ($HTTP_BODY)"
assert_contains "$HTTP_HEADERS" "Retry-After: 1" "the 503's Retry-After"
http GET /readyz
assert_eq 503 "$HTTP_CODE" "/readyz while PostgreSQL is down"
sleep 1
pg_up
for p in "${pids[@]}"; do wait "$p"; done
# every relay answers again by itself
for i in 0 1 2; do
  SERVER_URL=${URLS[$i]}
  http GET /readyz
  assert_eq 200 "$HTTP_CODE" "/readyz of relay $i after PostgreSQL is back"
  http POST "/api/v1/spaa?service=back" -H 'Authorization: Bearer it' \
    --data-binary @"$E2E_TMP/p.spaa"
  assert_eq 200 "$HTTP_CODE" "an upload to relay $i after PostgreSQL is back ($HTTP_BODY)"
done
refused=$(cat "$E2E_TMP"/client[789].log | awk '$2 == 503' | wc -l)
other=$(cat "$E2E_TMP"/client[789].log | awk '$2 !~ /^2/ && $2 != 503' | wc -l)
assert_eq 0 "$other" "answers other than 2xx and 503 during the outage: $(awk '$2 !~ /^2/ && $2 != 503' "$E2E_TMP"/client[789].log | sort | uniq -c | head)"
((refused > 0)) || fail "no upload was refused while PostgreSQL was down"
check_everything "after a PostgreSQL restart ($refused uploads refused with 503 meanwhile)"

# ---- phase 3: one relay killed with SIGKILL in the middle of ingest -----------------------
# Its clients' requests in flight get no answer (unacknowledged); every upload it or the others
# acknowledged stays readable; the other relays go on answering 2xx throughout. A relay
# started again on the same database serves everything.
start_clients 6 10 11 12
pids=("${PIDS[@]}")
sleep 2
victim=${E2E_PIDS[2]}
kill -KILL "$victim"
wait "$victim" 2>/dev/null || true
for p in "${pids[@]}"; do wait "$p"; done
victim_url=${URLS[2]}
# answers from the two survivors: every one 2xx (the victim's are 2xx before, none after)
other=0
for k in 10 11 12; do
  # round-robin: request n of client k went to relay (n + k) % 3
  other=$((other + $(awk -v k="$k" '{ r = (NR - 1 + k) % 3 } r != 2 && $2 !~ /^2/' \
    "$E2E_TMP/client$k.log" | wc -l)))
done
assert_eq 0 "$other" "the surviving relays refused uploads while a relay was killed"
lost_conn=$(cat "$E2E_TMP"/client1[012].log | awk '$2 == "000"' | wc -l)
((lost_conn > 0)) || fail "no request to the killed relay went unanswered: it was not killed mid-ingest"
start_server --store "$SPAA_TEST_STORE" --read-token rt --ingest-token it
URLS[2]=$SERVER_URL
check_everything "after relay 3 ($victim_url) was killed with SIGKILL ($lost_conn requests unanswered)"
