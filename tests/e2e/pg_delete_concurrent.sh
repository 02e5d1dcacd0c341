#!/usr/bin/env bash
# PostgreSQL: DELETE /api/v1/profiles on one relay while clients upload to it and to a second
# relay on the same database. The store holds some hundreds of profiles, so the sweep after
# the delete reads hundreds of blocks; it takes the lock every put needs only for short steps,
# so uploads are acknowledged while it runs: the deleting relay's "PostgreSQL sweep done" line
# counts the profiles put during the sweep, and the clients get answers while the DELETE is in
# flight. The live uploads include the content of deleted profiles (rows the sweep found
# orphaned, taken again while it runs). Every acknowledged upload reads back as its offline
# conversion, and afterwards the database holds exactly the stack, frame, dso and dictionary
# rows a fresh database given the surviving uploads holds: no orphan left, nothing missing.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pg_lib.bash"

command -v jq >/dev/null || fail "jq is not installed (scripts/install-deps.sh installs it)"
FIX="${SPAA_SHARED:-}/fixtures/pprof"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures ($FIX)"
  exit 77
fi
pg_start || exit $?
trap 'pg_stop; e2e_cleanup' EXIT

KEEP=(pyroscope_profile_java pyroscope_profile_python pyroscope_go.cpu.labels.pprof
  pyroscope_nodejs-wall.pb.gz google-pprof_sample.cpu)
KEEP_N=300 # profiles that stay: what every sweep reads
OLD=(google-pprof_large.cpu pyroscope_dotnet.labels.pprof pyroscope_heap
  parca_profile-with-labels.pb.gz)
# the live clients: content of its own, and two of the deleted ones'
LIVE=(pyroscope_profile_java pyroscope_heap parca_profile-with-labels.pb.gz
  pyroscope_single_group_with_optional_span_id.pb.gz)

rows() {
  pg_sql "SELECT (SELECT count(*) FROM stack), (SELECT count(*) FROM frame),
    (SELECT count(*) FROM dso), (SELECT count(*) FROM block_dict)" | tr '|' ' '
}

# push URL SERVICE FILE: one upload; its stored id on stdout
push() {
  local hdr="$E2E_TMP/push.$BASHPID.hdr" code id
  code=$(curl -sS -o /dev/null -D "$hdr" -w '%{http_code}' -X POST \
    "$1/ingest?name=$2.cpu&format=pprof" --data-binary @"$FIX/$3") || return 1
  [[ $code == 200 ]] || return 1
  id=$(tr -d '\r' <"$hdr" | awk -F': ' 'tolower($1) == "x-spaa-profile-ids" { print $2 }')
  [[ -n $id ]] || return 1
  echo "$id"
}

