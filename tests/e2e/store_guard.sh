#!/usr/bin/env bash
# A SQLite store written by one process only, and writable: a second server on the same data
# directory is refused at start with the first one's pid (both writing, one's sweep deleted
# rows the other's acknowledged profiles then referenced), the first keeps serving, and once
# it stopped (even by kill -9) the directory can be opened again; a database this process
# cannot write is refused at start instead of answering every upload 500.
source "$(dirname "$0")/lib.bash"

start_server --grpc-listen ''
first=$SERVER_PID first_url=$SERVER_URL dir=$SERVER_DATA
http POST '/api/v1/spaa?service=guard' --data-binary @"$(dirname "$0")/../data/spec_examples.spaa"
assert_eq 200 "$HTTP_CODE" "upload to the first server ($HTTP_BODY)"

# the second server on the same directory: exit 2, the reason and the holder's pid logged
rc=0
timeout 20 "$SPAA_BIN" serve --listen 127.0.0.1:0 --grpc-listen '' --data-dir "$dir" \
  2>"$E2E_TMP/second.log" || rc=$?
assert_eq 2 "$rc" "a second server on one data directory"
log=$(cat "$E2E_TMP/second.log")
assert_contains "$log" "is in use by another process, pid $first" "the refusal names the holder"
assert_contains "$log" "one server per database file" "the refusal says why"
SERVER_URL=$first_url
http GET /readyz
assert_eq 200 "$HTTP_CODE" "the first server still serves"

# kill -9: the kernel drops the lock with the process; the next server opens the store
kill -9 "$first"
wait "$first" 2>/dev/null || true
start_server --grpc-listen '' --data-dir "$dir"
http GET '/api/v1/profiles?service=guard'
assert_eq 1 "$(jq '.profiles | length' <<<"$HTTP_BODY")" "the profile after kill -9 and a restart"
stop_server || fail "the restarted server did not stop cleanly"

# the data directory emptied under a running server: /readyz says so and uploads are refused
# (503), none acknowledged into the deleted file; the log says it once
start_server --grpc-listen '' --data-dir "$E2E_TMP/gone"
rm -rf "${E2E_TMP:?}/gone/"*
http GET /readyz
assert_eq 503 "$HTTP_CODE" "/readyz once the database file was removed"
assert_contains "$HTTP_BODY" "was removed or replaced while the server ran" "/readyz's reason"
for i in 1 2; do
  http POST '/api/v1/spaa?service=gone' --data-binary @"$(dirname "$0")/../data/spec_examples.spaa"
  assert_eq 503 "$HTTP_CODE" "upload $i into a removed database ($HTTP_BODY)"
done
assert_eq 1 "$(grep -c 'database file removed or replaced' "$SERVER_LOG")" "log lines about it"
stop_server || true

# a database another user owns: refused at start, naming the file
if [[ $(id -u) == 0 ]] && command -v runuser >/dev/null; then
  chmod 755 "$E2E_TMP"
  chmod 777 "$dir"
  rc=0
  timeout 20 runuser -u nobody -- "$SPAA_BIN" serve --listen 127.0.0.1:0 --grpc-listen '' \
    --data-dir "$dir" 2>"$E2E_TMP/ro.log" || rc=$?
  assert_eq 2 "$rc" "a database this user cannot write ($(tail -n1 "$E2E_TMP/ro.log"))"
  assert_contains "$(cat "$E2E_TMP/ro.log")" "cannot be written by this process" \
    "the refusal says the database is read-only"
else
  echo "note [$E2E_NAME]: not root: the read-only database case needs another user"
fi
echo "ok [$E2E_NAME]"
