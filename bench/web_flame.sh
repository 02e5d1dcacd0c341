#!/usr/bin/env bash
# The web page's time from navigation to a drawn flamegraph, in headless chromium, against
# the API's own time for the same answer (the floor, measured in the same run):
#   1. one large profile: pprof/google-pprof_large.cpu (20k stacks);
#   2. a merged selection of 1,000 profiles (pprof/pyroscope_go.cpu.labels.pprof pushed
#      1,000 times as service "bench").
# usage: bench/web_flame.sh [BUILD_DIR] [ROUNDS]   (default: build, 7 rounds; medians printed)
# Needs chromium, node and npm (scripts/install-deps.sh); playwright-core is installed into
# BUILD_DIR/web-node as the browser test does. Writes BUILD_DIR/web-bench/*.png.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
export SPAA_BIN=$build/spaa-relay SPAA_BUILD=$build
ROUNDS=${2:-7}
F=${SPAA_SHARED:-$root/../shared}/fixtures
[[ -f "$F/pprof/google-pprof_large.cpu" ]] || { echo "web_flame: fixtures not found in $F" >&2; exit 2; }
source "$root/tests/e2e/lib.bash"
source "$root/tests/web/install.bash"
web_chromium
web_node_install
start_server

ids() { printf '%s\n' "$HTTP_HEADERS" | sed -n 's/^X-Spaa-Profile-Ids: //Ip' | head -n1; }
http POST '/ingest?name=large.cpu' --data-binary @"$F/pprof/google-pprof_large.cpu"
[[ "$HTTP_CODE" == 200 ]] || fail "push of the large profile: $HTTP_CODE"
LARGE=$(ids)
python3 - "$SERVER_PORT" "$F/pprof/pyroscope_go.cpu.labels.pprof" <<'PY' || fail "pushing 1,000 profiles"
import http.client, sys, threading
port, path = int(sys.argv[1]), sys.argv[2]
body = open(path, "rb").read()
bad = []
def worker(k):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for i in range(k, 1000, 8):
        c.request("POST", "/ingest?name=bench.cpu", body, {"Content-Type": "application/octet-stream"})
        r = c.getresponse()
        r.read()
        if r.status != 200:
            bad.append(r.status)
ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
sys.exit(1 if bad else 0)
PY
n=$(curl -s "$SERVER_URL/api/v1/timeline?service=bench&buckets=1" | jq .profiles)
[[ "$n" == 1000 ]] || fail "the merged selection holds $n profiles, not 1000"

WEB_NODE=$WEB_NODE CHROMIUM=$CHROMIUM SERVER_URL=$SERVER_URL ROUNDS=$ROUNDS OUT=$build/web-bench \
  node "$root/bench/web_flame.mjs" \
  "google-pprof_large.cpu (1 profile)" "#/flame?id=$LARGE" "profiles/$LARGE/flamegraph" \
  "merged selection of 1000 profiles" "#/flame?service=bench" "flamegraph?service=bench"
stop_server
