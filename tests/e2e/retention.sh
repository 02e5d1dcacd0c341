#!/usr/bin/env bash
# Retention by size: a store filled past max_db_size is brought under it by the background
# pass, oldest profiles first; the newest read back as their offline conversion; no orphan
# rows stay (a fresh store given only the surviving uploads holds exactly as many stack,
# frame and dso rows). Also: a bad retention setting is refused at start with its name.
source "$(dirname "$0")/lib.bash"

command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/install-deps.sh installs it)"
FIX="${SPAA_SHARED:-}/fixtures/pprof"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures ($FIX)"
  exit 77
fi
# oldest first: the largest goes first, so deleting from the old end frees the most
FILES=(google-pprof_large.cpu pyroscope_dotnet.labels.pprof pyroscope_heap
  parca_profile-with-labels.pb.gz pyroscope_profile_java pyroscope_go.cpu.labels.pprof
  pyroscope_profile_python pyroscope_nodejs-wall.pb.gz google-pprof_sample.cpu)

# push FILES[from..] as services svcN (N = index), one at a time
push_from() {
  local i
  for ((i = $1; i < ${#FILES[@]}; i++)); do
    http POST "/ingest?name=svc$i.cpu&format=pprof" --data-binary @"$FIX/${FILES[$i]}"
    assert_eq 200 "$HTTP_CODE" "push ${FILES[$i]}: $HTTP_BODY"
  done
}

# bytes the store's files take (as du counts them)
store_bytes() {
  local f total=0
  for f in "$1"/spaa-relay.db "$1"/spaa-relay.db-wal "$1"/spaa-relay.db-shm; do
    [[ -f "$f" ]] && total=$((total + $(stat -c '%b' "$f") * 512))
  done
  echo "$total"
}

rows() { sqlite3 "$1" "SELECT (SELECT count(*) FROM stack), (SELECT count(*) FROM frame), (SELECT count(*) FROM dso)"; }

# bad settings name themselves
if "$SPAA_BIN" serve --listen 127.0.0.1:0 --data-dir "$E2E_TMP/bad" --retention 3x \
  2>"$E2E_TMP/bad.log"; then
  fail "--retention 3x was accepted"
fi
assert_contains "$(cat "$E2E_TMP/bad.log")" "--retention: bad duration '3x'" "bad retention"

# 1. the whole set, no cap: its size
start_server --retention 0
push_from 0
stop_server || fail "server exit"
full=$(store_bytes "$SERVER_DATA")
cap=$((full / 2))
echo "full store $full bytes; cap $cap"

# 2. the same set under a cap of half that, a pass every second
start_server --max-db-size "$cap" --retention-interval 1s
push_from 0
for ((t = 0; t < 300; t++)); do
  grep -q 'retention deleted profiles' "$SERVER_LOG" && (($(store_bytes "$SERVER_DATA") <= cap)) && break
  sleep 0.1
done
now=$(store_bytes "$SERVER_DATA")
((now <= cap)) || fail "store is $now bytes, over its cap $cap, after 30 s"
grep 'retention deleted profiles' "$SERVER_LOG" | head -n 3
http GET "/api/v1/profiles?limit=100"
assert_eq 200 "$HTTP_CODE" "list"
left=$(printf '%s' "$HTTP_BODY" | jq -r '[.profiles[].service] | join(" ")')
echo "left: $left"
n_left=$(printf '%s' "$HTTP_BODY" | jq '.profiles | length')
((n_left > 0 && n_left < ${#FILES[@]})) || fail "expected some but not all profiles deleted, left: $left"
[[ " $left " != *" svc0 "* ]] || fail "the oldest (svc0) survived: $left"
# the survivors are the newest ones, in one run at the end
first_left=$(printf '%s' "$HTTP_BODY" | jq -r '[.profiles[].service | ltrimstr("svc") | tonumber] | min')
expect=$(seq "$first_left" $((${#FILES[@]} - 1)) | sed 's/^/svc/' | sort | tr '\n' ' ')
got=$(printf '%s' "$left" | tr ' ' '\n' | sort | tr '\n' ' ')
assert_eq "$expect" "$got" "the survivors are the newest"
# the newest reads back as its offline conversion
last=$((${#FILES[@]} - 1))
id=$(printf '%s' "$HTTP_BODY" | jq -r --arg s "svc$last" '.profiles[] | select(.service == $s) | .id')
curl -sS -o "$E2E_TMP/newest.spaa" "$SERVER_URL/api/v1/profiles/$id/spaa" || fail "download"
"$SPAA_BIN" convert --from pprof --name "svc$last.cpu" "$FIX/${FILES[$last]}" \
  -o "$E2E_TMP/newest.offline.spaa" || fail "offline convert"
cmp <(tail -n +2 "$E2E_TMP/newest.spaa") <(tail -n +2 "$E2E_TMP/newest.offline.spaa") ||
  fail "the newest profile does not read back as its conversion"
stop_server || fail "server exit"
after=$(rows "$SERVER_DATA/spaa-relay.db")

# 3. orphans: a fresh store given only the survivors holds the same shared rows
start_server --retention 0
push_from "$first_left"
stop_server || fail "server exit"
assert_eq "$(rows "$SERVER_DATA/spaa-relay.db")" "$after" "stack|frame|dso rows: no orphans left"
echo "ok [$E2E_NAME]"
