#!/usr/bin/env bash
# keep_original: by default an upload is not stored beside its conversion (the conversion is
# lossless: the stored SPAA equals `convert`'s); with --keep-original always it is, and its
# zstd bytes decompress to the upload byte for byte. durability=normal stores and reads back
# the same. Reads the SQLite file with Debian's sqlite3 shell after the server stopped.
source "$(dirname "$0")/lib.bash"

command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (scripts/install-deps.sh installs it)"
FIX="${SPAA_SHARED:-}/fixtures/pprof/google-pprof_sample.cpu"
if [[ ! -f "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no shared fixtures ($FIX)"
  exit 77
fi

# push FIX under NAME; the stored SPAA must equal the offline conversion with the same name
push_and_compare() {
  local name=$1
  http POST "/ingest?name=$name.cpu&format=pprof" --data-binary @"$FIX"
  assert_eq 200 "$HTTP_CODE" "push $name: $HTTP_BODY"
  http GET "/api/v1/profiles?service=$name"
  assert_eq 200 "$HTTP_CODE" "list $name"
  local id
  id=$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0].id')
  [[ -n "$id" && "$id" != null ]] || fail "no stored profile for $name: $HTTP_BODY"
  curl -sS -o "$E2E_TMP/$name.stored.spaa" "$SERVER_URL/api/v1/profiles/$id/spaa" ||
    fail "download $id"
  "$SPAA_BIN" convert --from pprof --name "$name.cpu" "$FIX" -o "$E2E_TMP/$name.offline.spaa" ||
    fail "offline convert"
  # the time range comes from the push when the pprof has none: compare past the header
  cmp <(tail -n +2 "$E2E_TMP/$name.stored.spaa") <(tail -n +2 "$E2E_TMP/$name.offline.spaa") ||
    fail "$name: stored SPAA differs from the offline conversion"
}

originals() { sqlite3 "$1" "SELECT count(*), coalesce(sum(length(original)), 0) FROM profile WHERE original IS NOT NULL"; }

# default: nothing kept
start_server
push_and_compare never
stop_server || fail "server exit"
got=$(originals "$SERVER_DATA/spaa-relay.db")
assert_eq "0|0" "$got" "default keep_original=never: no original stored"

# always: kept, and it is the upload
start_server --keep-original always --durability normal
push_and_compare always
stop_server || fail "server exit"
got=$(originals "$SERVER_DATA/spaa-relay.db")
[[ "$got" == 1\|* ]] || fail "keep_original=always: one original expected, got $got"
sqlite3 "$SERVER_DATA/spaa-relay.db" "SELECT writefile('$E2E_TMP/orig.zst', original) FROM profile" >/dev/null
zstd -q -d -c "$E2E_TMP/orig.zst" >"$E2E_TMP/orig.bin" || fail "the stored original is not zstd"
cmp "$E2E_TMP/orig.bin" "$FIX" || fail "the stored original differs from the upload"

# a bad value is refused at start with the setting named
if "$SPAA_BIN" serve --keep-original sometimes --data-dir "$E2E_TMP/bad" 2>"$E2E_TMP/bad.log"; then
  fail "--keep-original sometimes was accepted"
fi
assert_contains "$(cat "$E2E_TMP/bad.log")" "--keep-original: bad value 'sometimes'" "bad value message"
echo "ok [$E2E_NAME]"
