#!/usr/bin/env bash
# The query API's views over a real server and store, with profiles from all four ingest
# paths (Sentry envelope, OTLP/HTTP, Pyroscope pprof push, SPAA): X-Spaa-Profile-Ids on
# every upload; /pprof read by go tool pprof -top and -raw over HTTP with totals equal to the
# stored ones, and re-ingested with the same stack ids and totals; /collapsed, /top,
# /flamegraph, /speedscope, /summary of each; merged views, diff, discovery; bad parameters.
source "$(dirname "$0")/lib.bash"
F=${SPAA_SHARED:-}/fixtures
if [[ ! -d "$F/pprof" || ! -d "$F/sentry" || ! -d "$F/otlp" ]]; then
  echo "skip [$E2E_NAME]: shared fixtures not found"
  exit 0
fi
command -v jq >/dev/null || fail "jq is required"
start_server

ids_header() { printf '%s\n' "$HTTP_HEADERS" | sed -n 's/^X-Spaa-Profile-Ids: //Ip' | head -n1; }

# --- one upload per ingest path, each answer naming what it stored --------------------------
http POST '/ingest?name=shop.cpu%7Benv%3Dprod%7D' --data-binary @"$F/pprof/google-pprof_large.cpu"
assert_eq 200 "$HTTP_CODE" "pprof push"
PPROF=$(ids_header)
[[ "$PPROF" =~ ^[0-9a-f]{32}$ ]] || fail "pprof push: X-Spaa-Profile-Ids '$PPROF'"
http POST '/ingest?name=shop.cpu%7Benv%3Ddev%7D' --data-binary @"$F/pprof/pyroscope_go.cpu.labels.pprof"
SMALL=$(ids_header)
http POST /api/42/envelope/ -H 'Content-Type:' \
  --data-binary @"$F/sentry/constructed_envelope_transaction_profile_v1.envelope"
assert_eq 200 "$HTTP_CODE" "sentry envelope ($HTTP_BODY)"
SENTRY=$(ids_header)
[[ -n "$SENTRY" ]] || fail "sentry: no X-Spaa-Profile-Ids in $HTTP_HEADERS"
http POST /v1development/profiles -H 'Content-Type: application/x-protobuf' \
  --data-binary @"$F/otlp/v1dev_01_cpu_basic.bin"
assert_eq 200 "$HTTP_CODE" "otlp export"
OTLP=$(ids_header)
OTLP=${OTLP%%,*}
[[ -n "$OTLP" ]] || fail "otlp: no X-Spaa-Profile-Ids"
cat >"$E2E_TMP/p.spaa" <<'SPAA'
{"type":"header","format":"spaa","version":"1.0","stack_id_mode":"local","source_tool":"perf","frame_order":"leaf_to_root","events":[{"name":"cycles","kind":"hardware","sampling":{"mode":"period","primary_metric":"period","sample_period":1}}]}
{"type":"dso","id":1,"name":"/bin/app"}
{"type":"frame","id":1,"func":"work;hard","dso":1,"srcline":"w.c:3","kind":"user"}
{"type":"frame","id":2,"func":"main","dso":1,"kind":"user"}
{"type":"stack","id":"a","frames":[1,2],"context":{"event":"cycles"},"weights":[{"metric":"period","value":30}]}
{"type":"stack","id":"b","frames":[2],"context":{"event":"cycles"},"weights":[{"metric":"period","value":10}]}
SPAA
http POST '/api/v1/spaa?service=perfsvc' --data-binary @"$E2E_TMP/p.spaa"
assert_eq 200 "$HTTP_CODE" "spaa upload"
SPAAID=$(ids_header)
assert_eq "$(json_get "$HTTP_BODY" id)" "$SPAAID" "spaa: header and body name the same id"
http POST /v1/pprof -H 'X-Service-Name: coll' --data-binary @"$F/pprof/google-pprof_sample.cpu"
assert_eq 204 "$HTTP_CODE" "collector push"
[[ "$(ids_header)" =~ ^[0-9a-f]{32}$ ]] || fail "collector push: no X-Spaa-Profile-Ids"

