#!/usr/bin/env bash
# The web page in Debian's chromium (playwright-core, pinned in tests/web/package.json and
# installed under the build dir): a real server holding profiles from each dialect (pprof
# push, Sentry envelope, OTLP/HTTP; 60 SPAA uploads for paging), walked view by view by
# tests/web/walk.mjs (services, profiles, strip, paging, flamegraph, zoom, search, top,
# sandwich, exports, diffs, narrow window, keyboard, deep links); then a relay with a read
# token (the prompt, downloads). Fails on any console error or failed request.
# Screenshots: BUILD/web-screenshots/.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/../web/install.bash"
F=${SPAA_SHARED:-}/fixtures
if [[ ! -d "$F/pprof" || ! -d "$F/sentry" || ! -d "$F/otlp" ]]; then
  echo "skip [$E2E_NAME]: shared fixtures not found"
  exit 0
fi
web_chromium
web_node_install
SHOTS=${SPAA_BUILD:-$E2E_TMP}/web-screenshots
export WEB_NODE CHROMIUM SHOTS

ids_header() { printf '%s\n' "$HTTP_HEADERS" | sed -n 's/^X-Spaa-Profile-Ids: //Ip' | head -n1; }
# post PATH FILE [curl args]: store a fixture, print the first stored id
post() {
  local path=$1 file=$2
  shift 2
  http POST "$path" --data-binary @"$file" "$@"
  [[ "$HTTP_CODE" == 20? ]] || fail "POST $path $(basename "$file"): $HTTP_CODE $HTTP_BODY"
  local ids
  ids=$(ids_header)
  [[ -n "$ids" ]] || fail "POST $path: no X-Spaa-Profile-Ids"
  printf '%s\n' "${ids%%,*}"
}

start_server
# the older upload first: the diff of two picked profiles takes the older as its base
LARGE_ID=$(post '/ingest?name=shop.cpu%7Benv%3Dprod%7D' "$F/pprof/google-pprof_large.cpu")
SMALL_ID=$(post '/ingest?name=shop.cpu%7Benv%3Ddev%7D' "$F/pprof/pyroscope_go.cpu.labels.pprof")
SENTRY_ID=$(post /api/42/envelope/ "$F/sentry/constructed_envelope_transaction_profile_v1.envelope" -H 'Content-Type:')
OTLP_ID=$(post /v1development/profiles "$F/otlp/v1dev_01_cpu_basic.bin" -H 'Content-Type: application/x-protobuf')
# 60 small SPAA profiles of service "paged": more than one page of the list (50)
python3 - "$SERVER_PORT" <<'PY' || fail "posting 60 SPAA profiles"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
for i in range(60):
    body = "\n".join([
        '{"type":"header","format":"spaa","version":"1.0","stack_id_mode":"local","source_tool":"perf","frame_order":"leaf_to_root",'
        '"events":[{"name":"cycles","kind":"hardware","sampling":{"mode":"period","primary_metric":"period"}}],'
        '"time_range":{"start":%d,"end":%d,"unit":"seconds"}}' % (1700000000 + 60 * i, 1700000060 + 60 * i),
        '{"type":"dso","id":1,"name":"/bin/app"}',
        '{"type":"frame","id":1,"func":"work","dso":1,"kind":"user"}',
        '{"type":"frame","id":2,"func":"main","dso":1,"kind":"user"}',
        '{"type":"stack","id":"a","frames":[1,2],"context":{"event":"cycles"},"weights":[{"metric":"period","value":%d}]}' % (i + 1),
    ]) + "\n"
    c.request("POST", "/api/v1/spaa?service=paged", body)
    r = c.getresponse()
    r.read()
    if r.status != 200:
        sys.exit(1)
PY
export LARGE_ID SMALL_ID SENTRY_ID OTLP_ID
SERVER_URL=$SERVER_URL node "$WEB_SRC/walk.mjs" open || fail "the open relay's walk failed"
stop_server || fail "the server did not stop cleanly"

TOKEN=web-read-token-5e1f
start_server --read-token "$TOKEN"
post '/ingest?name=shop.cpu%7Benv%3Dprod%7D' "$F/pprof/pyroscope_go.cpu.labels.pprof" >/dev/null
SERVER_URL=$SERVER_URL TOKEN=$TOKEN node "$WEB_SRC/walk.mjs" token || fail "the read-token walk failed"
stop_server || fail "the server did not stop cleanly"
echo "ok [$E2E_NAME]: screenshots in $SHOTS"
