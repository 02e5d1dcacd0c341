#!/usr/bin/env bash
# Every file of the shared Sentry fixtures through the real server, with the outcome
# SOURCES.md gives it (bare JSON wrapped in an envelope: V1 with a transaction item, V2 as a
# profile_chunk); accepted profiles are read back through GET /api/v1/profiles and .../spaa,
# pass `spaa-relay validate -`, and equal `spaa-relay convert --from sentry` of the same file.
source "$(dirname "$0")/lib.bash"

FIX=${SPAA_SHARED:-}/fixtures/sentry
if [[ ! -d "$FIX" ]]; then
  echo "skip: no shared fixtures at $FIX"
  exit 77
fi


TXN='{"type":"transaction","transaction":"GET /e2e","release":"e2e@1","environment":"test","contexts":{"trace":{"trace_id":"4b25bc58f14243d8b208d1e22a054164","op":"http.server"}}}'

# wrap TYPE FILE OUT: an envelope with header {}, for "profile" a transaction item first,
# then one item of TYPE holding FILE with an explicit length
wrap() {
  local type=$1 file=$2 out=$3
  {
    printf '{}\n'
    if [[ $type == profile ]]; then
      printf '{"type":"transaction","length":%d}\n%s\n' "${#TXN}" "$TXN"
    fi
    printf '{"type":"%s","length":%d}\n' "$type" "$(wc -c <"$file")"
    cat "$file"
  } >"$out"
}

# post FILE PROJECT: POST an envelope to /api/PROJECT/envelope/ with the key in the query
# string, as SDKs do (no Content-Type); an envelope whose header has a dsn authenticates
# with that alone
post() {
  local qs='?sentry_key=e2ekey&sentry_version=7'
  head -n1 "$1" | grep -q '"dsn"' && qs=
  http POST "/api/$2/envelope/$qs" -H 'Content-Type:' --data-binary @"$1"
}

# The first profile entry of the last answer, as "stored" or "dropped:REASON".
outcome() {
  local first
  first=$(printf '%s' "$HTTP_BODY" | jq -c '.profiles[0] // empty')
  [[ -n "$first" ]] || { echo none; return; }
  if [[ $(jq -r .stored <<<"$first") == true ]]; then
    echo stored
  else
    echo "dropped:$(jq -r .reason <<<"$first")"
  fi
}

# check_stored ENVELOPE NAME: the answer's profile is listed, its SPAA validates and equals
# what `convert` makes of the envelope offline
check_stored() {
  local env=$1 name=$2 id spaa="$E2E_TMP/stored.spaa" conv="$E2E_TMP/convert.spaa"
  id=$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0].id')
  [[ "$id" =~ ^[0-9a-f]{32}$ ]] || fail "$name: profile id '$id'"
  http GET "/api/v1/profiles?source=sentry"
  assert_eq 200 "$HTTP_CODE" "$name: list"
  assert_contains "$HTTP_BODY" "\"id\":\"$id\"" "$name: listed"
  assert_eq "\"$PROJECT\"" "$(printf '%s' "$HTTP_BODY" |
    jq -c --arg id "$id" '.profiles[] | select(.id == $id) | .service')" "$name: service"
  curl -sS -o "$spaa" -w '%{http_code}' "$SERVER_URL/api/v1/profiles/$id/spaa" >"$E2E_TMP/code"
  assert_eq 200 "$(cat "$E2E_TMP/code")" "$name: GET .../spaa"
  head -n1 "$spaa" | grep -q '"source_tool":"sentry"' || fail "$name: SPAA header: $(head -c 300 "$spaa")"
  "$SPAA_BIN" validate - <"$spaa" >"$E2E_TMP/validate.out" 2>&1 ||
    fail "$name: the stored SPAA does not validate: $(head -n 5 "$E2E_TMP/validate.out")"
  "$SPAA_BIN" convert --from sentry "$env" >"$conv" 2>"$E2E_TMP/convert.err" ||
    fail "$name: convert failed: $(cat "$E2E_TMP/convert.err")"
  cmp -s "$spaa" "$conv" || fail "$name: convert --from sentry differs from the stored SPAA"
}