total_of() { # ID METRIC: the stored total of METRIC (first event that has it)
  curl -s "$SERVER_URL/api/v1/profiles/$1" | jq -r --arg m "$2" '[.events[].totals[$m] // empty][0]'
}

# --- go tool pprof over HTTP: totals equal the stored totals --------------------------------
if command -v go >/dev/null; then
  export HOME=$E2E_TMP PPROF_TMPDIR=$E2E_TMP
  raw=$(go tool pprof -raw "$SERVER_URL/api/v1/profiles/$PPROF/pprof" 2>/dev/null)
  sums=$(printf '%s\n' "$raw" | awk '/^Samples:/{s=1; next} s && /^ *[0-9-]+ +[0-9-]+:/ {a+=$1; b+=$2} /^Locations/{s=0} END {printf "%.0f %.0f", a, b}')
  assert_eq "$(total_of "$PPROF" samples) $(total_of "$PPROF" cpu)" "$sums" "go tool pprof -raw totals (samples cpu)"
  top=$(go tool pprof -top "$SERVER_URL/api/v1/profiles/$PPROF/pprof" 2>/dev/null)
  assert_contains "$top" "Total samples = 240.29s" "go tool pprof -top total"
  assert_contains "$top" "time.Now" "go tool pprof -top functions"
else
  echo "note [$E2E_NAME]: go not installed, go tool pprof checks not run"
fi

# --- the pprof export re-ingested: same stack ids and per-type totals -----------------------
curl -s "$SERVER_URL/api/v1/profiles/$PPROF/pprof" -o "$E2E_TMP/export.pb.gz"
http POST /v1/pprof -H 'X-Service-Name: again' --data-binary @"$E2E_TMP/export.pb.gz"
AGAIN=$(ids_header)
for m in cpu samples; do
  assert_eq "$(total_of "$PPROF" $m)" "$(total_of "$AGAIN" $m)" "re-ingested $m total"
done
stack_ids() { curl -s "$SERVER_URL/api/v1/profiles/$1/spaa" | jq -r 'select(.type=="stack") | .id' | sort | md5sum; }
assert_eq "$(stack_ids "$PPROF")" "$(stack_ids "$AGAIN")" "re-ingested stack ids"

# --- large answers are spooled to an unlinked file and sent from it --------------------------
# large.cpu as SPAA is ~13 MB, far past the in-memory part of an answer: plain, gzip and zstd
# must agree, the SPAA must validate, and no spill file may be left in the data directory
curl -s "$SERVER_URL/api/v1/profiles/$PPROF/spaa" -o "$E2E_TMP/big.spaa"
(( $(stat -c %s "$E2E_TMP/big.spaa") > 4000000 )) || fail "large SPAA export: $(stat -c %s "$E2E_TMP/big.spaa") bytes"
"$SPAA_BIN" validate "$E2E_TMP/big.spaa" >/dev/null || fail "the spooled SPAA export does not validate"
curl -s -H 'Accept-Encoding: gzip' "$SERVER_URL/api/v1/profiles/$PPROF/spaa" | gzip -dc >"$E2E_TMP/big.gz.spaa"
cmp -s "$E2E_TMP/big.spaa" "$E2E_TMP/big.gz.spaa" || fail "gzip SPAA export differs from the plain one"
curl -s -H 'Accept-Encoding: zstd' "$SERVER_URL/api/v1/profiles/$PPROF/collapsed" | zstd -dcq >"$E2E_TMP/big.zst.txt"
curl -s "$SERVER_URL/api/v1/profiles/$PPROF/collapsed" | cmp -s - "$E2E_TMP/big.zst.txt" ||
  fail "zstd collapsed export differs from the plain one"
