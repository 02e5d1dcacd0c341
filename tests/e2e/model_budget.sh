#!/usr/bin/env bash
# A request whose bytes do not bound what it expands to: an OTLP request of 2.3 MB names one
# stack of 10,000 frames from 100,000 samples, each with an attribute of its own, so that
# its SPAA model would be 10^9 frame references (8 GB); one of 6 MB names 1,000 common
# attributes from each of 3,000 samples, 3 million keys in stack contexts (JSON values).
# The models and their JSON values are metered as they grow against the memory budget
# (server/budget.h):
#  - alone, the request passes what one request may hold (the budget, 256 MiB here): 413
#    saying so, over HTTP and gRPC, the server's peak memory bounded by it, nothing stored,
#    the budget given back;
#  - while another request holds part of the budget: 503 with Retry-After (retry later);
#  - a small request of the same shape is stored as before;
#  - reads are metered too: a view of a stored profile builds its model against the budget,
#    and one that finds the budget held by others gets 503 with Retry-After.
source "$(dirname "$0")/lib.bash"

PY=/usr/bin/python3
GEN="$(dirname "$0")/gen_otlp_expand.py"
CLIENT="$(dirname "$0")/../grpc/grpc_client.py"
BIG="$E2E_TMP/expand.bin"
"$PY" "$GEN" "$BIG" 10000 100000
"$PY" "$GEN" "$E2E_TMP/attrs.bin" 1 3000 1000
"$PY" "$GEN" "$E2E_TMP/small.bin" 50 40 3
budget_mib=256

post() { # FILE: POST it as OTLP/HTTP protobuf (sets HTTP_CODE, HTTP_BODY, HTTP_HEADERS)
  http POST /v1development/profiles -H 'Content-Type: application/x-protobuf' \
    --data-binary @"$1"
}
budget_used() {
  curl -sS "$SERVER_URL/metrics" | awk '/^spaa_relay_memory_budget_used_bytes / { print $2 }'
}
busy_count() { # requests refused for want of budget
  curl -sS "$SERVER_URL/metrics" |
    awk '/^spaa_relay_requests_busy_total\{reason="memory_budget"\}/ { print $2 }'
}
stored() {
  http GET "/api/v1/profiles?limit=10"
  grep -o '"id":"' <<<"$HTTP_BODY" | wc -l
}

hold() { # BYTES SECONDS: a body declared at BYTES is charged when its head arrives, then stalls
  "$PY" - "$SERVER_PORT" "$1" "$2" <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /v1development/profiles HTTP/1.1\r\nHost: x\r\n"
          b"Content-Type: application/x-protobuf\r\n"
          b"Content-Length: %d\r\n\r\nab" % int(sys.argv[2]))
time.sleep(float(sys.argv[3]))
EOF
  holder=$!
  E2E_PIDS+=("$holder")
  for ((i = 0; i < 50; i++)); do
    (($(budget_used) >= $1)) && break
    sleep 0.1
  done
  (($(budget_used) >= $1)) || fail "the held body of $1 bytes was not charged"
}
released() { # the holder gone, its charge given back
  kill "$holder" 2>/dev/null || true
  wait "$holder" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    [[ "$(budget_used)" == 0 ]] && break
    sleep 0.1
  done
  assert_eq 0 "$(budget_used)" "the held body's charge given back"
}

start_server --memory-budget ${budget_mib}m --log-level warn
idle=$(vmhwm_kb "$SERVER_PID")

# --- alone: past the whole budget, 413 --------------------------------------------------------
t0=$(date +%s%N)
post "$BIG"
ms=$((($(date +%s%N) - t0) / 1000000))
assert_eq 413 "$HTTP_CODE" "the expanding request"
assert_contains "$HTTP_BODY" \
  "more than ${budget_mib} MiB in memory once expanded, the most one request may hold" \
  "the answer names the ceiling"
echo "the expanding request (2.3 MB): 413 after ${ms} ms," \
  "peak RSS $(vmhwm_kb "$SERVER_PID") KiB (idle ${idle} KiB)"
assert_rss_below "$SERVER_PID" $((idle + (budget_mib + 64) * 1024)) "the expanding request"
assert_eq 0 "$(budget_used)" "the budget given back"
assert_eq 0 "$(stored)" "nothing stored"
http GET /healthz
assert_eq 200 "$HTTP_CODE" "healthz after the refusal"

# the same for the attributes: the contexts' JSON values are what passes the ceiling
post "$E2E_TMP/attrs.bin"
assert_eq 413 "$HTTP_CODE" "the request of many attributes"
assert_contains "$HTTP_BODY" "the most one request may hold" "its answer names the ceiling"
echo "the request of many attributes (6 MB): 413, peak RSS $(vmhwm_kb "$SERVER_PID") KiB"
assert_rss_below "$SERVER_PID" $((idle + (budget_mib + 64) * 1024)) "the request of many attributes"
assert_eq 0 "$(budget_used)" "the budget given back after it"
assert_eq 0 "$(stored)" "nothing stored"

# --- the same over gRPC ------------------------------------------------------------------------
if "$PY" -c 'import grpc' 2>/dev/null; then
  out=$("$PY" "$CLIENT" export "$(grpc_port)" "$BIG")
  code=$("$PY" -c 'import json, sys; print(json.loads(sys.argv[1])["code"])' "$out")
  [[ "$code" != OK ]] || fail "the expanding request over gRPC was accepted: $out"
  assert_contains "$out" "the most one request may hold" "gRPC: the status names the ceiling"
  echo "over gRPC: $code"
  assert_eq 0 "$(budget_used)" "the budget given back after gRPC"
