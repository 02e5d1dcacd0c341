#!/usr/bin/env bash
# The API the web page adds (server/api_page.c): GET /api/v1/timeline counts a selection's
# profiles by time over every page of the list (1,205 profiles: more than one page), with
# the filters' range or the selection's own, a profile before `from` in the first bucket,
# an empty selection, bad parameters; GET /api/v1/speedscope merges a selection as
# speedscope's file format.
source "$(dirname "$0")/lib.bash"
command -v jq >/dev/null || fail "jq is required"
command -v python3 >/dev/null || fail "python3 is required"
start_server

# N profiles of service S, the i-th starting at T0 + i*STEP seconds (60 s long), each with
# stacks weighing 3 and 1 (posted by 8 keep-alive clients)
post_many() {
  python3 - "$SERVER_PORT" "$@" <<'PY' || fail "posting SPAA profiles failed"
import http.client, sys, threading
port, service, n, t0, step = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
def body(start):
    return "\n".join([
        '{"type":"header","format":"spaa","version":"1.0","stack_id_mode":"local","source_tool":"perf","frame_order":"leaf_to_root",'
        '"events":[{"name":"cycles","kind":"hardware","sampling":{"mode":"period","primary_metric":"period"}}],'
        '"time_range":{"start":%d,"end":%d,"unit":"seconds"}}' % (start, start + 60),
        '{"type":"dso","id":1,"name":"/bin/app"}',
        '{"type":"frame","id":1,"func":"work","dso":1,"srcline":"w.c:3","kind":"user"}',
        '{"type":"frame","id":2,"func":"main","dso":1,"kind":"user"}',
        '{"type":"stack","id":"a","frames":[1,2],"context":{"event":"cycles"},"weights":[{"metric":"period","value":3}]}',
        '{"type":"stack","id":"b","frames":[2],"context":{"event":"cycles"},"weights":[{"metric":"period","value":1}]}',
    ]) + "\n"
errors = []
def worker(k):
    c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
    for i in range(k, n, 8):
        c.request("POST", "/api/v1/spaa?service=" + service, body(t0 + i * step))
        r = c.getresponse()
        r.read()
        if r.status != 200:
            errors.append(r.status)
ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
sys.exit(1 if errors else 0)
PY
}

T0=1700000000
post_many tl 1205 "$T0" 60
post_many other 3 1800000000 3600

