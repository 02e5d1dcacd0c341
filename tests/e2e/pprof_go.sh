#!/usr/bin/env bash
# A real pprof client: tests/e2e/go (runtime/pprof, standard library only) writes a CPU
# profile of about one second of busy work and a heap profile; curl pushes them to /ingest
# (raw and multipart, as Pyroscope SDKs do) and to /v1/pprof; the stored profiles are read
# back and their per-type totals compared with `go tool pprof -raw`; the CPU profile's pprof
# export (GET /api/v1/profiles/ID/pprof) pushed again gives the same stack ids. Needs
# Debian's golang-go: without a `go` binary the test is skipped (exit 77).
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/pprof_lib.bash"

if ! command -v go >/dev/null; then
  echo "skip [$E2E_NAME]: Go is not installed (apt-get install golang-go; scripts/install-deps.sh does)"
  exit 77
fi

SRC="$(cd "$(dirname "$0")/go" && pwd)"
export GOCACHE="${SPAA_BUILD:-$E2E_TMP}/go-cache" GOPATH="$E2E_TMP/gopath" GOFLAGS=-mod=mod
export GOTOOLCHAIN=local GOPROXY=off GOTELEMETRY=off
(cd "$SRC" && go build -o "$E2E_TMP/pprofgen" .) || fail "go build of $SRC failed"
"$E2E_TMP/pprofgen" -cpu "$E2E_TMP/cpu.pprof" -heap "$E2E_TMP/heap.pprof" -seconds 1 ||
  fail "the Go program failed"
CPU="$E2E_TMP/cpu.pprof" HEAP="$E2E_TMP/heap.pprof"
cpu_want=$(go_totals "$CPU")
assert_contains "$cpu_want" "cpu=" "the Go CPU profile has CPU samples"

# frames_with ID NAME: how many frames of a stored profile have NAME in their function.
frames_with() {
  http GET "/api/v1/profiles/$1/spaa"
  assert_eq 200 "$HTTP_CODE" "SPAA of $1"
  printf '%s\n' "$HTTP_BODY" |
    jq -r --arg f "$2" 'select(.type == "frame" and (.func | contains($f))) | .func' | wc -l
}

start_server --ingest-token gotoken
AUTH=(-H 'Authorization: Bearer gotoken')

# CPU: /ingest raw, as pyroscope-go's plain upload
now=$(date +%s)
http POST "/ingest?name=goapp.cpu%7Blang%3Dgo%7D&from=$((now - 1))&until=$now&format=pprof&sampleRate=100&spyName=gospy" \
  "${AUTH[@]}" -H 'Content-Type: application/octet-stream' --data-binary @"$CPU"
assert_eq 200 "$HTTP_CODE" "Go CPU profile to /ingest: $HTTP_BODY"
id=$(only_id goapp)
push_readback "$CPU" "$id" "Go CPU profile via /ingest"
(($(frames_with "$id" main.spin) > 0)) || fail "no main.spin frame in the Go CPU profile"

# heap: /ingest multipart with the SDK's sample_type_config, Basic auth as Alloy sends it
printf '%s' '{"alloc_objects":{"units":"objects"},"alloc_space":{"units":"bytes"},"inuse_objects":{"units":"objects","aggregation":"average"},"inuse_space":{"units":"bytes","aggregation":"average"}}' \
  >"$E2E_TMP/stc.json"
http POST "/ingest?name=goheap.alloc_objects%7Blang%3Dgo%7D&from=$now&until=$now&spyName=gospy" \
  -u "tenant:gotoken" -F "profile=@$HEAP;filename=profile.pprof" -F "sample_type_config=<$E2E_TMP/stc.json"
assert_eq 200 "$HTTP_CODE" "Go heap profile to /ingest (multipart): $HTTP_BODY"
id=$(only_id goheap)
push_readback "$HEAP" "$id" "Go heap profile via /ingest multipart"
(($(frames_with "$id" main.allocate) > 0)) || fail "no main.allocate frame in the Go heap profile"

