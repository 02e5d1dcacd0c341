#!/usr/bin/env bash
# SIGTERM while an upload is on its way: the server stops accepting connections, lets the
# upload finish and answers it, then exits 0.
source "$(dirname "$0")/lib.bash"

start_server
head -c 300000 /dev/zero | tr '\0' 'x' >"$E2E_TMP/slow-body"
# ~6 s on the wire at 50 KB/s
curl -sS -o "$E2E_TMP/slow-answer" -w '%{http_code}' --limit-rate 50k -X POST \
  --data-binary @"$E2E_TMP/slow-body" "$SERVER_URL/api/v1/spaa" >"$E2E_TMP/slow-code" \
  2>"$E2E_TMP/slow-err" &
CURL_PID=$!
E2E_PIDS+=("$CURL_PID")
# let the upload get under way (it lasts ~6 s; the shutdown line checks it was in flight)
sleep 1.5
kill -TERM "$SERVER_PID"

# new connections are refused soon after the signal
refused=0
for ((i = 0; i < 100; i++)); do
  if ! curl -s -o /dev/null --max-time 2 "$SERVER_URL/healthz"; then
    refused=1
    break
  fi
  sleep 0.1
done
assert_eq 1 "$refused" "new connections refused during shutdown"

rc=0
wait "$CURL_PID" || rc=$?
assert_eq 0 "$rc" "curl exit status of the slow upload ($(cat "$E2E_TMP/slow-err"))"
code=$(cat "$E2E_TMP/slow-code")
answer=$(cat "$E2E_TMP/slow-answer")
[[ "$code" =~ ^[245][0-9][0-9]$ ]] || fail "the slow upload got no answer (code '$code')"
[[ -n "$(json_get "$answer" error)$(json_get "$answer" id)" ]] ||
  fail "the slow upload's answer is not the server's JSON: $answer"

rc=0
wait "$SERVER_PID" || rc=$?
assert_eq 0 "$rc" "server exit status after SIGTERM"
grep -q 'msg="shutting down.*" signal=SIGTERM inflight=1' "$SERVER_LOG" ||
  fail "no shutdown line with the upload in flight"
grep -q 'method=POST path="/api/v1/spaa" status='"$code"' bytes=300000 ' "$SERVER_LOG" ||
  fail "the upload is not logged as completed with status $code"
grep -q 'msg="stopped"' "$SERVER_LOG" || fail "no 'stopped' line"
echo "PASS [$E2E_NAME]"