# --- the whole selection on profile time: its own range, every page counted ------------------
http GET '/api/v1/timeline?service=tl&buckets=10&time=profile'
assert_eq 200 "$HTTP_CODE" "timeline ($HTTP_BODY)"
assert_eq 1205 "$(jq .profiles <<<"$HTTP_BODY")" "profiles counted over every list page"
assert_eq 1205 "$(jq '.counts | add' <<<"$HTTP_BODY")" "the buckets add up"
assert_eq 10 "$(jq '.counts | length' <<<"$HTTP_BODY")" "buckets"
# (unix ns do not fit jq's doubles: read with json_get)
assert_eq "${T0}000000000" "$(json_get "$HTTP_BODY" from)" "from: the earliest start"
assert_eq "$((T0 + 1204 * 60))000000000" "$(json_get "$HTTP_BODY" to)" "to: the latest start"
# width = ceil((to - from + 1) / 10); profile i falls in floor(i*60e9 / width)
want=$(jq -c -n --argjson n 1205 '(1204 * 60 * 1000000000 + 1) as $span | (($span + 9) / 10 | floor) as $w
  | [range(0; $n) | (. * 60 * 1000000000 / $w | floor)] | group_by(.) | map(length)')
assert_eq "$want" "$(jq -c .counts <<<"$HTTP_BODY")" "counts per bucket"
assert_eq "$(( ((1204 * 60 * 1000000000 + 1) + 9) / 10 ))" "$(json_get "$HTTP_BODY" bucket_ns)" "bucket width"

# --- the filters' range: a profile that began before `from` but overlaps it is in bucket 0 --
from=$((T0 + 100 * 60 + 30)) to=$((T0 + 199 * 60))
http GET "/api/v1/timeline?service=tl&time=profile&from=$from&to=$to&buckets=4"
assert_eq 200 "$HTTP_CODE" "timeline with a range ($HTTP_BODY)"
list_n=0 cursor=
while :; do
  page=$(curl -s "$SERVER_URL/api/v1/profiles?service=tl&time=profile&from=$from&to=$to&limit=1000${cursor:+&cursor=$cursor}")
  list_n=$((list_n + $(jq '.profiles | length' <<<"$page")))
  cursor=$(jq -r '.next_cursor // empty' <<<"$page")
  [[ -n "$cursor" ]] || break
done
assert_eq "$list_n" "$(jq .profiles <<<"$HTTP_BODY")" "the timeline counts what the list selects"
assert_eq 100 "$list_n" "profiles 100..199 overlap the range"
assert_eq "${from}000000000 ${to}000000000" "$(json_get "$HTTP_BODY" from) $(json_get "$HTTP_BODY" to)" \
  "the filters' range"
# offsets from T0 in ns stay exact in jq's doubles; profile 100 starts before `from`
want=$(jq -c -n --argjson f $(((from - T0) * 1000000000)) --argjson t $(((to - T0) * 1000000000)) '
  (($t - $f + 1 + 3) / 4 | floor) as $w
  | [range(100; 200) | [. * 60 * 1000000000, $f] | max | (. - $f) / $w | floor] | group_by(.) | map(length)')
assert_eq "$want" "$(jq -c .counts <<<"$HTTP_BODY")" "counts, profile 100 (begun before from) in the first"
assert_eq 26 "$(jq '.counts[0]' <<<"$HTTP_BODY")" "the first bucket holds profile 100 too"

# --- relative times, defaults, an empty selection -----------------------------------------
http GET '/api/v1/timeline?service=other'
assert_eq 60 "$(jq '.counts | length' <<<"$HTTP_BODY")" "60 buckets by default"
assert_eq 3 "$(jq '.counts | add' <<<"$HTTP_BODY")" "service other"
http GET '/api/v1/timeline?service=tl&time=profile&from=now-1h'
assert_eq 200 "$HTTP_CODE" "relative from"
assert_eq 0 "$(jq .profiles <<<"$HTTP_BODY")" "nothing of 2023 in the last hour"
# on received time (the default) all of them arrived within the hour
http GET '/api/v1/timeline?service=tl&from=now-1h&buckets=5'
assert_eq 1205 "$(jq .profiles <<<"$HTTP_BODY")" "received in the last hour"
assert_eq 1205 "$(jq '.counts | add' <<<"$HTTP_BODY")" "received-time buckets add up"
http GET '/api/v1/timeline?service=nope&buckets=3'
assert_eq '{"from":0,"to":0,"bucket_ns":1,"buckets":3,"counts":[0,0,0],"profiles":0}' "$HTTP_BODY" "empty selection"
http GET '/api/v1/timeline?label=k:v'
assert_eq 0 "$(jq .profiles <<<"$HTTP_BODY")" "a label no profile has"

# --- bad parameters: 400 naming them ---------------------------------------------------------
for q in 'buckets=0' 'buckets=1001' 'buckets=x' 'from=yesterday' 'bucket=3' 'from=2000&to=1000' 'label=novalue'; do
  http GET "/api/v1/timeline?$q"
  assert_eq 400 "$HTTP_CODE" "timeline?$q"
  assert_eq bad_request "$(jq -r .error <<<"$HTTP_BODY")" "timeline?$q error"
done
http GET '/api/v1/timeline?buckets=0'
assert_contains "$HTTP_BODY" "'buckets'" "the bad parameter is named"
http GET '/api/v1/timeline?bucket=3'
assert_contains "$HTTP_BODY" "unknown parameter 'bucket'" "unknown parameter"

# --- merged speedscope ---------------------------------------------------------------------------
http GET '/api/v1/speedscope?service=other'
assert_eq 200 "$HTTP_CODE" "merged speedscope ($HTTP_BODY)"
assert_contains "$(jq -r '."$schema"' <<<"$HTTP_BODY")" "speedscope" "speedscope schema"
assert_eq sampled "$(jq -r '.profiles[0].type' <<<"$HTTP_BODY")" "one sampled profile"
assert_eq 12 "$(jq '.profiles[0].weights | add' <<<"$HTTP_BODY")" "3 profiles of 3+1 merged"
assert_eq "main,work" "$(jq -r '[.shared.frames[].name] | sort | join(",")' <<<"$HTTP_BODY")" "frames"
http GET '/api/v1/speedscope?service=other&metric=nope'
assert_eq 400 "$HTTP_CODE" "speedscope with an unknown metric"
http GET '/api/v1/speedscope?servce=other'
assert_eq 400 "$HTTP_CODE" "speedscope with an unknown parameter"
echo "ok [$E2E_NAME]"
