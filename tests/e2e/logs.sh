#!/usr/bin/env bash
# Logs an operator can use: log_file + log_format json (every line a JSON object jq reads),
# a request line per request with route, status and the stored ids, a rejection at warn with
# what the client was told, "profile stored" counting the samples the API reports, SIGHUP
# reopening a rotated log file and reloading keys and tokens from the config file.
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:-}/fixtures/pprof/google-pprof_sample.cpu"
if [[ ! -f "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures ($FIX)"
  exit 77
fi
LOG="$E2E_TMP/relay.log"
CONF="$E2E_TMP/relay.conf"
printf 'read_token = first\ningest_token = in\nlog_format = json\n' >"$CONF"
# started by hand: lib.bash's start_server waits for the line on stderr, which goes to the file
"$SPAA_BIN" serve --listen 127.0.0.1:0 --data-dir "$E2E_TMP/data" --config "$CONF" \
  --log-file "$LOG" 2>"$E2E_TMP/stderr" &
SERVER_PID=$!
E2E_PIDS+=("$SERVER_PID")
for ((i = 0; i < 200; i++)); do
  line=$(grep -m1 -o 'listening on [^" ]*' "$LOG" 2>/dev/null || true)
  [[ -n "$line" ]] && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "the server exited: $(cat "$E2E_TMP/stderr")"
  sleep 0.1
done
[[ -n "$line" ]] || fail "no 'listening on' line in the log file"
SERVER_URL="http://127.0.0.1:${line##*:}"
[[ ! -s "$E2E_TMP/stderr" ]] || fail "lines on stderr despite log_file: $(head -c 300 "$E2E_TMP/stderr")"
# the new database's schema made by its migrations: one info line, versions and time taken
mig=$(jq -c 'select(.msg == "schema migrated")' "$LOG")
[[ $(grep -c . <<<"$mig") == 1 ]] || fail "want one 'schema migrated' line, got: $mig"
[[ $(jq -r '[.level, .from, (.to > 0), (.took_ms | type == "number" and . >= 0)] | map(tostring) | join(" ")' <<<"$mig") == "info 0 true true" ]] ||
  fail "the 'schema migrated' line: $mig"

http POST "/ingest?name=logs.cpu&format=pprof" -H 'Authorization: Bearer in' --data-binary @"$FIX"
assert_eq 200 "$HTTP_CODE" "push: $HTTP_BODY"
id=$(grep -i '^x-spaa-profile-ids:' <<<"$HTTP_HEADERS" | tr -d ' \r' | cut -d: -f2)
http POST "/ingest?name=logs.cpu&format=pprof" -H 'Authorization: Bearer in' --data-binary 'not a profile'
assert_eq 400 "$HTTP_CODE" "a bad upload: $HTTP_BODY"
http GET "/api/v1/profiles/$id" -H 'Authorization: Bearer first'
assert_eq 200 "$HTTP_CODE" "meta"
samples=$(printf '%s' "$HTTP_BODY" | jq .samples)
meta_len=$(printf '%s' "$HTTP_BODY" | wc -c)

for ((i = 0; i < 50; i++)); do
  [[ $(grep -c '"msg":"request"' "$LOG" 2>/dev/null) -ge 3 ]] && break
  sleep 0.1
done
jq -e . "$LOG" >/dev/null || fail "a log line is not JSON: $(head -c 600 "$LOG")"
ok=$(jq -c 'select(.msg == "request" and .status == 200 and .route == "/ingest")' "$LOG")
[[ -n "$ok" ]] || fail "no request line for the upload: $(cat "$LOG")"
assert_eq "$id" "$(jq -r .ids <<<"$ok")" "the request line names the stored id"
mk=$(jq -r .models_kib <<<"$ok")
[[ "$mk" =~ ^[0-9]+$ ]] && ((mk > 0)) || fail "the request line says what its models held: $ok"
rej=$(jq -c 'select(.msg == "request" and .status == 400)' "$LOG")
assert_eq warn "$(jq -r .level <<<"$rej")" "a rejection is logged at warn"
assert_contains "$(jq -r .answer <<<"$rej")" "error" "with what the client was told"
get=$(jq -c 'select(.msg == "request" and .method == "GET")' "$LOG")
assert_eq "0 $meta_len" "$(jq -r '"\(.bytes) \(.sent)"' <<<"$get")" "a GET's line: no body received, the answer's size sent"
stored=$(jq -r 'select(.msg == "profile stored") | .samples' "$LOG")
assert_eq "$samples" "$stored" "profile stored counts the samples the API reports"

# a value a client chose cannot start fields of its own: a Content-Type and a Sentry item's
# platform that close the quote and write level= and msg= stay inside their value
forged='x" level=error msg="FORGED'
otlp=$SPAA_SHARED/fixtures/otlp/pyroscope_otel-ebpf-profile.pb.bin
http POST /v1development/profiles -H "Content-Type: text/$forged" -H 'Authorization: Bearer in' \
  --data-binary @"$otlp"
assert_eq 415 "$HTTP_CODE" "an OTLP upload with a forged Content-Type"
sed "s/\"type\":\"profile_chunk\",\"platform\":\"cocoa\"/\"type\":\"profile_chunk\",\"platform\":\"${forged//\"/\\\\\"}\"/" \
  "$SPAA_SHARED/fixtures/sentry/constructed_envelope_profile_chunk_v2.envelope" >"$E2E_TMP/forged.envelope"
grep -q FORGED "$E2E_TMP/forged.envelope" || fail "the forged envelope was not made"
http POST "/api/7/envelope/?sentry_key=k" --data-binary @"$E2E_TMP/forged.envelope"
python3 - "$LOG" <<'PY' || fail "a log line with a field of the client's making"
import json, sys
def no_dups(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate keys %s" % keys)
    return dict(pairs)
seen = 0
for n, line in enumerate(open(sys.argv[1]), 1):
    o = json.loads(line, object_pairs_hook=no_dups)
    if "FORGED" in line:
        seen += 1
        if o.get("msg", "").startswith("FORGED") or o.get("level") == "error":
            sys.exit("line %d: %s" % (n, line.strip()))
if seen < 2:
    sys.exit("the forged values were not logged (%d lines)" % seen)
PY

# rotate: the file is moved away, SIGHUP, the next lines go to a new file
mv "$LOG" "$LOG.1"
printf 'read_token = second\ningest_token = in\nlog_format = json\n' >"$CONF"
kill -HUP "$SERVER_PID"
wait_logged "$LOG" 'configuration reloaded' "the reopened log after SIGHUP"
kill -0 "$SERVER_PID" || fail "SIGHUP stopped the server"
http GET "/api/v1/profiles/$id" -H 'Authorization: Bearer first'
assert_eq 401 "$HTTP_CODE" "the old read token after the reload"
http GET "/api/v1/profiles/$id" -H 'Authorization: Bearer second'
assert_eq 200 "$HTTP_CODE" "the new read token after the reload"
jq -e . "$LOG" >/dev/null || fail "the reopened log is not JSON lines"
# a config the reload cannot read keeps the running one
printf 'read_token = third\nno_such_key = 1\n' >"$CONF"
kill -HUP "$SERVER_PID"
wait_logged "$LOG" 'configuration not reloaded' "a bad config on SIGHUP"
http GET "/api/v1/profiles/$id" -H 'Authorization: Bearer second'
assert_eq 200 "$HTTP_CODE" "the running configuration kept"
stop_server || fail "server exit"
echo "ok [$E2E_NAME]"