len=$(curl -sI "$SERVER_URL/api/v1/profiles/$PPROF/spaa" | tr -d '\r' | awk 'tolower($1)=="content-length:" {print $2}')
assert_eq "$(stat -c %s "$E2E_TMP/big.spaa")" "$len" "HEAD of a spooled answer: Content-Length"
left=$(find "$SERVER_DATA" -name '.spaa-answer-*' | wc -l)
assert_eq 0 "$left" "spill files left in the data directory"

# --- one profile's views, for every source ---------------------------------------------------
for id in "$SMALL" "$SENTRY" "$OTLP" "$SPAAID"; do
  http GET "/api/v1/profiles/$id/top?limit=5"
  assert_eq 200 "$HTTP_CODE" "top of $id ($HTTP_BODY)"
  metric=$(jq -r .metric <<<"$HTTP_BODY")
  total=$(jq -r .total <<<"$HTTP_BODY")
  assert_eq "$(total_of "$id" "$metric")" "$total" "top total of $id"
  csum=$(curl -s "$SERVER_URL/api/v1/profiles/$id/collapsed" | awk '{s+=$NF} END {printf "%.0f", s}')
  assert_eq "$total" "$csum" "collapsed total of $id"
  http GET "/api/v1/profiles/$id/flamegraph?max_nodes=5"
  assert_eq 200 "$HTTP_CODE" "flamegraph of $id"
  assert_eq "$total" "$(jq -r .tree.total <<<"$HTTP_BODY")" "flamegraph total of $id"
  kids=$(jq '[.tree.children[].total] | add // 0' <<<"$HTTP_BODY")
  assert_eq "$(jq -r .tree.total <<<"$HTTP_BODY")" "$(jq -r ".tree.self + $kids" <<<"$HTTP_BODY")" "flamegraph children add up ($id)"
  http GET "/api/v1/profiles/$id/speedscope"
  assert_eq 200 "$HTTP_CODE" "speedscope of $id"
  if [[ "$id" == "$SENTRY" ]]; then
    # timestamped samples: evented, a profile per thread, events in time order, every close
    # matching the innermost open frame, nothing left open, frames in the shared table
    assert_eq evented "$(jq -r '.profiles[0].type' <<<"$HTTP_BODY")" "speedscope of a Sentry profile"
    jq -e '(.shared.frames | length) as $nf | .profiles | length > 0 and all(.[];
             .type == "evented" and .endValue > .startValue and ([.events[].at] == ([.events[].at] | sort))
             and all(.events[]; .frame >= 0 and .frame < $nf)
             and (reduce .events[] as $e ({s: [], ok: true};
                   if $e.type == "O" then .s += [$e.frame]
                   elif (.s | length) > 0 and .s[-1] == $e.frame then .s |= .[:-1]
                   else .ok = false end) | .ok and (.s | length) == 0))' <<<"$HTTP_BODY" >/dev/null ||
      fail "evented speedscope of $id is not well nested: $(head -c 600 <<<"$HTTP_BODY")"
  else
    assert_eq "$total" "$(jq '.profiles[0].weights | add // 0' <<<"$HTTP_BODY")" "speedscope total of $id"
  fi
  http GET "/api/v1/profiles/$id/pprof"
  assert_eq 200 "$HTTP_CODE" "pprof of $id"
done
# --- speedscope with focus=: the frame table lists the frames the kept stacks use, no others
for id in "$SMALL" "$SENTRY"; do
  all=$(curl -s "$SERVER_URL/api/v1/profiles/$id/speedscope" | jq '.shared.frames | length')
  leaf=$(curl -s "$SERVER_URL/api/v1/profiles/$id/top?limit=1" | jq -r '.top[0].name')
  pat=$(python3 -c 'import re, sys, urllib.parse; print(urllib.parse.quote("^" + re.escape(sys.argv[1]) + "$", safe=""))' "$leaf")
  http GET "/api/v1/profiles/$id/speedscope?focus=$pat"
  assert_eq 200 "$HTTP_CODE" "speedscope of $id focused on $leaf ($HTTP_BODY)"
  jq -e '(.shared.frames | length) as $nf | ([.profiles[] | (.samples // [] | .[][]), (.events // [] | .[].frame)] | unique) as $used
         | $nf > 0 and $used == [range(0; $nf)]' <<<"$HTTP_BODY" >/dev/null ||
    fail "focused speedscope of $id lists frames no stack uses: $(head -c 400 <<<"$HTTP_BODY")"
  (($(jq '.shared.frames | length' <<<"$HTTP_BODY") < all)) ||
    fail "focused speedscope of $id lists all $all frames"
