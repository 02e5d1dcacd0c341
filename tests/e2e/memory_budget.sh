#!/usr/bin/env bash
# Memory of large uploads (a 48 MiB pprof generated here: 1.4 M samples, 38 MB gzip):
#  - one is stored; the server's peak RSS is printed as a ratio to the decompressed size and
#    must stay under 2x that size + 32 MB;
#  - so is that profile as SPAA uploaded to /api/v1/spaa, and a 48 MiB OTLP request of the
#    same kind of profile, under the same bound;
#  - and a Sentry profile chunk of several MB (tests/e2e/gen_sentry.py), and one of 18 MB
#    dense in stacks, under the same bound;
#  - one large OTLP request (eight profiles dense in stacks) is stored a profile at a time,
#    under the same bound, and found already stored when sent again;
#  - three at once under --memory-budget: each answered 200 or 503 with Retry-After (never
#    closed), at least one stored, the peak RSS within the budget plus the three bodies;
#  - four smaller ones at once, refused while their models grow: a whole JSON 503;
#  - RSS levels off as services come (40 services, each its own block dictionary);
#  - RSS after warm-up stays flat over 2,000 more small uploads (no leak per request).
# Labelled slow: not run in the sanitizer pass (AddressSanitizer's RSS means nothing).
source "$(dirname "$0")/lib.bash"

LOAD="$(dirname "$0")/loadclient.py"
BIG="$E2E_TMP/big.pb"
python3 "$(dirname "$0")/gen_pprof.py" "$BIG" 48
gzip -1 -k "$BIG"
dec=$(stat -c %s "$BIG")
rm -f "$BIG"

# one upload
start_server --max-body 64m --max-decompressed 64m --log-level warn
http POST "/ingest?name=big.cpu" --data-binary @"$BIG.gz" -H 'Content-Type: application/octet-stream'
assert_eq 200 "$HTTP_CODE" "a 48 MiB pprof stored"
http GET "/api/v1/profiles?service=big"
assert_contains "$HTTP_BODY" '"service":"big"' "the 48 MiB pprof listed"
hwm=$(vmhwm_kb "$SERVER_PID")
echo "one 48 MiB pprof: peak RSS ${hwm} KiB = $(awk -v h="$hwm" -v d="$dec" 'BEGIN { printf "%.2f", h * 1024 / d }')x the decompressed size (target 2x + 32 MB = $(((dec * 2 / 1024) + 32768)) KiB)"
# the samples are read off the wire one at a time (inflated window by window), summed per stack
# as they are read, and the body is freed before the profile is stored
assert_rss_below "$SERVER_PID" $(((dec * 2 / 1024) + 32768)) "one 48 MiB pprof"
stop_server

# the same profile as SPAA (26 MB of text) uploaded to /api/v1/spaa: stored as it reads back,
# under 2x + 32 MB. The body is freed once read into the model (3.8x before)
SPAA_BIG="$E2E_TMP/big.spaa"
"$SPAA_BIN" convert --from pprof --name big.cpu "$BIG.gz" -o "$SPAA_BIG" || fail "offline convert"
sdec=$(stat -c %s "$SPAA_BIG")
start_server --max-body 64m --max-decompressed 64m --log-level warn
http POST "/api/v1/spaa?service=bigspaa" --data-binary @"$SPAA_BIG" -H 'Content-Type: application/x-ndjson'
assert_eq 200 "$HTTP_CODE" "the 48 MiB pprof's SPAA stored: $HTTP_BODY"
shwm=$(vmhwm_kb "$SERVER_PID")
echo "its SPAA (${sdec} bytes): peak RSS ${shwm} KiB = $(awk -v h="$shwm" -v d="$sdec" 'BEGIN { printf "%.2f", h * 1024 / d }')x its size (target 2x + 32 MB = $(((sdec * 2 / 1024) + 32768)) KiB)"
assert_rss_below "$SERVER_PID" $(((sdec * 2 / 1024) + 32768)) "one 26 MB SPAA upload"
curl -sS -o "$E2E_TMP/got.spaa" "$SERVER_URL/api/v1/profiles/$(json_get "$HTTP_BODY" id)/spaa" ||
  fail "GET the uploaded SPAA"
