#!/usr/bin/env bash
# The disk holding a SQLite store fills up: uploads are answered 503 with Retry-After and a
# body that says the disk is full (senders retry a 503; a 500 they drop), /readyz is 503 with
# the same reason, the server stays up, and once there is room again uploads are stored and
# /readyz is 200; every profile acknowledged before is there. A body too large to be read into
# memory (kept in a file in the data directory) gets the same answer. The disk is a 16 MiB
# tmpfs.
source "$(dirname "$0")/lib.bash"
[[ $(id -u) == 0 ]] || fail "mounting the small file system needs root (the suite runs as root)"
small="$E2E_TMP/small"
mkdir -p "$small"
mount -t tmpfs -o size=16m spaa-e2e-full "$small" || fail "cannot mount a tmpfs on $small"
trap 'umount -l "$small" 2>/dev/null || true; e2e_cleanup' EXIT

start_server --grpc-listen '' --data-dir "$small/d"
gen=$(dirname "$0")/gen_pprof.py
acked=() status=
for seed in $(seq 1 40); do
  python3 "$gen" "$E2E_TMP/p.pb" 2 "$seed"
  http POST "/ingest?name=full.cpu&format=pprof" --data-binary @"$E2E_TMP/p.pb"
  if [[ "$HTTP_CODE" != 200 ]]; then
    status=$HTTP_CODE
    break
  fi
  acked+=("$(printf '%s\n' "$HTTP_HEADERS" | sed -n 's/^X-Spaa-Profile-Ids: //Ip' | head -n1)")
done
[[ -n "$status" ]] || fail "40 distinct uploads fit in 16 MiB: the disk never filled"
(( ${#acked[@]} > 0 )) || fail "the first upload already failed ($HTTP_BODY)"
assert_eq 503 "$status" "an upload onto a full disk ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "the disk holding the store is full" "the answer says why"
assert_contains "$(printf '%s\n' "$HTTP_HEADERS" | tr 'A-Z' 'a-z')" "retry-after:" "Retry-After"
# a body large enough to be kept in a file while it is read (SPAA_HTTP_FILE_BODY) finds no
# room for that file either: 503 that says so, with Retry-After
python3 "$gen" "$E2E_TMP/big.pb" 6 99
http POST "/ingest?name=full.cpu&format=pprof" --data-binary @"$E2E_TMP/big.pb"
assert_eq 503 "$HTTP_CODE" "a 6 MiB upload onto a full disk ($HTTP_BODY)"
assert_contains "$HTTP_BODY" "is full: the" "the answer says the disk is full"
assert_contains "$(printf '%s\n' "$HTTP_HEADERS" | tr 'A-Z' 'a-z')" "retry-after:" "Retry-After"
http GET /readyz
assert_eq 503 "$HTTP_CODE" "/readyz while the disk is full"
assert_contains "$HTTP_BODY" "the disk holding the store is full" "/readyz says why"
http GET /healthz
assert_eq 200 "$HTTP_CODE" "the server is up"

# room again: the next upload is stored and the store is ready
mount -o remount,size=96m "$small" || fail "cannot grow the tmpfs"
http POST "/ingest?name=full.cpu&format=pprof" --data-binary @"$E2E_TMP/p.pb"
assert_eq 200 "$HTTP_CODE" "an upload once there is room ($HTTP_BODY)"
http GET /readyz
assert_eq 200 "$HTTP_CODE" "/readyz once a write went through ($HTTP_BODY)"
for id in "${acked[@]}"; do
  http GET "/api/v1/profiles/$id"
  assert_eq 200 "$HTTP_CODE" "acknowledged profile $id"
done
echo "ok [$E2E_NAME]: ${#acked[@]} profiles stored before the disk filled"
