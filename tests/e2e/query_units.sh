#!/usr/bin/env bash
# Views that add up weights of several profiles, over a real server and store:
#  - one metric in two units of one kind (microseconds and nanoseconds) is summed in the finer
#    one by the merged top, flamegraph and pprof, and compared in it by the diff;
#  - one metric in units of no common kind is refused with a 400 that names both units;
#  - focus/ignore patterns that would make the regex engine backtrack or blow up are refused
#    at once with a 400, and the server keeps answering.
source "$(dirname "$0")/lib.bash"
command -v jq >/dev/null || fail "jq is required"
start_server

spaa() { # SERVICE UNIT VALUE_A VALUE_B: a profile of metric wall in UNIT; prints its id
  cat >"$E2E_TMP/u.spaa" <<SPAA
{"type":"header","format":"spaa","version":"1.0","stack_id_mode":"local","source_tool":"perf","frame_order":"leaf_to_root","events":[{"name":"wall","kind":"timer","sampling":{"mode":"period","primary_metric":"wall","sample_period":1}}]}
{"type":"dso","id":1,"name":"/usr/bin/app","is_kernel":false}
{"type":"frame","id":1,"func":"work","dso":1,"kind":"user"}
{"type":"frame","id":2,"func":"main","dso":1,"kind":"user"}
{"type":"stack","id":"a","frames":[1,2],"context":{"event":"wall"},"weights":[{"metric":"wall","value":$3,"unit":"$2"}]}
{"type":"stack","id":"b","frames":[2],"context":{"event":"wall"},"weights":[{"metric":"wall","value":$4,"unit":"$2"}]}
SPAA
  http POST "/api/v1/spaa?service=$1" --data-binary @"$E2E_TMP/u.spaa"
  assert_eq 200 "$HTTP_CODE" "spaa upload in $2 ($HTTP_BODY)"
  json_get "$HTTP_BODY" id
}

US=$(spaa clock microseconds 3 1)      # 3 us in work, 1 us in main alone
NS=$(spaa clock nanoseconds 500 7000)  # 500 ns in work, 7,000 ns in main alone

# --- merged: summed in nanoseconds ------------------------------------------------------------
http GET '/api/v1/top?service=clock&metric=wall'
assert_eq 200 "$HTTP_CODE" "merged top over two units ($HTTP_BODY)"
assert_eq nanoseconds "$(jq -r .unit <<<"$HTTP_BODY")" "merged top: the finer unit"
assert_eq 11500 "$(jq -r .total <<<"$HTTP_BODY")" "merged top: 4,000 ns + 7,500 ns"
assert_eq 3500 "$(jq -r '.top[] | select(.name == "work") | .self' <<<"$HTTP_BODY")" \
  "merged top: work's self, 3,000 ns + 500 ns"
http GET '/api/v1/flamegraph?service=clock&metric=wall'
assert_eq 11500 "$(jq -r .tree.total <<<"$HTTP_BODY")" "merged flamegraph total in nanoseconds"
if command -v go >/dev/null; then
  export HOME=$E2E_TMP PPROF_TMPDIR=$E2E_TMP
  curl -s -o "$E2E_TMP/m.pb.gz" "$SERVER_URL/api/v1/pprof?service=clock&metric=wall"
  raw=$(go tool pprof -raw "$E2E_TMP/m.pb.gz" 2>/dev/null)
  grep -q 'wall/nanoseconds' <<<"$raw" || fail "merged pprof: no wall/nanoseconds type: $raw"
  sum=$(awk '/^Samples:/{s=1; next} s && /^ *[0-9-]+:/ {a+=$1} /^Locations/{s=0} END {print a}' <<<"$raw")
  assert_eq 11500 "$sum" "merged pprof: samples sum to 11,500 ns"
else
  echo "note [$E2E_NAME]: go not found, the merged pprof is not read back"
fi

