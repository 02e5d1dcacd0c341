#!/usr/bin/env bash
# What an upload's answer and its log line say about the profiles it stored, and log lines that
# stay valid UTF-8:
# - an OTLP error answer is a protobuf google.rpc.Status (bytes >= 0x80 in it): the request
#   line's answer= shows them as \xNN, and the log, text or JSON, is valid UTF-8 (jq reads it);
# - the eBPF profiler's export stores 82 profiles: X-Spaa-Profile-Count says 82,
#   X-Spaa-Profile-Ids lists all 82 in order (every one fetchable), and the request line's
#   ids=, a copy too short for them, ends with ",...".
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:-}/fixtures/otlp/pyroscope_otel-ebpf-profile.pb.bin"
if [[ ! -f "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures ($FIX)"
  exit 77
fi

# wait until the log of the last started server has N request lines
wait_requests() {
  local i
  for ((i = 0; i < 50; i++)); do
    (($(grep -ac 'msg.*request' "$SERVER_LOG" || true) >= $1)) && return 0
    sleep 0.1
  done
  fail "no $1 request lines in the log"
}

valid_utf8() {
  iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1 || fail "$2: the log is not valid UTF-8: $(
    grep -an "$(printf '[\x80-\xff]')" "$1" | head -c 600)"
}

# --- text log ------------------------------------------------------------------------------
start_server
http POST /v1development/profiles --data-binary x
assert_eq 415 "$HTTP_CODE" "a form-encoded body"
http POST /v1development/profiles -H 'Content-Type: application/x-protobuf' --data-binary @"$FIX"
assert_eq 200 "$HTTP_CODE" "the eBPF profiler's export"
ids=$(sed -n 's/^X-Spaa-Profile-Ids: *//Ip' <<<"$HTTP_HEADERS")
count=$(sed -n 's/^X-Spaa-Profile-Count: *//Ip' <<<"$HTTP_HEADERS")
wait_requests 2
valid_utf8 "$SERVER_LOG" "text"
rej=$(grep -a 'msg="request".*status=415' "$SERVER_LOG") || fail "no request line for the 415"
assert_contains "$rej" 'answer="\x08\x03\x12\x88\x01Content-Type' "the Status bytes, escaped"
req=$(grep -a 'msg="request".*status=200' "$SERVER_LOG") || fail "no request line for the 200"
log_ids=${req##* ids=}
log_ids=${log_ids%% *}

assert_eq 82 "$count" "X-Spaa-Profile-Count: every profile of the export"
stored=$(grep -a 'msg="otlp export".*status=200' "$SERVER_LOG" | grep -o ' stored=[0-9]*')
assert_eq " stored=82" "$stored" "the export line"
IFS=, read -r -a listed <<<"$ids"
n=${#listed[@]}
((n >= 1 && n <= count)) || fail "X-Spaa-Profile-Ids lists $n ids for a count of $count: $ids"
assert_eq "$count" "$n" "X-Spaa-Profile-Ids: all 82 listed (the header holds up to 248)"
(($(printf '%s\n' "${listed[@]}" | sort -u | wc -l) == n)) || fail "ids repeat: $ids"
for id in "${listed[@]}"; do
  [[ "$id" =~ ^[0-9a-f]{32}$ ]] || fail "not an id: '$id' in $ids"
  http GET "/api/v1/profiles/$id"
  assert_eq 200 "$HTTP_CODE" "a listed id ($id) is a stored profile"
done
if ((n < count)); then # cut: the log says so as well
  [[ "$log_ids" == *,... ]] || fail "the ids were cut (n=$n of $count) but the log line shows no cut: $log_ids"
fi
if [[ "$log_ids" == *,... ]]; then # the log's ids are a prefix of the header's
  assert_contains "$ids," "${log_ids%...}" "the log line's ids begin the header's"
else
  assert_eq "$ids" "$log_ids" "the log line names the ids of the header"
fi
# the API holds the 82 profiles (the count is what was stored, not what was listed)
http GET "/api/v1/profiles?limit=200"
assert_eq 200 "$HTTP_CODE" "the list"
assert_eq 82 "$(jq '.profiles | length' <<<"$HTTP_BODY")" "profiles in the API"
stop_server || fail "server exit"

# --- JSON log ------------------------------------------------------------------------------
start_server --log-format json
http POST /v1development/profiles --data-binary x
assert_eq 415 "$HTTP_CODE" "a form-encoded body (json log)"
http POST /v1development/profiles -H 'Content-Type: application/x-protobuf' --data-binary @"$FIX"
assert_eq 200 "$HTTP_CODE" "the export (json log)"
wait_requests 2
valid_utf8 "$SERVER_LOG" "json"
jq -e . "$SERVER_LOG" >/dev/null || fail "a log line is not JSON: $(head -c 600 "$SERVER_LOG")"
answer=$(jq -r 'select(.msg == "request" and .status == 415) | .answer' "$SERVER_LOG")
assert_contains "$answer" '\x08\x03\x12\x88\x01Content-Type' "the Status bytes, escaped (json)"
# bare last values are the value only (no newline kept from the text line)
samples=$(jq -r 'select(.msg == "profile stored") | .samples' "$SERVER_LOG" | head -n1)
[[ "$samples" =~ ^[0-9]+$ ]] || fail "profile stored samples is '$samples'"
stop_server || fail "server exit"
echo "ok [$E2E_NAME]"
