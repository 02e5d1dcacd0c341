#!/usr/bin/env bash
# Three relays on one PostgreSQL (a throwaway cluster, tests/support/pg.sh): 8 clients post
# SPAA, Sentry envelopes, pprof and OTLP uploads round-robin to all three for a bounded time;
# every acknowledged profile reads back from every relay (SPAA and Sentry ones
# byte-identical, by the ids their answers gave; every listed profile's metadata identical),
# every relay lists the same profiles, the merged views (top, flamegraph, services, labels)
# answer the same on every relay, and the dictionaries hold each content id once. Then
# PostgreSQL stops in the middle of ingest: uploads get 503 with Retry-After and /readyz says
# 503 while it is down; once it is back every relay recovers by itself and nothing
# acknowledged is lost. Last, one relay is killed with SIGKILL in the middle of ingest: the
# others go on, nothing acknowledged is lost.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pg_lib.bash"

[[ -d "${SPAA_SHARED:-}/fixtures" ]] || { echo "skipped: no shared fixtures"; exit 77; }
pg_start || exit $?
trap 'pg_stop; e2e_cleanup' EXIT

export LC_ALL=C # one sort order for sort and comm
FX=$SPAA_SHARED/fixtures
SENTRY_ENV=$FX/sentry/constructed_envelope_transaction_profile_v1.envelope
SENTRY_KEY=e12d836b15bb49d7bbf99e64295d995b # the key of the envelope's dsn (project 42)
URLS=()
for i in 1 2 3; do
  start_server --store "$SPAA_TEST_STORE" --read-token rt --ingest-token it \
    --sentry-key "42:$SENTRY_KEY"
  URLS+=("$SERVER_URL")
done

shop_spaa "$E2E_TMP/p.spaa"

hex32() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

# One client: uploads until $2 (epoch seconds), request n to relay (n + k) % 3, the dialect
# turning too; a line "dialect code id" per answer goes to $1 (id: what the answer named).
client() {
  local out=$1 until=$2 k=$3 n=0 url code id
  while (($(date +%s) < until)); do
    url=${URLS[$(((n + k) % 3))]}
    id=""
    case $(((n / 3 + k) % 4)) in
      0) code=$(curl -sS -o "$out.body" -w '%{http_code}' -H 'Authorization: Bearer it' \
           --data-binary @"$E2E_TMP/p.spaa" "$url/api/v1/spaa?service=svc$k" || true)
         echo "spaa $code $(jq -r '.id // empty' "$out.body" 2>/dev/null)" >>"$out" ;;
      1) # a new profile each time: the envelope's event and profile ids replaced (same length)
         sed -e "s/3367f5196c494acaae85bbbd535379ac/$(hex32)/g" \
           -e "s/41fed0925670468bb0457f61a74688ec/$(hex32)/g" "$SENTRY_ENV" >"$out.env"
         code=$(curl -sS -o "$out.body" -w '%{http_code}' -H 'Content-Type:' \
           --data-binary @"$out.env" "$url/api/42/envelope/?sentry_key=$SENTRY_KEY" || true)
         echo "sentry $code $(jq -r '.profiles[0].id // empty' "$out.body" 2>/dev/null)" \
           >>"$out" ;;
      2) code=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer it' \
           --data-binary @"$FX/pprof/pyroscope_go.cpu.labels.pprof" \
           "$url/v1/pprof?service=go$k" || true)
         echo "pprof $code" >>"$out" ;;
      3) code=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer it' \
           -H 'Content-Type: application/x-protobuf' \
           --data-binary @"$FX/otlp/v1dev_01_cpu_basic.bin" "$url/v1development/profiles" ||
           true)
         echo "otlp $code" >>"$out" ;;
    esac
    n=$((n + 1))
  done
}

# The ids relay $1 lists, sorted, into $2 (paging with the cursor), with any filter $3.
list_all() {
  local url=$1 out=$2 filter=${3:-} cursor="" q
  : >"$out"
  while :; do
    q="limit=1000$filter"
    [[ -n "$cursor" ]] && q="$q&cursor=$cursor"
    curl -sS -H 'Authorization: Bearer rt' "$url/api/v1/profiles?$q" >"$out.page"
    jq -e .profiles "$out.page" >/dev/null || fail "listing on $url: $(head -c 300 "$out.page")"
    jq -r '.profiles[].id' "$out.page" >>"$out"
    cursor=$(jq -r '.next_cursor // empty' "$out.page")
    [[ -n "$cursor" ]] || break
  done
  sort -o "$out" "$out"
}