PROJECT=42
# FILE AS EXPECTED: AS = profile | profile_chunk | envelope; EXPECTED = stored | dropped:REASON
# | none (no profile item)
CASES=(
  "relay_sample_v1_valid_cocoa.json profile stored"
  "relay_sample_v1_valid_cocoa.json profile_chunk dropped:platform_not_supported"
  "relay_sample_v2_valid_cocoa.json profile_chunk stored"
  "relay_sample_v2_valid_cocoa.json profile dropped:platform_not_supported"
  "relay_legacy_v1_no_transaction_oldschema.json profile dropped:invalid_json"
  "relay_legacy_pre_v1_python.json profile dropped:platform_not_supported"
  "sentry_fixture_js_v1_missing_device_os.json profile dropped:invalid_json"
  "sentry_java_profile_data_v2_fragment.json profile_chunk dropped:invalid_json"
  "vroom_node_v1.json profile stored"
  "vroom_cocoa_legacy_stored.json profile dropped:platform_not_supported"
  "vroomrs_sample_v1_cocoa.json profile dropped:invalid_profile_metadata"
  "vroomrs_sample_v1_python.json profile dropped:not_enough_samples"
  "vroomrs_sample_v2_cocoa.json profile_chunk stored"
  "vroomrs_sample_v2_python.json profile_chunk dropped:not_enough_samples"
  "vroomrs_sample_v2_android.json profile_chunk stored"
  "vroomrs_android_chunk.json profile_chunk dropped:platform_not_supported"
  "vroomrs_android_chunk_2.json profile_chunk dropped:platform_not_supported"
  "vroomrs_android_legacy_profile.json profile dropped:invalid_json"
  "constructed_envelope_transaction_profile_v1.envelope envelope stored"
  "constructed_envelope_profile_chunk_v2.envelope envelope stored"
  "constructed_envelope_profile_chunk_platform_mismatch_implicit_length.envelope envelope dropped:invalid_profile_type"
  "sentry_java_envelope_transaction.envelope envelope none"
  "sentry_java_envelope_session.envelope envelope none"
)

# every file in the folder has a case
for f in "$FIX"/*; do
  b=$(basename "$f")
  [[ $b == SOURCES.md ]] && continue
  # a loop, not `printf | grep -q`: grep leaving early fails the pipe under pipefail
  found=0
  for c in "${CASES[@]}"; do [[ $c == "$b "* ]] && { found=1; break; }; done
  ((found)) || fail "no case for fixture $b"
done

start_server
SHARED_URL=$SERVER_URL
n=0
for c in "${CASES[@]}"; do
  read -r file as want <<<"$c"
  name="$file as $as"
  n=$((n + 1))
  if [[ $as == envelope ]]; then
    env="$FIX/$file"
  else
    env="$E2E_TMP/case$n.envelope"
    wrap "$as" "$FIX/$file" "$env"
  fi
  # fixtures share profile ids: each stored case gets a server of its own
  if [[ $want == stored ]]; then
    start_server
  else
    SERVER_URL=$SHARED_URL
  fi
  post "$env" "$PROJECT"
  assert_eq 200 "$HTTP_CODE" "$name: status ($HTTP_BODY)"
  assert_eq "$want" "$(outcome)" "$name: outcome ($HTTP_BODY)"
  # the answer's id is the envelope's event_id, or absent
  evid=$(head -n1 "$env" | jq -r '.event_id // empty' | tr -d '-')
  assert_eq "$evid" "$(printf '%s' "$HTTP_BODY" | jq -r '.id // empty')" "$name: answer id"
  case $want in
  stored) check_stored "$env" "$name" ;;
  dropped:*)
    [[ -n $(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0].detail // empty') ]] ||
      fail "$name: a dropped profile says why ($HTTP_BODY)"
    ;;
  esac
done

# the session envelope has no event_id and no profile: exactly {}
SERVER_URL=$SHARED_URL
post "$FIX/sentry_java_envelope_session.envelope" "$PROJECT"
assert_eq '{}' "$HTTP_BODY" "envelope without event_id or profile"
# nothing dropped was stored
http GET /api/v1/profiles
assert_eq '[]' "$(printf '%s' "$HTTP_BODY" | jq -c '[.profiles[].id]')" "dropped profiles stored"
echo "ok [$E2E_NAME]: ${#CASES[@]} fixture cases"