done
# --- timestamped samples with their own weights (off-CPU durations): the sampled speedscope,
# whose total is /top's (as evented it spanned the gaps between samples: 3.3 s for 412 ms)
http POST /v1development/profiles -H 'Content-Type: application/x-protobuf' \
  --data-binary @"$F/otlp/v1dev_05_timestamps_offcpu.bin"
assert_eq 200 "$HTTP_CODE" "off-CPU OTLP ($HTTP_BODY)"
offcpu=
for id in $(ids_header | tr ',' ' '); do
  [[ "$(curl -s "$SERVER_URL/api/v1/profiles/$id/top" | jq -r .metric)" == off_cpu ]] && offcpu=$id
done
[[ -n "$offcpu" ]] || fail "no off_cpu profile among $(ids_header)"
http GET "/api/v1/profiles/$offcpu/speedscope"
assert_eq sampled "$(jq -r '.profiles[0].type' <<<"$HTTP_BODY")" "speedscope of weighted timestamped samples"
assert_eq 412000000 "$(jq '.profiles[0].weights | add' <<<"$HTTP_BODY")" "off-CPU speedscope total"
assert_eq 412000000 "$(curl -s "$SERVER_URL/api/v1/profiles/$offcpu/top" | jq .total)" "off-CPU top total"

# --- a large tree within max_nodes: google-pprof's large.cpu holds 425,051 call-tree nodes, its
# weight in chains of one or two samples; laid out in the budget ("other" nodes included),
# drawn as deep as its deepest stack, the budget used, and totals adding up. A trimmed tree
# cut 79% of the total at 50,000 nodes and drew 9 frames deep.
deepest=$(curl -s "$SERVER_URL/api/v1/profiles/$PPROF/collapsed" | awk '{n = split($1, a, ";"); if (n > m) m = n} END {print m}')
for max in 2000 50000; do
  http GET "/api/v1/profiles/$PPROF/flamegraph?max_nodes=$max"
  assert_eq 200 "$HTTP_CODE" "flamegraph max_nodes=$max"
  assert_eq "true" "$(jq -r --argjson max "$max" '.nodes + .other_nodes <= $max and .nodes + .other_nodes > $max * 0.5' <<<"$HTTP_BODY")" \
    "max_nodes=$max: the budget used and kept ($(jq -c 'del(.tree)' <<<"$HTTP_BODY"))"
  got=$(jq '[.tree | paths(type == "object" and has("children")) | map(select(. == "children")) | length] | max' <<<"$HTTP_BODY")
  assert_eq "$deepest" "$got" "max_nodes=$max: as deep as the deepest stack"
  jq -e '[.tree | .. | objects | select(has("children")) | .total == .self + ([.children[].total] | add // 0)] | all' \
    <<<"$HTTP_BODY" >/dev/null || fail "max_nodes=$max: a node's total is not its self and its children's"
  jq -e '[.. | objects | select(has("merged"))] | length > 0 and all(.name == "other" and (.merged > 1 or (.merged == 1 and (.children | length) == 0)))' \
    <<<"$HTTP_BODY" >/dev/null || fail "max_nodes=$max: \"other\" nodes name how many they merge"
done

assert_contains "$(curl -s "$SERVER_URL/api/v1/profiles/$SPAAID/collapsed")" "main;work:hard 30" "';' replaced"
assert_contains "$(curl -s "$SERVER_URL/api/v1/profiles/$SPAAID/top?by=frame")" '"name":"work;hard (w.c:3)"' "by=frame"