# both to /v1/pprof
http POST "/v1/pprof?service=gocpu" "${AUTH[@]}" --data-binary @"$CPU"
assert_eq 204 "$HTTP_CODE" "Go CPU profile to /v1/pprof"
push_readback "$CPU" "$(only_id gocpu)" "Go CPU profile via /v1/pprof"
# stack_ids ID: the sorted stack ids of a stored profile
stack_ids() {
  http GET "/api/v1/profiles/$1/spaa"
  assert_eq 200 "$HTTP_CODE" "SPAA of $1"
  printf '%s\n' "$HTTP_BODY" | jq -r 'select(.type == "stack") | .id' | sort
}
curl -sS -o "$E2E_TMP/cpu.export.pb.gz" "$SERVER_URL/api/v1/profiles/$(only_id gocpu)/pprof" ||
  fail "GET the Go CPU profile's pprof"
http POST "/v1/pprof?service=gocpu2" "${AUTH[@]}" --data-binary @"$E2E_TMP/cpu.export.pb.gz"
assert_eq 204 "$HTTP_CODE" "the Go CPU profile's pprof export to /v1/pprof"
assert_eq "$(stack_ids "$(only_id gocpu)")" "$(stack_ids "$(only_id gocpu2)")" \
  "stack ids of the Go CPU profile after its pprof export was pushed again"
http POST /v1/pprof -H 'X-Service-Name: goheap2' "${AUTH[@]}" --data-binary @"$HEAP"
assert_eq 204 "$HTTP_CODE" "Go heap profile to /v1/pprof"
push_readback "$HEAP" "$(only_id goheap2)" "Go heap profile via /v1/pprof"

# names go tool pprof would cut as C++ templates ("<module>"): the export writes no system
# name copied from the name, so `go tool pprof -top` shows them as the original file does
PYSPY="${SPAA_SHARED:-}/fixtures/pprof/pyroscope_pyspy-1.pb.gz"
if [[ -f "$PYSPY" ]]; then
  http POST "/v1/pprof?service=pyspy" "${AUTH[@]}" --data-binary @"$PYSPY"
  assert_eq 204 "$HTTP_CODE" "py-spy pprof to /v1/pprof"
  curl -sS -o "$E2E_TMP/pyspy.export.pb.gz" "$SERVER_URL/api/v1/profiles/$(only_id pyspy)/pprof" ||
    fail "GET the py-spy profile's pprof"
  want=$(go tool pprof -top "$PYSPY" 2>/dev/null | grep -c '<module>' || true)
  got=$(go tool pprof -top "$E2E_TMP/pyspy.export.pb.gz" 2>/dev/null | grep -c '<module>' || true)
  ((want > 0)) || fail "the py-spy fixture shows no <module> in go tool pprof"
  assert_eq "$want" "$got" "lines naming <module> in go tool pprof -top, original vs export"
  # the merged export keeps each stack's labels: go tool pprof -tags as on the original
  LABELS="${SPAA_SHARED}/fixtures/pprof/pyroscope_go.cpu.labels.pprof"
  http POST "/v1/pprof?service=golabels" "${AUTH[@]}" --data-binary @"$LABELS"
  assert_eq 204 "$HTTP_CODE" "the labelled Go pprof to /v1/pprof"
  curl -sS -o "$E2E_TMP/merged.pb.gz" "$SERVER_URL/api/v1/pprof?service=golabels" ||
    fail "GET the merged pprof"
  assert_eq "$(go tool pprof -tags "$LABELS" 2>/dev/null)" \
    "$(go tool pprof -tags "$E2E_TMP/merged.pb.gz" 2>/dev/null)" \
    "go tool pprof -tags, the original vs the merged export"
else
  echo "note [$E2E_NAME]: no shared fixtures, the py-spy export check skipped"
fi

stop_server || fail "the server did not exit cleanly"
echo "ok [$E2E_NAME]: Go CPU ($cpu_want) and heap profiles stored and read back"