# GET $1/api/v1/profiles/ID$2 for every id of file $3 on one connection: each body into
# directory $4 (named by id); fails unless every answer is 200.
fetch_all() {
  local url=$1 suffix=$2 ids=$3 dir=$4 id codes
  rm -rf "$dir"
  mkdir -p "$dir"
  : >"$dir.cfg"
  while read -r id; do
    printf 'url = "%s/api/v1/profiles/%s%s"\noutput = "%s/%s"\n' "$url" "$id" "$suffix" \
      "$dir" "$id" >>"$dir.cfg"
  done <"$ids"
  [[ -s "$dir.cfg" ]] || return 0
  curl -sS -H 'Authorization: Bearer rt' -K "$dir.cfg" -w '%{http_code}\n' >"$dir.codes" ||
    fail "fetching from $url"
  codes=$(sort "$dir.codes" | uniq -c | tr -s ' ')
  assert_eq " $(wc -l <"$ids") 200" "$codes" "answers to GET /api/v1/profiles/ID$suffix from $url"
}

# ids the answers of dialect $1 named (acknowledged with 200), sorted, once each
acked_ids() {
  cat "$E2E_TMP"/client*.log | awk -v d="$1" '$1 == d && $2 == 200 && $3 != "" { print $3 }' |
    sort -u
}

# The merged views and discovery answers, the same on every relay.
check_views() {
  local phase=$1 v i
  for v in "top?limit=100" "top?source=pprof&limit=20" "top?service=svc1&event=cycles" \
           "top?label=service.name:checkout&limit=30" "flamegraph?max_nodes=200" \
           "collapsed?source=sentry" "summary?source=pprof" "pprof?service=go1" \
           "diff?base.service=go1&target.service=go2" "services" "labels" \
           "labels/service.name/values"; do
    for i in 0 1 2; do
      curl -sS -H 'Authorization: Bearer rt' -o "$E2E_TMP/view$i" -w '%{http_code}' \
        "${URLS[$i]}/api/v1/$v" >"$E2E_TMP/view$i.code"
    done
    assert_eq 200 "$(cat "$E2E_TMP/view0.code")" \
      "$phase: GET /api/v1/$v ($(head -c 300 "$E2E_TMP/view0" | tr -d '\0'))"
    cmp -s "$E2E_TMP/view0" "$E2E_TMP/view1" && cmp -s "$E2E_TMP/view0" "$E2E_TMP/view2" ||
      fail "$phase: GET /api/v1/$v answers differently on the relays"
  done
  # the merged top over the pprof uploads names the fixture's hot function
  curl -sS -H 'Authorization: Bearer rt' "${URLS[1]}/api/v1/top?source=pprof&limit=1" >"$E2E_TMP/top"
  assert_eq main.work "$(jq -r '.top[0].name' "$E2E_TMP/top")" "$phase: the merged top's first"
}

check_everything() {
  local phase=$1 i k t dup acked listed n want
  for i in 0 1 2; do list_all "${URLS[$i]}" "$E2E_TMP/list$i"; done
  cmp -s "$E2E_TMP/list0" "$E2E_TMP/list1" && cmp -s "$E2E_TMP/list0" "$E2E_TMP/list2" ||
    fail "$phase: the relays list different profiles"
  acked=$(cat "$E2E_TMP"/client*.log | awk '$2 ~ /^2/' | wc -l)
  listed=$(wc -l <"$E2E_TMP/list0")
  # every acknowledged SPAA and Sentry upload by the id its answer gave: listed, and read
  # back byte-identical from every relay
  { acked_ids spaa; acked_ids sentry; } | sort >"$E2E_TMP/acked"
  comm -23 "$E2E_TMP/acked" "$E2E_TMP/list0" >"$E2E_TMP/missing"
  [[ ! -s "$E2E_TMP/missing" ]] ||
    fail "$phase: acknowledged profiles not listed: $(head -5 "$E2E_TMP/missing" | tr '\n' ' ')"
  for i in 0 1 2; do fetch_all "${URLS[$i]}" /spaa "$E2E_TMP/acked" "$E2E_TMP/spaa$i"; done
  diff -rq "$E2E_TMP/spaa0" "$E2E_TMP/spaa1" >/dev/null &&
    diff -rq "$E2E_TMP/spaa0" "$E2E_TMP/spaa2" >/dev/null ||
    fail "$phase: profiles read back differently from the relays"
  for id in $(acked_ids spaa | head -3); do
    grep -q 'checkout::charge' "$E2E_TMP/spaa0/$id" || fail "$phase: profile $id reads back wrong"
  done
  # pprof uploads get a new id each: at least as many listed per client as acknowledged
  for k in $(ls "$E2E_TMP"/client*.log | sed 's/.*client\([0-9]*\)\.log/\1/'); do
    want=$(awk '$1 == "pprof" && $2 ~ /^2/' "$E2E_TMP/client$k.log" | wc -l)
    list_all "${URLS[0]}" "$E2E_TMP/go$k" "&service=go$k"
    n=$(wc -l <"$E2E_TMP/go$k")
    ((n >= want)) || fail "$phase: client $k had $want pprof uploads acknowledged, $n listed"
  done
  if awk '$1 == "otlp" && $2 ~ /^2/' "$E2E_TMP"/client*.log | grep -q .; then
    grep -qx 0a1b2c3d4e5f60718293a4b5c6d7e8f9 "$E2E_TMP/list0" ||
      fail "$phase: the acknowledged OTLP profile is not listed"
  fi
  # every listed profile's metadata from every relay, the same
  for i in 0 1 2; do fetch_all "${URLS[$i]}" "" "$E2E_TMP/list0" "$E2E_TMP/meta$i"; done
  diff -rq "$E2E_TMP/meta0" "$E2E_TMP/meta1" >/dev/null &&
    diff -rq "$E2E_TMP/meta0" "$E2E_TMP/meta2" >/dev/null ||
    fail "$phase: metadata differs between relays"
  check_views "$phase"
  for t in dso frame stack block_dict; do
    dup=$(pg_sql "SELECT count(*) - count(DISTINCT $([[ $t == block_dict ]] && echo service ||
      echo cid)) FROM $t")
    assert_eq 0 "$dup" "$phase: duplicate rows in $t"
  done
  echo "$phase: $acked acknowledged ($(wc -l <"$E2E_TMP/acked") SPAA and Sentry ids), $listed listed and read back on each of 3 relays"
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