cmp -s <(tail -n +2 "$SPAA_BIG") <(tail -n +2 "$E2E_TMP/got.spaa") ||
  fail "the uploaded SPAA does not read back as it was sent"
stop_server
rm -f "$SPAA_BIG" "$E2E_TMP/got.spaa"

# one 48 MiB OTLP request carrying the same kind of CPU profile (the Collector's translation
# of a pprof: a profile per sample type, 60 k stacks each): stored whole (both totals), under
# 2x + 32 MB. Each profile's samples are read off the body, and their pages given back before
# its model is stored (2.9x before)
OBIG="$E2E_TMP/big-otlp.pb"
read -r want_count want_cpu < <(python3 "$(dirname "$0")/gen_otlp.py" "$OBIG" 48)
obdec=$(stat -c %s "$OBIG")
start_server --max-body 64m --max-decompressed 64m --log-level warn
http POST /v1development/profiles --data-binary @"$OBIG" -H 'Content-Type: application/x-protobuf'
assert_eq 200 "$HTTP_CODE" "a 48 MiB OTLP request stored"
obhwm=$(vmhwm_kb "$SERVER_PID")
echo "one 48 MiB OTLP request: peak RSS ${obhwm} KiB = $(awk -v h="$obhwm" -v d="$obdec" 'BEGIN { printf "%.2f", h * 1024 / d }')x its size (target 2x + 32 MB = $(((obdec * 2 / 1024) + 32768)) KiB)"
assert_rss_below "$SERVER_PID" $(((obdec * 2 / 1024) + 32768)) "one 48 MiB OTLP request"
http GET "/api/v1/profiles?service=big&source=otlp"
mapfile -t obids < <(grep -o '"id":"[0-9a-f]*"' <<<"$HTTP_BODY" | cut -d'"' -f4)
assert_eq 2 "${#obids[@]}" "the 48 MiB OTLP request: two profiles listed"
got=""
for id in "${obids[@]}"; do
  http GET "/api/v1/profiles/$id/top?limit=1"
  assert_eq 200 "$HTTP_CODE" "top of $id"
  got+="$(grep -o '"total":[0-9]*' <<<"$HTTP_BODY" | head -1 | cut -d: -f2) "
done
assert_eq "$(tr ' ' '\n' <<<"$want_count $want_cpu" | sort -n | xargs)" \
  "$(tr ' ' '\n' <<<"$got" | grep . | sort -n | xargs)" "the 48 MiB OTLP request: both totals whole"
stop_server
rm -f "$OBIG"

# one Sentry profile chunk of 6.5 MB (80,000 samples of 2,000 stacks from 4 threads, as
# sentry-python sends a continuous-profiling chunk): stored whole, under 2x + 32 MB. Its JSON
# is read in place, not as a tree, and its pages given back before the model is made
# (before: a jansson tree of the whole chunk, 14.6x its size)
SENTRY_ENV="$E2E_TMP/big-sentry.env"
read -r s_samples _ < <(python3 "$(dirname "$0")/gen_sentry.py" "$SENTRY_ENV" v2 80000 2000 2000)
sdec=$(stat -c %s "$SENTRY_ENV")
start_server --max-body 64m --max-decompressed 64m --log-level warn
http POST "/api/7/envelope/?sentry_key=k" --data-binary @"$SENTRY_ENV"
assert_eq 200 "$HTTP_CODE" "a $sdec-byte Sentry chunk"
assert_contains "$HTTP_BODY" '"stored":true' "the Sentry chunk stored"
shwm=$(vmhwm_kb "$SERVER_PID")
echo "one Sentry chunk ($sdec bytes): peak RSS ${shwm} KiB = $(awk -v h="$shwm" -v d="$sdec" 'BEGIN { printf "%.2f", h * 1024 / d }')x its size (target 2x + 32 MB = $(((sdec * 2 / 1024) + 32768)) KiB)"
assert_rss_below "$SERVER_PID" $(((sdec * 2 / 1024) + 32768)) "one Sentry chunk"
http GET "/api/v1/profiles?source=sentry"
assert_contains "$HTTP_BODY" "\"samples\":$s_samples" "the Sentry chunk: every sample stored"
# a model this large gives its sample records to the store once prepared: that must not
# cost the paths that store a model again or find it stored (another project: a fresh id
# keeping the chunk's; the same project: a duplicate)
http POST "/api/7/envelope/?sentry_key=k" --data-binary @"$SENTRY_ENV"
assert_eq 200 "$HTTP_CODE" "the Sentry chunk sent again ($HTTP_BODY)"
assert_eq "true true" "$(jq -r '.profiles[0] | "\(.stored) \(.duplicate)"' <<<"$HTTP_BODY")" \
  "the Sentry chunk sent again: already stored"