else
  fail "python3-grpcio is needed (scripts/install-deps.sh)"
fi

# --- while another request holds part of the budget: 503, retry later --------------------------
hold $((48 << 20)) 8 # a body of 48 MiB, charged when its head arrives, then stalled
post "$BIG"
assert_eq 503 "$HTTP_CODE" "the expanding request beside a held budget"
assert_contains "$HTTP_HEADERS" "Retry-After:" "503 with Retry-After"
assert_contains "$HTTP_BODY" "held by others" "the answer says the budget is held"
assert_eq 1 "$(busy_count)" "the refusal counted with the budget's"
released

# --- a small request of the same shape is stored -----------------------------------------------
post "$E2E_TMP/small.bin"
assert_eq 200 "$HTTP_CODE" "a small request of the same shape"
assert_eq 1 "$(stored)" "its profile stored"
assert_eq 0 "$(budget_used)" "nothing held after"
stop_server

# --- reads: the model of a stored profile is built against the budget -------------------------
"$PY" "$GEN" "$E2E_TMP/mid.bin" 100 2000 # 2,000 stacks of 100 frames: about 3 MiB of model
start_server --memory-budget 24m --workers 8 --log-level info
post "$E2E_TMP/mid.bin"
assert_eq 200 "$HTTP_CODE" "the profile to read"
http GET "/api/v1/profiles?limit=1"
id=$(grep -o '"id":"[^"]*"' <<<"$HTTP_BODY" | head -1 | cut -d'"' -f4)
view=/api/v1/profiles/$id/flamegraph
http GET "$view"
assert_eq 200 "$HTTP_CODE" "the flamegraph"
kib=$(grep -F "path=\"$view\"" "$SERVER_LOG" | grep -o 'models_kib=[0-9]*' | tail -1 | cut -d= -f2)
((${kib:-0} > 1024)) || fail "the flamegraph's model was not metered (models_kib=${kib:-none})"
echo "the flamegraph of a stored profile: its model held ${kib} KiB at most"
assert_eq 0 "$(budget_used)" "the read's charge given back"
# the merged views: the scan's sums, the sets and (pprof) the model and its maps are metered
for merged in /api/v1/pprof /api/v1/flamegraph; do
  http GET "$merged"
  assert_eq 200 "$HTTP_CODE" "merged $merged"
  kib=$(grep -F "path=\"$merged\"" "$SERVER_LOG" | grep -o 'models_kib=[0-9]*' | tail -1 | cut -d= -f2)
  ((${kib:-0} > 256)) || fail "merged $merged was not metered (models_kib=${kib:-none})"
  echo "merged $merged: ${kib} KiB at most"
done
assert_eq 0 "$(budget_used)" "the merged reads' charges given back"
# 22 of the 24 MiB held by a body: the view's model cannot grow, 503 after a short wait
hold $((22 << 20)) 3
http GET "$view"
assert_eq 503 "$HTTP_CODE" "the flamegraph beside a held budget"
assert_contains "$HTTP_HEADERS" "Retry-After:" "503 with Retry-After"
assert_contains "$HTTP_BODY" "the profiles this request reads grew to" "the answer says why"
assert_contains "$HTTP_BODY" "held by others" "the answer says the budget is held"
assert_eq 1 "$(busy_count)" "the refused read counted with the budget's refusals"
http GET /api/v1/pprof
assert_eq 503 "$HTTP_CODE" "the merged pprof beside a held budget"
assert_eq 2 "$(busy_count)" "the refused merged read counted"
http GET "/api/v1/profiles?limit=1" # a listing builds no model: answered as before
assert_eq 200 "$HTTP_CODE" "a listing beside a held budget"
released
http GET "$view"
assert_eq 200 "$HTTP_CODE" "the flamegraph once the budget is free"
# 64 reads at once on 8 workers, each asking for more than half the budget as its model grows:
# each is answered 200 or 503 with Retry-After, and the budget is given back
out=$("$PY" - "$SERVER_PORT" "$view" <<'EOF'
import http.client, sys, threading
from collections import Counter
port, path, seen, lock = int(sys.argv[1]), sys.argv[2], Counter(), threading.Lock()
def one():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", path)
    r = c.getresponse()
    r.read()
    key = "%d%s" % (r.status, "+retry" if r.getheader("Retry-After") else "")
    with lock:
        seen[key] += 1
ts = [threading.Thread(target=one) for _ in range(64)]
for t in ts: t.start()
for t in ts: t.join()
print(" ".join("%s=%d" % kv for kv in sorted(seen.items())))
EOF
)
echo "64 flamegraphs at once under a 24 MiB budget: $out"
[[ "$out" =~ ^(200=[0-9]+)( 503\+retry=[0-9]+)?$ ]] || fail "reads at once answered: $out"
(($(grep -o '200=[0-9]*' <<<"$out" | cut -d= -f2) + $(grep -o 'retry=[0-9]*' <<<"$out" |
  cut -d= -f2 || echo 0) == 64)) || fail "not every read was answered: $out"
assert_eq 0 "$(budget_used)" "the reads' charges given back"
stop_server
echo "ok [$E2E_NAME]"
