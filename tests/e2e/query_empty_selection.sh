#!/usr/bin/env bash
# A selection that matches no stored profile is an error, not an answer of zeros: every
# merged view (top, flamegraph, collapsed, speedscope, summary, pprof) answers 404
# not_found naming the filters given, and a diff names the side whose selection matches
# nothing (both, when both do), in every format, whichever side it is; the list still answers
# 200 with an empty page, bad parameters are still 400s first, and selections that match
# keep answering 200 (profiles without any stack: an empty answer named by their metric).
source "$(dirname "$0")/lib.bash"
F=${SPAA_SHARED:-}/fixtures
if [[ ! -f "$F/pprof/pyroscope_go.cpu.labels.pprof" ]]; then
  echo "skip [$E2E_NAME]: shared fixtures not found"
  exit 77
fi
command -v jq >/dev/null || fail "jq is required"
ids_header() { printf '%s\n' "$HTTP_HEADERS" | sed -n 's/^X-Spaa-Profile-Ids: //Ip' | head -n1; }

# is PATH STATUS ERROR DETAIL: the answer's status, error name and exact detail
is() {
  http GET "$1"
  assert_eq "$2" "$HTTP_CODE" "GET $1 ($HTTP_BODY)"
  assert_eq "$3" "$(jq -r .error <<<"$HTTP_BODY")" "GET $1: error"
  assert_eq "$4" "$(jq -r .detail <<<"$HTTP_BODY")" "GET $1: detail"
}

start_server
# --- an empty store: every merged view, no filter at all ----------------------------------------
for v in top flamegraph collapsed speedscope summary pprof; do
  is "/api/v1/$v" 404 not_found "no stored profile matches the selection (no filter given: the store is empty)"
done
http GET '/api/v1/profiles'
assert_eq 200 "$HTTP_CODE" "the list of an empty store"
assert_eq 0 "$(jq '.profiles | length' <<<"$HTTP_BODY")" "the list of an empty store is empty"

http POST '/ingest?name=app.cpu%7Benv%3Dprod%7D' --data-binary @"$F/pprof/pyroscope_go.cpu.labels.pprof"
assert_eq 200 "$HTTP_CODE" "pprof push ($HTTP_BODY)"
ID=$(ids_header)
[[ "$ID" =~ ^[0-9a-f]{32}$ ]] || fail "no profile id: $HTTP_HEADERS"

# --- merged views: 404 naming the filters, the same for every view and format -----------------
for v in top flamegraph collapsed speedscope summary 'summary?format=json' pprof; do
  sep='?'
  [[ $v == *'?'* ]] && sep='&'
  is "/api/v1/$v${sep}service=nosuch" 404 not_found "no stored profile matches the selection (service=nosuch)"
done
is '/api/v1/top?project=nosuch&source=pprof&event=cpu&label=env:prod&limit=5' 404 not_found \
  "no stored profile matches the selection (service=nosuch, source=pprof, event=cpu, label=env:prod)"
# a filter that matches nothing on its own, beside ones that do
is '/api/v1/flamegraph?service=app&label=env:dev' 404 not_found \
  "no stored profile matches the selection (service=app, label=env:dev)"
is '/api/v1/top?service=app&event=nosuch' 404 not_found \
  "no stored profile matches the selection (service=app, event=nosuch)"
# a time window in which nothing arrived (the times given, as RFC 3339)
is '/api/v1/top?service=app&from=1000000000&to=1000000060' 404 not_found \
  "no stored profile matches the selection (service=app, from=2001-09-09T01:46:40Z, to=2001-09-09T01:47:40Z)"
is '/api/v1/top?service=app&time=profile&from=1000000000&to=1000000060' 404 not_found \
  "no stored profile matches the selection (service=app, time=profile, from=2001-09-09T01:46:40Z, to=2001-09-09T01:47:40Z)"
# metric= is what a view sums, not a filter: an empty selection is still the 404
is '/api/v1/top?service=nosuch&metric=cpu' 404 not_found "no stored profile matches the selection (service=nosuch)"
# long values are cut, the answer stays one short line
long=$(printf 'x%.0s' {1..300})
http GET "/api/v1/top?service=$long&label=k:${long:0:100}&release=$long&environment=$long"
assert_eq 404 "$HTTP_CODE" "long filters ($HTTP_BODY)"
(($(jq -r .detail <<<"$HTTP_BODY" | wc -c) < 256)) || fail "long filters: detail too long: $HTTP_BODY"
# bad parameters are checked first: still 400
is '/api/v1/top?service=nosuch&limit=0' 400 bad_request "bad 'limit' '0': expected 1 to 10000"
http GET '/api/v1/flamegraph?service=nosuch&focus=('
assert_eq 400 "$HTTP_CODE" "a bad focus on an empty selection ($HTTP_BODY)"
# the list answers an empty page
http GET '/api/v1/profiles?service=nosuch'
assert_eq 200 "$HTTP_CODE" "the list of an empty selection"
assert_eq '{"profiles":[],"next_cursor":null}' "$HTTP_BODY" "the list of an empty selection"
# a selection that matches answers as before
http GET '/api/v1/top?service=app&limit=1'
assert_eq 200 "$HTTP_CODE" "merged top"
assert_eq "cpu true" "$(jq -r '"\(.metric) \(.total > 0)"' <<<"$HTTP_BODY")" "merged top of app"