http POST "/api/8/envelope/?sentry_key=k" --data-binary @"$SENTRY_ENV"
assert_eq 200 "$HTTP_CODE" "the Sentry chunk sent to project 8 ($HTTP_BODY)"
id8=$(jq -r '.profiles[0].id' <<<"$HTTP_BODY")
http GET "/api/v1/profiles/$id8"
assert_eq "8 $s_samples true" "$(jq -r '"\(.service) \(.samples) \(.attrs.source_profile_id != null)"' \
  <<<"$HTTP_BODY")" "project 8: its own profile, every sample stored"
stop_server
rm -f "$SENTRY_ENV"

# a Sentry chunk dense in stacks (130 k samples over 60 k stacks of 20 k frames: the shape of
# a tester's 17.7 MB chunk), under the same bound: its model (3x its JSON) lives beside the
# body while it is converted, beside the preparation until the store takes its records, and
# the block is built without the model's samples and stacks or the preparation's frame lists
read -r d_samples _ < <(python3 "$(dirname "$0")/gen_sentry.py" "$SENTRY_ENV" v2 130000 60000 20000)
ddec=$(stat -c %s "$SENTRY_ENV")
start_server --max-body 64m --max-decompressed 64m --log-level warn
http POST "/api/7/envelope/?sentry_key=k" --data-binary @"$SENTRY_ENV"
assert_eq 200 "$HTTP_CODE" "a $ddec-byte Sentry chunk of 60 k stacks"
dhwm=$(vmhwm_kb "$SERVER_PID")
echo "one Sentry chunk of 60 k stacks ($ddec bytes): peak RSS ${dhwm} KiB = $(awk -v h="$dhwm" -v d="$ddec" 'BEGIN { printf "%.2f", h * 1024 / d }')x its size (target 2x + 32 MB = $(((ddec * 2 / 1024) + 32768)) KiB)"
assert_rss_below "$SERVER_PID" $(((ddec * 2 / 1024) + 32768)) "one Sentry chunk of 60 k stacks"
http GET "/api/v1/profiles?source=sentry"
assert_contains "$HTTP_BODY" "\"samples\":$d_samples" "the dense chunk: every sample stored"
stop_server
rm -f "$SENTRY_ENV"

# one large OTLP request (bench_otlp_ingest's synthetic one: 20 MB, eight profiles of about
# 60 k stacks each, the models 100 MB apiece): its profiles are stored while it is converted,
# a model at a time, its samples read off the wire; the same request sent again (a retry) is
# found already stored
OTLP="$E2E_TMP/otlp.bin"
"$SPAA_BUILD/bench/bench_otlp_ingest" "${SPAA_SHARED:-}" write "$OTLP"
odec=$(stat -c %s "$OTLP")
start_server --max-body 64m --max-decompressed 64m
otlp_ids() {
  curl -sS -o "$E2E_TMP/otlp.out" -D "$E2E_TMP/otlp.hdr" -w '%{http_code}' \
    -H 'Content-Type: application/x-protobuf' --data-binary @"$OTLP" \
    "$SERVER_URL/v1development/profiles" >"$E2E_TMP/otlp.code"
  tr -d '\r' <"$E2E_TMP/otlp.hdr" | grep -i '^X-Spaa-Profile-Ids:' | sed 's/^[^:]*: *//'
}
ids1=$(otlp_ids)
assert_eq 200 "$(cat "$E2E_TMP/otlp.code")" "the synthetic OTLP request stored"
assert_eq 0 "$(stat -c %s "$E2E_TMP/otlp.out")" "the synthetic OTLP request: full success"
[[ "$ids1" =~ ^[0-9a-f]{32}(,[0-9a-f]{32})+$ ]] || fail "no profile ids answered ('$ids1')"
assert_eq 8 "$(grep -c 'msg="profile stored"' "$SERVER_LOG")" "eight profiles stored"
ohwm=$(vmhwm_kb "$SERVER_PID")
echo "one synthetic OTLP request ($odec bytes): peak RSS ${ohwm} KiB = $(awk -v h="$ohwm" -v d="$odec" 'BEGIN { printf "%.2f", h * 1024 / d }')x its size (target 2x + 32 MB = $(((odec * 2 / 1024) + 32768)) KiB; all eight models held at once: about 57x)"
# a model at a time, its samples read off the body's file and given back as read, the
# content-id cache at 4 MiB: 3.6x here (12.8x with the body in memory, 57x with every model
# held until the request is stored)
assert_rss_below "$SERVER_PID" $(((odec * 2 / 1024) + 32768)) "one synthetic OTLP request"
ids2=$(otlp_ids)
assert_eq 200 "$(cat "$E2E_TMP/otlp.code")" "the synthetic OTLP request sent again"
assert_eq "$ids1" "$ids2" "the request sent again: the same ids"
assert_eq 8 "$(grep -c 'msg="profile already stored"' "$SERVER_LOG")" \
  "the request sent again: its profiles found already stored"