# --- the summary: under its budget, byte-identical on reruns (the largest fixture) -------------
for b in 300 4096; do
  curl -s "$SERVER_URL/api/v1/profiles/$PPROF/summary?budget=$b" -o "$E2E_TMP/s1"
  curl -s "$SERVER_URL/api/v1/profiles/$PPROF/summary?budget=$b" -o "$E2E_TMP/s2"
  cmp -s "$E2E_TMP/s1" "$E2E_TMP/s2" || fail "summary budget=$b differs between runs"
  (($(wc -c <"$E2E_TMP/s1") <= b)) || fail "summary over its budget $b: $(wc -c <"$E2E_TMP/s1")"
done
first=$(curl -s "$SERVER_URL/api/v1/profiles/$SMALL/top?limit=1" | jq -r '.top[0].name')
curl -s "$SERVER_URL/api/v1/profiles/$SMALL/summary?budget=2000&format=json" |
  jq -e --arg f "$first" '.top[0].name == $f' >/dev/null || fail "summary json"
sunit=$(curl -s "$SERVER_URL/api/v1/profiles/$SMALL/summary?budget=2000&format=json" | jq -r .unit)
tunit=$(curl -s "$SERVER_URL/api/v1/profiles/$SMALL/top?limit=1" | jq -r .unit)
assert_eq "$tunit" "$sunit" "the JSON summary's unit, as top's"

# --- merged views over a selection ------------------------------------------------------------
http GET '/api/v1/top?service=shop&limit=3'
assert_eq 200 "$HTTP_CODE" "merged top"
want=$(($(total_of "$PPROF" cpu) + $(total_of "$SMALL" cpu)))
assert_eq "$want" "$(jq -r .total <<<"$HTTP_BODY")" "merged top total"
# the unit goes with the metric through the scan, as it does for one profile
assert_eq nanoseconds "$(jq -r .unit <<<"$HTTP_BODY")" "merged top unit"
assert_eq nanoseconds "$(curl -s "$SERVER_URL/api/v1/profiles/$PPROF/top?limit=1" | jq -r .unit)" "top unit of one profile"
assert_eq nanoseconds "$(curl -s "$SERVER_URL/api/v1/flamegraph?service=shop&max_nodes=3" | jq -r .unit)" "merged flamegraph unit"
# merged_pprof_total QUERY TYPE: TYPE's column summed over go tool pprof -raw's samples
merged_pprof_total() {
  go tool pprof -raw "$SERVER_URL/api/v1/pprof?$1" 2>/dev/null | awk -v t="$2" '
    /^Samples:/ {s = 1; getline; for (i = 1; i <= NF; i++) {split($i, a, "/"); if (a[1] == t) c = i}; next}
    /^Locations/ {s = 0}
    s && c && /^ *[0-9-]+/ {sum += $c}
    END {if (c) printf "%.0f", sum}'
}
# every sample type of the selection, each summing to the stored totals
assert_eq "$want" "$(merged_pprof_total service=shop cpu)" "merged pprof cpu (go tool pprof -raw)"
assert_eq "$(($(total_of "$PPROF" samples) + $(total_of "$SMALL" samples)))" \
  "$(merged_pprof_total service=shop samples)" "merged pprof samples (go tool pprof -raw)"
assert_eq "" "$(merged_pprof_total 'service=shop&metric=cpu' samples)" "metric= keeps one type"
assert_eq "$want" "$(merged_pprof_total 'service=shop&metric=cpu' cpu)" "metric=cpu"
# sample types keep their units: go tool pprof reads cpu as time, not as a count
go tool pprof -raw "$SERVER_URL/api/v1/pprof?service=shop" 2>/dev/null | grep -A1 '^Samples:' >"$E2E_TMP/types"
assert_contains "$(cat "$E2E_TMP/types")" "cpu/nanoseconds" "merged pprof sample type units"
assert_contains "$(cat "$E2E_TMP/types")" "samples/count" "merged pprof sample type units"
http POST '/ingest?name=heapsvc' --data-binary @"$F/pprof/pyroscope_heap"
HEAP=$(ids_header)
for t in alloc_objects alloc_space inuse_objects inuse_space; do
  assert_eq "$(total_of "$HEAP" "$t")" "$(merged_pprof_total service=heapsvc "$t")" "merged heap pprof: $t"