# ---- phase 1: 8 clients, 3 relays, 6 seconds ----------------------------------------------
# one SPAA upload of svc1 first, which the views check reads: a client reaches its first SPAA
# upload only at its tenth request, which a loaded machine may not give it in 6 s
code=$(curl -sS -o "$E2E_TMP/pre.body" -w '%{http_code}' -H 'Authorization: Bearer it' \
  --data-binary @"$E2E_TMP/p.spaa" "${URLS[0]}/api/v1/spaa?service=svc1")
assert_eq 200 "$code" "the first SPAA upload of svc1: $(cat "$E2E_TMP/pre.body")"
echo "spaa $code $(jq -r '.id // empty' "$E2E_TMP/pre.body")" >"$E2E_TMP/client0.log"
start_clients 6 1 2 3 4 5 6 7 8
pids=("${PIDS[@]}")
for p in "${pids[@]}"; do wait "$p"; done
bad=$(cat "$E2E_TMP"/client*.log | awk '$2 !~ /^2/' | wc -l)
assert_eq 0 "$bad" "uploads refused while PostgreSQL was up: $(awk '$2 !~ /^2/' "$E2E_TMP"/client*.log | sort | uniq -c | head)"
check_everything "three relays"

# ---- phase 2: PostgreSQL stops in the middle of ingest ------------------------------------
start_clients 8 21 22 23
pids=("${PIDS[@]}")
sleep 2
pg_down immediate
sleep 1
SERVER_URL=${URLS[0]}
http POST "/api/v1/spaa?service=down" -H 'Authorization: Bearer it' --data-binary @"$E2E_TMP/p.spaa"
assert_eq 503 "$HTTP_CODE" "an upload while PostgreSQL is down ($HTTP_BODY)"
assert_contains "$HTTP_HEADERS" "Retry-After: 1" "the 503's Retry-After"
http POST "/api/42/envelope/?sentry_key=$SENTRY_KEY" -H 'Content-Type:' --data-binary @"$SENTRY_ENV"
assert_eq 429 "$HTTP_CODE" "a Sentry envelope while PostgreSQL is down ($HTTP_BODY)"
assert_contains "$HTTP_HEADERS" "Retry-After: 1" "the 429's Retry-After"
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
# (the Sentry dialect says "back off" as Relay does: 429 with Retry-After)
REFUSED='$2 == 503 || ($1 == "sentry" && $2 == 429)'
refused=$(cat "$E2E_TMP"/client2[123].log | awk "$REFUSED" | wc -l)
other=$(cat "$E2E_TMP"/client2[123].log | awk "\$2 !~ /^2/ && !($REFUSED)" | wc -l)
assert_eq 0 "$other" "answers other than 2xx and 503 during the outage: $(awk "\$2 !~ /^2/ && !($REFUSED)" "$E2E_TMP"/client2[123].log | sort | uniq -c | head)"
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