http GET "/api/v1/profiles?source=otlp&limit=100"
assert_eq 8 "$(grep -o '"id":"' <<<"$HTTP_BODY" | wc -l)" "eight OTLP profiles listed"
# the request's body was read from a file (it passes SPAA_HTTP_FILE_BODY), its pages given
# back as read and read again: what was stored is what `convert` makes of the same bytes
for id in ${ids1//,/ }; do
  curl -sS "$SERVER_URL/api/v1/profiles/$id/spaa" | sha256sum | cut -d' ' -f1
done | sort >"$E2E_TMP/otlp-stored.sums"
stop_server
# `convert` writes the request's profiles as it converts them: one model at a time there too
# (10.7x; all eight held at once, before: 31x)
cpeak=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
  "$SPAA_BIN" convert --from otlp "$OTLP" -o "$E2E_TMP/otlp-conv") ||
  fail "convert of the synthetic OTLP request"
assert_eq 8 "$(ls "$E2E_TMP/otlp-conv" | wc -l)" "convert: eight SPAA files"
(cd "$E2E_TMP/otlp-conv" && sha256sum -- * | cut -d' ' -f1 | sort) >"$E2E_TMP/otlp-conv.sums"
assert_eq "$(cat "$E2E_TMP/otlp-conv.sums")" "$(cat "$E2E_TMP/otlp-stored.sums")" \
  "the eight stored profiles read back as \`convert\` writes them"
echo "convert of the synthetic OTLP request: peak RSS ${cpeak} KiB = $(awk -v h="$cpeak" -v d="$odec" 'BEGIN { printf "%.2f", h * 1024 / d }')x its size"
((cpeak < odec * 13 / 1024)) || fail "convert of the synthetic OTLP request: peak ${cpeak} KiB"
rm -rf "$OTLP" "$E2E_TMP/otlp-conv"

# three at once within a budget that holds one conversion (a pprof route charges 2x the size
# its gzip trailer gives: 96 MiB, with the 38 MB body charged on arrival)
budget_mib=200
start_server --max-body 64m --max-decompressed 64m --memory-budget ${budget_mib}m
pids=()
for i in 1 2 3; do
  curl -sS -o "$E2E_TMP/out$i" -D "$E2E_TMP/hdr$i" -w '%{http_code}' --data-binary @"$BIG.gz" \
    "$SERVER_URL/ingest?name=big$i.cpu" >"$E2E_TMP/code$i" 2>"$E2E_TMP/err$i" &
  pids+=($!)
done
wait "${pids[@]}"
ok=0
for i in 1 2 3; do
  code=$(cat "$E2E_TMP/code$i")
  case "$code" in
  200) ok=$((ok + 1)) ;;
  503) assert_contains "$(tr -d '\r' <"$E2E_TMP/hdr$i")" "Retry-After: 1" "503 $i: Retry-After"
       assert_contains "$(cat "$E2E_TMP/out$i")" "memory budget" "503 $i: names the budget" ;;
  *) fail "upload $i of 3: status '$code' ($(cat "$E2E_TMP/err$i"))" ;;
  esac