done
http GET '/api/v1/top?service=shop&label=env:prod'
assert_eq "$(total_of "$PPROF" cpu)" "$(jq -r .total <<<"$HTTP_BODY")" "merged top by label"
http GET '/api/v1/flamegraph?service=shop&max_nodes=10&focus=%5Emain%5C.next%24'
assert_eq 200 "$HTTP_CODE" "merged flamegraph with focus"
assert_eq 217070000000 "$(jq -r .total <<<"$HTTP_BODY")" "focus=main.next total"
http GET '/api/v1/collapsed?service=perfsvc&ignore=work'
assert_eq "main 10" "$HTTP_BODY" "merged collapsed with ignore"
http GET '/api/v1/summary?service=shop&budget=500'
assert_eq 200 "$HTTP_CODE" "merged summary"

# --- Sentry's filters on the profile's attrs, on the list and on merged views ------------------
list_ids() { jq -r '[.profiles[].id] | join(" ")' <<<"$HTTP_BODY"; }
http GET '/api/v1/profiles?release=0.1%20(199)'
assert_eq "$SENTRY" "$(list_ids)" "list by release"
http GET '/api/v1/profiles?transaction=a-transaction&trace_id=4b25bc58f14243d8b208d1e22a054164'
assert_eq "$SENTRY" "$(list_ids)" "list by transaction and trace_id"
http GET '/api/v1/profiles?transaction=another-transaction'
assert_eq "" "$(list_ids)" "list by another transaction"
http GET '/api/v1/profiles?environment=production'
assert_eq "" "$(list_ids)" "list by an environment the envelope does not name"
http GET '/api/v1/top?transaction=a-transaction'
assert_eq 200 "$HTTP_CODE" "merged top by transaction ($HTTP_BODY)"
assert_eq "$(total_of "$SENTRY" samples)" "$(jq -r .total <<<"$HTTP_BODY")" "merged top by transaction: total"
# from/to on received time by default (all arrived just now), on profile time when asked
http GET '/api/v1/profiles?service=shop&from=now-1h&limit=10'
assert_eq 2 "$(jq '.profiles | length' <<<"$HTTP_BODY")" "received in the last hour"
http GET '/api/v1/profiles?service=shop&to=now-1h'
assert_eq 0 "$(jq '.profiles | length' <<<"$HTTP_BODY")" "received before an hour ago"
http GET '/api/v1/profiles?source=sentry&time=profile&to=2022-09-01T00:00:00Z'
assert_eq "" "$(list_ids)" "the sentry profile starts after 2022-09-01T00:00Z"
http GET '/api/v1/profiles?source=sentry&time=profile&from=2022-09-01T00:00:00Z&to=2022-09-02T00:00:00Z'
assert_eq "$SENTRY" "$(list_ids)" "sentry profile time on 2022-09-01"

