#!/usr/bin/env bash
# An empty profile id: the core folds runs of '/', so GET /api/v1/profiles//top reaches
# /api/v1/profiles/{id} with the id "top". It is a 400 saying the id is empty, for every view
# of one profile and whatever parameters the view was given, never a 404 "no profile with id
# top"; an unknown id is still a 404.
source "$(dirname "$0")/lib.bash"
command -v jq >/dev/null || fail "jq is required"
start_server

for view in top flamegraph collapsed speedscope summary spaa pprof; do
  for q in "" "?metric=cpu"; do
    http GET "/api/v1/profiles//$view$q"
    assert_eq 400 "$HTTP_CODE" "GET /api/v1/profiles//$view$q ($HTTP_BODY)"
    assert_eq bad_request "$(jq -r .error <<<"$HTTP_BODY")" "GET /api/v1/profiles//$view$q"
    assert_contains "$(jq -r .detail <<<"$HTTP_BODY")" "the profile id is empty" \
      "GET /api/v1/profiles//$view$q"
    assert_contains "$(jq -r .detail <<<"$HTTP_BODY")" "/api/v1/profiles/{id}/$view" \
      "the answer names the route"
  done
done
http HEAD "/api/v1/profiles//top" -I --max-time 10
assert_eq 400 "$HTTP_CODE" "HEAD /api/v1/profiles//top"
http GET "/api/v1/profiles/0123456789abcdef0123456789abcdef"
assert_eq 404 "$HTTP_CODE" "an unknown id ($HTTP_BODY)"
http GET "/api/v1/profiles/0123456789abcdef0123456789abcdef/top"
assert_eq 404 "$HTTP_CODE" "an unknown id's view ($HTTP_BODY)"
http GET "/api/v1/profiles/nosuchview"
assert_eq 404 "$HTTP_CODE" "an id that is no view's name ($HTTP_BODY)"
stop_server || fail "server exit status"
echo "ok [$E2E_NAME]"