done
echo "three at once under a ${budget_mib} MiB budget: $ok stored, $((3 - ok)) answered 503; peak RSS $(vmhwm_kb "$SERVER_PID") KiB"
((ok >= 1)) || fail "none of the three uploads was stored"
assert_rss_below "$SERVER_PID" $(((budget_mib + 3 * 40 + 64) * 1024)) "three 48 MiB pprofs at once"
stop_server

# refused while their models grow: four 4 MiB pprofs at once under 64 MiB are admitted, then
# the budget refuses the models of some; those get a whole JSON 503 with Retry-After (the
# answer was built through the refusing meter: a 500 with its JSON cut short), on /ingest and
# on the Collector's /v1/pprof alike
python3 "$(dirname "$0")/gen_pprof.py" "$E2E_TMP/small.pb" 4 7 >/dev/null
gzip -1 "$E2E_TMP/small.pb"
start_server --memory-budget 64m --log-level warn
for path in "/ingest?name=grow%d.cpu" "/v1/pprof?service=grow%d"; do
  pids=()
  for i in 1 2 3 4; do
    # shellcheck disable=SC2059
    curl -sS -o "$E2E_TMP/gout$i" -D "$E2E_TMP/ghdr$i" -w '%{http_code}' \
      --data-binary @"$E2E_TMP/small.pb.gz" "$SERVER_URL$(printf "$path" "$i")" \
      >"$E2E_TMP/gcode$i" 2>"$E2E_TMP/gerr$i" &
    pids+=($!)
  done
  wait "${pids[@]}"
  for i in 1 2 3 4; do
    code=$(cat "$E2E_TMP/gcode$i")
    case "$code" in
    200 | 204) ;;
    503) assert_contains "$(tr -d '\r' <"$E2E_TMP/ghdr$i")" "Retry-After: 1" "$path $i: Retry-After"
         assert_eq busy "$(jq -r .error "$E2E_TMP/gout$i")" "$path $i: a whole JSON answer" ;;
    *) fail "$path, upload $i of 4: status '$code' ($(cat "$E2E_TMP/gout$i" "$E2E_TMP/gerr$i"))" ;;
    esac
  done
done
stop_server

# many services: the writer keeps a dictionary per service, bounded in count and bytes, so
# RSS levels off as services come (each one used to add ~10 MiB)
HEAP=${SPAA_SHARED:-}/fixtures/pprof/pyroscope_heap
if [[ -f "$HEAP" ]] && ! e2e_asan; then
  start_server --log-level warn
  for i in $(seq 1 40); do
    code=$(curl -sS -o /dev/null -w '%{http_code}' --data-binary @"$HEAP" "$SERVER_URL/ingest?name=svc$i.heap")
    [[ "$code" == 200 ]] || fail "service $i: upload answered $code"
    ((i == 10)) && rss10=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status")
  done
  rss40=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status")
  echo "RSS after 10 services ${rss10} KiB, after 40 services ${rss40} KiB"
  ((rss40 - rss10 < 48 * 1024)) || fail "RSS grew by $((rss40 - rss10)) KiB over 30 more services"
  stop_server
else
  echo "many services: skipped (no shared fixtures, or a sanitizer build)"
fi

# no leak per request: RSS flat over 2,000 small uploads after a warm-up
start_server --log-level warn
SMALL="$(dirname "$0")/../data/spec_examples.spaa"
python3 "$LOAD" post "$SERVER_PORT" 8 2 /api/v1/spaa "$SMALL" >/dev/null
rss0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status")
n=0
while ((n < 2000)); do
  out=$(python3 "$LOAD" post "$SERVER_PORT" 8 1 /api/v1/spaa "$SMALL")
  n=$((n + $(json_get "$out" requests)))
done
rss1=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status")
echo "RSS over $n small uploads after warm-up: ${rss0} KiB -> ${rss1} KiB"
if ! e2e_asan; then
  ((rss1 - rss0 < 16384)) || fail "RSS grew by $((rss1 - rss0)) KiB over $n small uploads"
fi
stop_server
echo "memory_budget: ok"