# --- diff ------------------------------------------------------------------------------------
http GET "/api/v1/diff?base=$SMALL&target=$SMALL"
assert_eq 200 "$HTTP_CODE" "self diff"
assert_eq 0 "$(jq '[.functions[].delta, .stacks[].delta] | map(select(. != 0)) | length' <<<"$HTTP_BODY")" "a profile diffed with itself"
http GET "/api/v1/diff?base=$PPROF&target=$AGAIN&limit=1"
assert_eq nanoseconds "$(jq -r .unit <<<"$HTTP_BODY")" "diff unit"
assert_eq 0 "$(jq '[.functions[].delta, .stacks[].delta] | map(select(. != 0)) | length' <<<"$HTTP_BODY")" "pprof vs its re-ingested export"
sid=$(jq -r '.stacks[0].id' <<<"$HTTP_BODY")
http GET "/api/v1/diff?base.service=shop&base.label=env:dev&target.service=shop&target.label=env:prod&format=collapsed"
assert_eq 200 "$HTTP_CODE" "diff collapsed ($HTTP_BODY)"
assert_eq "$(total_of "$SMALL" cpu) $(total_of "$PPROF" cpu)" \
  "$(printf '%s\n' "$HTTP_BODY" | awk '{a+=$(NF-1); b+=$NF} END {printf "%.0f %.0f", a, b}')" "diff collapsed columns"
http GET "/api/v1/diff?base.service=perfsvc&target.service=shop"
assert_eq 400 "$HTTP_CODE" "diff of two metrics"
http GET "/api/v1/diff?base=$SMALL&target.service=shop&target.label=env:prod&format=summary&budget=600"
(( ${#HTTP_BODY} <= 600 )) || fail "diff summary over budget"

# --- discovery -------------------------------------------------------------------------------
http GET /api/v1/services
assert_eq 2 "$(jq -r '.services[] | select(.name=="shop") | .profiles' <<<"$HTTP_BODY")" "services: shop"
assert_eq pprof "$(jq -r '.services[] | select(.name=="shop") | .sources[0]' <<<"$HTTP_BODY")" "services: source"
http GET /api/v1/labels/env/values
assert_eq '[{"value":"dev","profiles":1},{"value":"prod","profiles":1}]' "$(jq -c .values <<<"$HTTP_BODY")" "label values"
http GET "/api/v1/stacks/$sid"
assert_eq 200 "$HTTP_CODE" "stack by id"
assert_eq 2 "$(jq -r .profiles <<<"$HTTP_BODY")" "profiles holding the stack (the push and its export)"
[[ $(jq '.frames | length' <<<"$HTTP_BODY") -gt 0 ]] || fail "stack frames"

# --- bad parameters: 400/404 naming them -------------------------------------------------------
bad() { # PATH STATUS TEXT
  http GET "$1"
  assert_eq "$2" "$HTTP_CODE" "GET $1 ($HTTP_BODY)"
  assert_contains "$HTTP_BODY" "$3" "GET $1"
}
bad '/api/v1/profiles?servce=x' 400 "unknown parameter 'servce'"
bad '/api/v1/top?service=shop&metrc=cpu' 400 "'metrc'"
bad '/api/v1/top?from=yesterday' 400 "'from'"
bad '/api/v1/top?time=wallclock' 400 "'time'"
bad '/api/v1/diff?base.time=x&target.service=shop' 400 "'base.time'"
bad '/api/v1/diff?base.label=nocolon&target.service=shop' 400 "'base.label'"
bad "/api/v1/profiles/$PPROF/top?limit=0" 400 "'limit'"
bad "/api/v1/profiles/$PPROF/flamegraph?max_nodes=x" 400 "'max_nodes'"
bad "/api/v1/profiles/$PPROF/top?by=line" 400 "'by'"
bad "/api/v1/profiles/$PPROF/top?focus=%28" 400 "'focus'"
bad "/api/v1/profiles/$SMALL/top?metric=nope" 400 "nope"
bad '/api/v1/profiles?cursor=zz' 400 "cursor"
bad '/api/v1/profiles/0123456789abcdef0123456789abcdef/pprof' 404 "no profile"
bad '/api/v1/stacks/0x00000000000000000000000000000000' 404 "no stack"
bad "/api/v1/diff?base=$PPROF" 400 "'target'"
bad '/api/v1/diff?base=nosuchprofile&target=x' 404 "no profile"
bad "/api/v1/diff?base=$PPROF&target=$PPROF&format=png" 400 "'format'"
bad "/api/v1/summary?budget=10" 400 "'budget'"
echo ok