# --- diff: the side that matches nothing is named, in every format ---------------------------
for fmt in json collapsed summary; do
  is "/api/v1/diff?base.service=app&target.service=nosuchservice&format=$fmt" 404 not_found \
    "the target selection matches no stored profile (service=nosuchservice)"
  is "/api/v1/diff?base.service=nosuchservice&target.service=app&format=$fmt" 404 not_found \
    "the base selection matches no stored profile (service=nosuchservice)"
done
is '/api/v1/diff?base.service=nosuch&target.service=nosuchservice' 404 not_found \
  "neither side matches a stored profile: the base selection (service=nosuch) and the target selection (service=nosuchservice) match none"
# a profile against an empty selection, and an empty time window
is "/api/v1/diff?base=$ID&target.service=app&target.from=1000000000&target.to=1000000060" 404 not_found \
  "the target selection matches no stored profile (service=app, from=2001-09-09T01:46:40Z, to=2001-09-09T01:47:40Z)"
is "/api/v1/diff?base.service=app&base.label=env:dev&target=$ID" 404 not_found \
  "the base selection matches no stored profile (service=app, label=env:dev)"
# a missing profile is still its own 404; bad parameters are still 400s first
http GET '/api/v1/diff?base=00000000000000000000000000000000&target.service=app'
assert_eq 404 "$HTTP_CODE" "a diff against a missing profile"
assert_contains "$HTTP_BODY" "00000000000000000000000000000000" "the missing profile is named"
http GET '/api/v1/diff?base.service=app&target.service=nosuch&focus=('
assert_eq 400 "$HTTP_CODE" "a bad focus before the empty side ($HTTP_BODY)"
is '/api/v1/diff?base.service=app&target.service=nosuch&limit=0' 400 bad_request "bad 'limit' '0': expected 1 to 10000"
# sides that both match: 200, as before
http GET "/api/v1/diff?base.service=app&target=$ID&limit=1"
assert_eq 200 "$HTTP_CODE" "a diff of two matching sides ($HTTP_BODY)"
assert_eq "cpu 0" "$(jq -r '"\(.metric) \(.delta)"' <<<"$HTTP_BODY")" "the profile against its own service"
# --- profiles that match but hold no stack: an empty answer of their metric, never null ------
# (reading one back used to hand qsort_r a NULL array, which UBSan stops the server on; the
# view of the one profile is read here too)
printf '%s\n' '{"type":"header","format":"spaa","version":"1.0","stack_id_mode":"local","source_tool":"perf","frame_order":"leaf_to_root","events":[{"name":"cycles","kind":"hardware","sampling":{"mode":"period","primary_metric":"period"}}]}' \
  >"$E2E_TMP/nostacks.spaa"
http POST '/api/v1/spaa?service=nostacks' --data-binary @"$E2E_TMP/nostacks.spaa"
assert_eq 200 "$HTTP_CODE" "a SPAA profile without stacks ($HTTP_BODY)"
http GET '/api/v1/top?service=nostacks'
assert_eq 200 "$HTTP_CODE" "merged top of profiles without stacks ($HTTP_BODY)"
assert_eq '{"metric":"period","unit":null,"total":0,"metrics":["period"],"functions":0,"top":[]}' "$HTTP_BODY" "named by their metric"
nid=$(curl -sS "$SERVER_URL/api/v1/profiles?service=nostacks" | jq -r '.profiles[0].id')
http GET "/api/v1/profiles/$nid/top"
assert_eq 200 "$HTTP_CODE" "the top of one profile without stacks ($HTTP_BODY)"
http GET '/api/v1/diff?base.service=nostacks&target.service=nostacks'
assert_eq 200 "$HTTP_CODE" "a diff of profiles without stacks ($HTTP_BODY)"
assert_eq "period 0 0" "$(jq -r '"\(.metric) \(.base_total) \(.target_total)"' <<<"$HTTP_BODY")" "the diff names the metric"
is '/api/v1/top?service=nostacks&metric=zzz' 400 bad_request "bad 'metric' 'zzz': no stack of the selection has it"
stop_server || fail "server exit status"
echo "ok [$E2E_NAME]"
