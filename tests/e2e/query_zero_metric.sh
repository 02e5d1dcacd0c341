#!/usr/bin/env bash
# A metric the profile declares but no stack carries: the .NET pprof fixture has six sample
# types, several of them (exception, lock_count) all zero, which the converter writes on no
# stack. Every view of one profile (/top, /flamegraph, /collapsed, /speedscope, /summary)
# answers 200 and empty for it (total 0, no rows, the declared unit), a diff of the profile
# with itself too, and the merged views over a selection of it; a metric the profile never
# had is still a 400 naming it.
source "$(dirname "$0")/lib.bash"
F=${SPAA_SHARED:-}/fixtures
if [[ ! -f "$F/pprof/pyroscope_dotnet.labels.pprof" ]]; then
  echo "skip [$E2E_NAME]: shared fixtures not found"
  exit 0
fi
command -v jq >/dev/null || fail "jq is required"
start_server

http POST '/v1/pprof?service=dn' --data-binary @"$F/pprof/pyroscope_dotnet.labels.pprof"
[[ $HTTP_CODE == 200 || $HTTP_CODE == 204 ]] || fail "pprof push: $HTTP_CODE $HTTP_BODY"
ID=$(printf '%s\n' "$HTTP_HEADERS" | sed -n 's/^X-Spaa-Profile-Ids: //Ip' | head -n1)
[[ "$ID" =~ ^[0-9a-f]{32}$ ]] || fail "no profile id: $HTTP_HEADERS"
P="/api/v1/profiles/$ID"

# the declared types are in the header; exception and lock_count are on no stack
http GET "$P/spaa"
assert_eq 200 "$HTTP_CODE" "the profile's SPAA"
head -n1 <<<"$HTTP_BODY" | jq -e '[.x_pprof_sample_types[].type] | index("exception") != null' \
  >/dev/null || fail "exception is not a declared sample type: $(head -c 600 <<<"$HTTP_BODY")"
if grep -q '"metric":"exception"' <<<"$HTTP_BODY"; then
  fail "a stack carries exception: the fixture no longer has an all-zero column"
fi

for m in exception lock_count; do
  http GET "$P/top?metric=$m"
  assert_eq 200 "$HTTP_CODE" "/top?metric=$m ($HTTP_BODY)"
  assert_eq "$m count 0 0 0" "$(jq -r '"\(.metric) \(.unit) \(.total) \(.functions) \(.top | length)"' <<<"$HTTP_BODY")" "/top?metric=$m"
  http GET "$P/flamegraph?metric=$m"
  assert_eq 200 "$HTTP_CODE" "/flamegraph?metric=$m ($HTTP_BODY)"
  assert_eq "0 0 0" "$(jq -r '"\(.total) \(.nodes) \(.tree.children | length)"' <<<"$HTTP_BODY")" "/flamegraph?metric=$m"
  http GET "$P/collapsed?metric=$m"
  assert_eq 200 "$HTTP_CODE" "/collapsed?metric=$m ($HTTP_BODY)"
  assert_eq "" "$HTTP_BODY" "/collapsed?metric=$m"
  http GET "$P/speedscope?metric=$m"
  assert_eq 200 "$HTTP_CODE" "/speedscope?metric=$m ($HTTP_BODY)"
  assert_eq 0 "$(jq '.profiles[0].samples | length' <<<"$HTTP_BODY")" "/speedscope?metric=$m"
  http GET "$P/summary?metric=$m"
  assert_eq 200 "$HTTP_CODE" "/summary?metric=$m ($HTTP_BODY)"
  assert_contains "$HTTP_BODY" "metric $m (count), total 0" "/summary?metric=$m"
  http GET "/api/v1/diff?base=$ID&target=$ID&metric=$m"
  assert_eq 200 "$HTTP_CODE" "a diff of the profile with itself on $m ($HTTP_BODY)"
  assert_eq "0 0" "$(jq -r '"\(.base_total) \(.target_total)"' <<<"$HTTP_BODY")" "diff on $m"
  # merged over a selection that holds the profile: empty too
  http GET "/api/v1/top?service=dn&metric=$m"
  assert_eq 200 "$HTTP_CODE" "merged /top?metric=$m ($HTTP_BODY)"
  assert_eq "$m count 0 0" "$(jq -r '"\(.metric) \(.unit) \(.total) \(.top | length)"' <<<"$HTTP_BODY")" "merged /top?metric=$m"
done

# a metric with values still has them; one the profile never had is a 400 naming it
http GET "$P/top?metric=cpu&limit=1"
assert_eq 200 "$HTTP_CODE" "/top?metric=cpu"
[[ $(jq '.total > 0 and (.top | length) == 1' <<<"$HTTP_BODY") == true ]] || fail "/top?metric=cpu: $HTTP_BODY"
for path in "$P/top?metric=nosuch" "$P/flamegraph?metric=nosuch" "/api/v1/top?service=dn&metric=nosuch"; do
  http GET "$path"
  assert_eq 400 "$HTTP_CODE" "$path ($HTTP_BODY)"
  assert_contains "$HTTP_BODY" "nosuch" "$path names the metric"
done
stop_server || fail "server exit status"
echo "ok [$E2E_NAME]"
