#!/usr/bin/env bash
# DELETE /api/v1/profiles while uploads go on: a client pushes pprof profiles without pause
# (some with the same content as the profiles being deleted, whose rows the sweep finds
# orphaned) while a service's profiles are deleted and swept. Every profile acknowledged
# reads back as its offline conversion (its SPAA) and answers /top; afterwards the store
# holds exactly the stack, frame, dso and dictionary rows a fresh store given the same
# surviving uploads holds: no orphan left, nothing missing.
source "$(dirname "$0")/lib.bash"

command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/install-deps.sh installs it)"
command -v jq >/dev/null || fail "jq is not installed (scripts/install-deps.sh installs it)"
FIX="${SPAA_SHARED:-}/fixtures/pprof"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures ($FIX)"
  exit 77
fi
OLD=(google-pprof_large.cpu pyroscope_dotnet.labels.pprof pyroscope_heap pyroscope_profile_java
  pyroscope_go.cpu.labels.pprof pyroscope_profile_python)
# the live client: content of its own until the delete begins, then also two of the old
# ones' (put after the sweep began, they take rows the sweep's scan found orphaned)
EARLY=(parca_profile-with-labels.pb.gz pyroscope_nodejs-wall.pb.gz google-pprof_sample.cpu)
LIVE=(pyroscope_profile_java pyroscope_profile_python "${EARLY[@]}")

rows() {
  sqlite3 "$1" "SELECT (SELECT count(*) FROM stack), (SELECT count(*) FROM frame),
    (SELECT count(*) FROM dso), (SELECT count(*) FROM block_dict)"
}

# push SERVICE FILE: one upload; its stored id on stdout
push() {
  local hdr="$E2E_TMP/push.$BASHPID.hdr" code id
  code=$(curl -sS -o /dev/null -D "$hdr" -w '%{http_code}' -X POST \
    "$SERVER_URL/ingest?name=$1.cpu&format=pprof" --data-binary @"$FIX/$2") || return 1
  [[ $code == 200 ]] || return 1
  id=$(tr -d '\r' <"$hdr" | awk -F': ' 'tolower($1) == "x-spaa-profile-ids" { print $2 }')
  [[ -n $id ]] || return 1
  echo "$id"
}

# the live client, until $E2E_TMP/stop exists: "id file ack_ns" lines into $1; EARLY files
# until $E2E_TMP/deleting exists, then LIVE ones
live_client() {
  local i=0 f id
  while [[ ! -e $E2E_TMP/stop ]]; do
    if [[ -e $E2E_TMP/deleting ]]; then
      f=${LIVE[$((i % ${#LIVE[@]}))]}
    else
      f=${EARLY[$((i % ${#EARLY[@]}))]}
    fi
    id=$(push live "$f") || { echo "FAILED $f" >>"$1"; return 1; }
    echo "$id $f $(date +%s%N)" >>"$1"
    i=$((i + 1))
  done
}

start_server --admin-token adm --retention 0
overlap=0
for round in 1 2 3; do
  for ((k = 0; k < 4; k++)); do
    for f in "${OLD[@]}"; do
      push "old$round" "$f" >/dev/null || fail "push old $f"
    done
  done
  rm -f "$E2E_TMP/stop" "$E2E_TMP/deleting"
  live_client "$E2E_TMP/live$round" &
  client=$!
  # a few uploads in before the delete begins
  for ((t = 0; t < 200; t++)); do
    [[ -f $E2E_TMP/live$round && $(wc -l <"$E2E_TMP/live$round") -ge 2 ]] && break
    sleep 0.05
  done
  t0=$(date +%s%N)
  touch "$E2E_TMP/deleting"
  http DELETE "/api/v1/profiles?service=old$round" -H 'Authorization: Bearer adm'
  t1=$(date +%s%N)
  assert_eq 200 "$HTTP_CODE" "delete round $round: $HTTP_BODY"
  assert_eq 24 "$(printf '%s' "$HTTP_BODY" | jq .deleted)" "deleted in round $round"
  n0=$(wc -l <"$E2E_TMP/live$round")
  for ((t = 0; t < 200; t++)); do # and a few after it
    (($(wc -l <"$E2E_TMP/live$round") >= n0 + 2)) && break
    sleep 0.05
  done
  touch "$E2E_TMP/stop"
  wait "$client" || fail "the live client failed: $(grep FAILED "$E2E_TMP/live$round")"
  during=$(awk -v a="$t0" -v b="$t1" '$3 > a && $3 < b' "$E2E_TMP/live$round" | wc -l)
  echo "round $round: $(wc -l <"$E2E_TMP/live$round") uploads, $during acknowledged during the delete: $HTTP_BODY"
  overlap=$((overlap + during))
  ((overlap > 0)) && break
done
((overlap > 0)) || fail "no upload was acknowledged while a delete ran, in 3 rounds"

# every acknowledged profile: its SPAA as the offline conversion, and its top
assert_read_back "$SERVER_URL" "$FIX" "$E2E_TMP"/live*
n=$READ_BACK
while read -r id f _; do
  http GET "/api/v1/profiles/$id/top"
  assert_eq 200 "$HTTP_CODE" "GET top of $id ($f): $HTTP_BODY"
  (($(printf '%s' "$HTTP_BODY" | jq '.top | length') > 0)) || fail "empty top for $id: $HTTP_BODY"
done < <(cat "$E2E_TMP"/live*)
echo "$n profiles acknowledged by the live client read back whole"
http GET "/api/v1/profiles?limit=1000"
assert_eq "$n" "$(printf '%s' "$HTTP_BODY" | jq '[.profiles[] | select(.service == "live")] | length')" \
  "live profiles listed"
assert_eq 0 "$(printf '%s' "$HTTP_BODY" | jq '[.profiles[] | select(.service != "live")] | length')" \
  "nothing of the deleted services left"
stop_server || fail "server exit"
after=$(rows "$SERVER_DATA/spaa-relay.db")

# a fresh store given only the surviving uploads holds the same shared rows
start_server --retention 0
while read -r _ f _; do
  push live "$f" >/dev/null || fail "push $f again"
done < <(cat "$E2E_TMP"/live*)
stop_server || fail "server exit"
assert_eq "$(rows "$SERVER_DATA/spaa-relay.db")" "$after" "stack|frame|dso|dictionary rows: no orphans, nothing missing"
echo "ok [$E2E_NAME]"
