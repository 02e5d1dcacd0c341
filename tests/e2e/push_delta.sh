#!/usr/bin/env bash
# The `__delta__` label of a Pyroscope push changes nothing: the same cumulative heap profile
# (memory, alloc_* and inuse_* types) pushed twice with `__delta__=true`, then with "false",
# is stored three times with the same totals, the label kept as a label. As Pyroscope's v2
# storage, which drops the label and computes no delta (its v1 ingester subtracted each
# series' previous alloc_* profile and dropped the first; README, "Pyroscope's push API").
source "$(dirname "$0")/lib.bash"

HEAP="${SPAA_SHARED:-}/fixtures/pprof/pyroscope_heap"
if [[ ! -f "$HEAP" ]]; then
  echo "skip [$E2E_NAME]: no $HEAP"
  exit 77
fi
command -v jq >/dev/null || fail "jq is needed"
BUILD="/usr/bin/python3 $(dirname "$0")/../grpc/push_request.py"
start_server
for delta in true true false; do
  $BUILD proto "$E2E_TMP/req.pb" "service_name=heapapp;__name__=memory;__delta__=$delta@$HEAP"
  http POST /push.v1.PusherService/Push -H 'Content-Type: application/proto' \
    --data-binary @"$E2E_TMP/req.pb"
  assert_eq 200 "$HTTP_CODE" "push with __delta__=$delta ($HTTP_BODY)"
done
list=$(curl -sS "$SERVER_URL/api/v1/profiles?service=heapapp")
assert_eq 3 "$(jq '.profiles | length' <<<"$list")" "every push stored, the first one too"
assert_eq 1 "$(jq -c '[.profiles[].events] | unique | length' <<<"$list")" \
  "the same totals for every push ($(jq -c '[.profiles[].events]' <<<"$list"))"
assert_eq "true" "$(jq -r '.profiles[0].events[0].totals.alloc_space > 0' <<<"$list")" \
  "alloc_space kept as sent"
assert_eq "false,true,true" "$(jq -r '[.profiles[].labels.__delta__] | sort | join(",")' <<<"$list")" \
  "__delta__ kept as a label"
stop_server || fail "the server did not exit cleanly"
echo "ok [$E2E_NAME]"