# --- diff: both sides in the finer unit, whichever side it is ---------------------------------
http GET "/api/v1/diff?base=$US&target=$NS"
assert_eq 200 "$HTTP_CODE" "diff over two units ($HTTP_BODY)"
assert_eq "nanoseconds 4000 7500" "$(jq -r '"\(.unit) \(.base_total) \(.target_total)"' <<<"$HTTP_BODY")" \
  "diff: base (us) converted"
http GET "/api/v1/diff?base=$NS&target=$US"
assert_eq "nanoseconds 7500 4000" "$(jq -r '"\(.unit) \(.base_total) \(.target_total)"' <<<"$HTTP_BODY")" \
  "diff: target (us) converted"

# --- units of no common kind: refused, both named ----------------------------------------------
SM=$(spaa clock samples 2 2)
http GET '/api/v1/top?service=clock&metric=wall'
assert_eq 400 "$HTTP_CODE" "merged top over time and samples"
assert_contains "$HTTP_BODY" "samples" "the refusal names the units ($HTTP_BODY)"
http GET "/api/v1/diff?base=$US&target=$SM"
assert_eq 400 "$HTTP_CODE" "diff of microseconds and samples"
assert_contains "$HTTP_BODY" "microseconds" "the diff's refusal names the units ($HTTP_BODY)"
http GET "/api/v1/top?service=clock&metric=wall&from=now-1h&limit=5&label=none%3Anone"
assert_eq 404 "$HTTP_CODE" "a selection that matches nothing: a 404 naming it, not a 400 on units ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "no stored profile matches the selection (service=clock" "the empty selection named"

# --- sums past 2^53 stay exact (a double would round them) ------------------------------------
BIG=$(spaa huge nanoseconds 9007199254740993 3)
http GET "/api/v1/profiles/$BIG/top"
assert_contains "$HTTP_BODY" '"total":9007199254740996,' "one profile's total, 2^53 + 4 ($HTTP_BODY)"
assert_contains "$HTTP_BODY" '"self":9007199254740993' "work's self, 2^53 + 1 ($HTTP_BODY)"
http GET "/api/v1/profiles/$BIG/collapsed"
assert_contains "$HTTP_BODY" "main;work 9007199254740993" "collapsed, exact"
spaa huge nanoseconds 4611686018427387904 4611686018427387904 >/dev/null
http GET '/api/v1/top?service=huge'
assert_contains "$HTTP_BODY" '"total":9232379236109516804,' "merged: 2^53 + 4 + 2^63, past int64, exact ($HTTP_BODY)"

# --- patterns that cost far more than their bytes ----------------------------------------------
for pat in '(.*)(.*)(.*)(.*)(.*)\5\4\3\2\1z' '(.*)\1z' '((a{255}){255}){255}'; do
  enc=$(jq -rn --arg p "$pat" '$p|@uri')
  t0=$(date +%s)
  http GET "/api/v1/profiles/$US/top?focus=$enc"
  assert_eq 400 "$HTTP_CODE" "focus '$pat' refused"
  assert_contains "$HTTP_BODY" "'focus'" "the refusal names the parameter ($HTTP_BODY)"
  http GET "/api/v1/top?service=clock&ignore=$enc"
  assert_eq 400 "$HTTP_CODE" "ignore '$pat' refused on a merged view"
  (($(date +%s) - t0 < 5)) || fail "'$pat' took $(($(date +%s) - t0)) s to refuse"
done
http GET "/api/v1/profiles/$US/top?focus=%5Ew.r%7B1%2C2%7Dk%24"
assert_eq 200 "$HTTP_CODE" "an ordinary pattern ($HTTP_BODY)"
assert_eq 3 "$(jq -r .total <<<"$HTTP_BODY")" "focus=^w.r{1,2}k\$ keeps work's stack (3 us)"
http GET /healthz
assert_eq 200 "$HTTP_CODE" "healthz after the refusals"
stop_server
echo ok