# live_client URL OUT K: uploads to URL until $E2E_TMP/stop exists, "id file ack_ns" lines
# into OUT
live_client() {
  local i=$3 f id
  while [[ ! -e $E2E_TMP/stop ]]; do
    f=${LIVE[$((i % ${#LIVE[@]}))]}
    id=$(push "$1" live "$f") || { echo "FAILED $f" >>"$2"; return 1; }
    echo "$id $f $(date +%s%N)" >>"$2"
    i=$((i + 1))
  done
}

start_server --store "$SPAA_TEST_STORE" --admin-token adm --retention 0
URL_A=$SERVER_URL
LOG_A=$SERVER_LOG
start_server --store "$SPAA_TEST_STORE" --retention 0
URL_B=$SERVER_URL
SERVER_URL=$URL_A # http and fail() speak of the deleting relay
SERVER_LOG=$LOG_A

fill() { # fill K: every other KEEP profile, half on each relay
  local i url
  for ((i = $1; i < KEEP_N; i += 2)); do
    url=$URL_A
    ((i % 4 < 2)) || url=$URL_B
    push "$url" keep "${KEEP[$((i % ${#KEEP[@]}))]}" >/dev/null || return 1
  done
}
fill 0 &
f0=$!
fill 1 || fail "filling the store"
wait "$f0" || fail "filling the store"

overlap=0
swept_during=0
for round in 1 2 3; do
  for f in "${OLD[@]}"; do
    push "$URL_A" "old$round" "$f" >/dev/null || fail "push old $f"
    push "$URL_B" "old$round" "$f" >/dev/null || fail "push old $f"
  done
  rm -f "$E2E_TMP/stop"
  live_client "$URL_A" "$E2E_TMP/liveA$round" 0 &
  ca=$!
  live_client "$URL_B" "$E2E_TMP/liveB$round" 1 &
  cb=$!
  for ((t = 0; t < 200; t++)); do # a few uploads in before the delete begins
    [[ -f $E2E_TMP/liveA$round && -f $E2E_TMP/liveB$round ]] && break
    sleep 0.05
  done
  t0=$(date +%s%N)
  http DELETE "/api/v1/profiles?service=old$round" -H 'Authorization: Bearer adm'
  t1=$(date +%s%N)
  assert_eq 200 "$HTTP_CODE" "delete round $round: $HTTP_BODY"
  assert_eq $((2 * ${#OLD[@]})) "$(jq .deleted <<<"$HTTP_BODY")" "deleted in round $round"
  touch "$E2E_TMP/stop"
  wait "$ca" || fail "live client A failed: $(grep FAILED "$E2E_TMP/liveA$round")"
  wait "$cb" || fail "live client B failed: $(grep FAILED "$E2E_TMP/liveB$round")"
  during=$(cat "$E2E_TMP/liveA$round" "$E2E_TMP/liveB$round" |
    awk -v a="$t0" -v b="$t1" '$3 > a && $3 < b' | wc -l)
  line=$(grep 'msg="PostgreSQL sweep done"' "$LOG_A" | tail -1 || true)
  [[ -n $line ]] || fail "round $round: no 'PostgreSQL sweep done' line"
  put=$(sed -n 's/.* put_during=\([0-9]*\).*/\1/p' <<<"$line")
  blocks=$(sed -n 's/.* blocks=\([0-9]*\).*/\1/p' <<<"$line")
  ((blocks >= KEEP_N)) || fail "round $round: the sweep read $blocks blocks, fewer than the $KEEP_N kept: $line"
  echo "round $round: $during uploads acknowledged during the delete; $line"
  overlap=$((overlap + during))
  swept_during=$((swept_during + put))
  ((overlap > 0 && swept_during > 0)) && break
done
((overlap > 0)) || fail "no upload was acknowledged while a delete ran, in 3 rounds"
((swept_during > 0)) || fail "no profile was put while a sweep ran, in 3 rounds"

# every acknowledged live profile: its SPAA as the offline conversion
assert_read_back "$URL_B" "$FIX" "$E2E_TMP"/live[AB]*
n=$READ_BACK
echo "$n profiles acknowledged by the live clients read back whole"
assert_eq "$n" "$(pg_sql "SELECT count(*) FROM profile WHERE service = 'live'")" "live profiles stored"
assert_eq "$KEEP_N" "$(pg_sql "SELECT count(*) FROM profile WHERE service = 'keep'")" "kept profiles"
assert_eq 0 "$(pg_sql "SELECT count(*) FROM profile WHERE service LIKE 'old%'")" "deleted profiles left"
after=$(rows)

# a fresh database given the surviving uploads (each content of each service once: rows are
# deduplicated by content, dictionaries made per service) holds the same shared rows
pg_sql "CREATE DATABASE fresh" >/dev/null
start_server --store "postgresql:///fresh?host=$SPAA_PG_DIR&port=$SPAA_PG_PORT&user=postgres" \
  --retention 0
for f in "${KEEP[@]}"; do
  push "$SERVER_URL" keep "$f" >/dev/null || fail "push $f again"
done
while read -r f; do
  push "$SERVER_URL" live "$f" >/dev/null || fail "push $f again"
done < <(cat "$E2E_TMP"/live[AB]* | awk '{ print $2 }' | sort -u)
fresh=$("$SPAA_PG_BIN/psql" -h "$SPAA_PG_DIR" -p "$SPAA_PG_PORT" -U postgres -d fresh -XAtq -c \
  "SELECT (SELECT count(*) FROM stack), (SELECT count(*) FROM frame),
    (SELECT count(*) FROM dso), (SELECT count(*) FROM block_dict)" | tr '|' ' ')
assert_eq "$fresh" "$after" "stack|frame|dso|dictionary rows: no orphans, nothing missing"
echo "ok [$E2E_NAME]"
