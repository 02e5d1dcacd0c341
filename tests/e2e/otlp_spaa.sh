#!/usr/bin/env bash
# The SPAA side of OTLP ingest: every profile stored from the OTLP vectors (protobuf and JSON)
# downloads as SPAA that `spaa-relay validate -` accepts, and `spaa-relay convert --from otlp
# FILE -o DIR` writes one valid SPAA file per OTLP profile.
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:?}/fixtures/otlp"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no $FIX"
  exit 77
fi

# vector -> OTLP profiles it holds
declare -A COUNT=(
  [v1dev_01_cpu_basic]=1 [v1dev_02_native_inlined_buildid]=1 [v1dev_03_multi_resource_scope]=4
  [v1dev_04_attributes_links_payload]=1 [v1dev_05_timestamps_offcpu]=2 [v1dev_06_minimal]=1
  [v1exp_01_ebpf_cpu]=1 [pyroscope_otel-ebpf-profile.pb]=82
)

# --- stored profiles validate ------------------------------------------------------------
start_server
total=0
for v in "${!COUNT[@]}"; do
  path=/v1development/profiles
  [[ $v == v1exp_* ]] && path=/v1experimental/profiles
  http POST "$path" -H 'Content-Type: application/x-protobuf' --data-binary @"$FIX/$v.bin"
  assert_eq 200 "$HTTP_CODE" "$v.bin"
  http POST "$path" -H 'Content-Type: application/json' --data-binary @"$FIX/$v.json"
  assert_eq 200 "$HTTP_CODE" "$v.json"
  total=$((total + COUNT[$v]))
done
http GET "/api/v1/profiles?source=otlp&limit=1000"
ids=$(grep -o '"id":"[0-9a-f]*"' <<<"$HTTP_BODY" | sed 's/"id":"//; s/"$//')
n=$(grep -c . <<<"$ids")
# the JSON twin of a vector with profile_ids finds them already stored: 01, 04, v1exp_01
assert_eq $((2 * total - 3)) "$n" "profiles stored"
for id in $ids; do
  code=$(curl -sS -o "$E2E_TMP/p.spaa" -w '%{http_code}' "$SERVER_URL/api/v1/profiles/$id/spaa" ||
    true)
  assert_eq 200 "$code" "SPAA download of $id ($(head -c 200 "$E2E_TMP/p.spaa"))"
  out=$("$SPAA_BIN" validate - <"$E2E_TMP/p.spaa" 2>&1) ||
    fail "stored profile $id does not validate: $out"
done
stop_server || fail "the server did not exit 0"

# --- convert --from otlp: one SPAA per profile ----------------------------------------------
for v in "${!COUNT[@]}"; do
  for ext in bin json; do
    out="$E2E_TMP/conv-$v-$ext"
    mkdir -p "$out"
    msg=$("$SPAA_BIN" convert --from otlp "$FIX/$v.$ext" -o "$out" 2>&1) ||
      fail "convert --from otlp $v.$ext: $msg"
    files=("$out"/*)
    [[ -e "${files[0]}" ]] || files=()
    assert_eq "${COUNT[$v]}" "${#files[@]}" "SPAA files written for $v.$ext"
    for f in "${files[@]}"; do
      msg=$("$SPAA_BIN" validate "$f" 2>&1) || fail "$f does not validate: $msg"
    done
  done
  # the binary and JSON forms give the same SPAA files (whatever their names)
  assert_eq "$(md5sum "$E2E_TMP/conv-$v-bin"/* | cut -c1-32 | sort)" \
    "$(md5sum "$E2E_TMP/conv-$v-json"/* | cut -c1-32 | sort)" \
    "$v: SPAA from .bin and .json"
done
# -o naming no existing directory: one profile is written as that file, several into a new
# directory of that name (written as they are converted, each model freed in turn)
"$SPAA_BIN" convert --from otlp "$FIX/v1dev_03_multi_resource_scope.bin" -o "$E2E_TMP/new03" ||
  fail "convert v1dev_03 into a new directory"
[[ -d "$E2E_TMP/new03" ]] || fail "no directory made for v1dev_03's four profiles"
assert_eq "$(cd "$E2E_TMP/conv-v1dev_03_multi_resource_scope-bin" && md5sum * | sort)" \
  "$(cd "$E2E_TMP/new03" && md5sum * | sort)" "v1dev_03 into a new directory: the same files"
"$SPAA_BIN" convert --from otlp "$FIX/v1dev_01_cpu_basic.bin" -o "$E2E_TMP/one.spaa" ||
  fail "convert v1dev_01 into a file"
[[ -f "$E2E_TMP/one.spaa" ]] || fail "v1dev_01's one profile not written as a file"
cmp -s "$E2E_TMP/one.spaa" "$E2E_TMP/conv-v1dev_01_cpu_basic-bin"/* ||
  fail "v1dev_01 as a file differs from the one written into a directory"
# a gzip or zstd file is read decompressed, as the server undoes a Content-Encoding
gzip -c "$FIX/v1dev_01_cpu_basic.bin" >"$E2E_TMP/one.bin.gz"
"$SPAA_BIN" convert --from otlp "$E2E_TMP/one.bin.gz" -o "$E2E_TMP/one-gz.spaa" ||
  fail "convert a gzipped OTLP request"
cmp -s "$E2E_TMP/one.spaa" "$E2E_TMP/one-gz.spaa" || fail "the gzipped request converts otherwise"
if command -v zstd >/dev/null; then
  zstd -q -c "$FIX/v1dev_01_cpu_basic.json" >"$E2E_TMP/one.json.zst"
  "$SPAA_BIN" convert --from otlp "$E2E_TMP/one.json.zst" -o "$E2E_TMP/one-zst.spaa" ||
    fail "convert a zstd OTLP-JSON request"
  cmp -s "$E2E_TMP/one.spaa" "$E2E_TMP/one-zst.spaa" || fail "the zstd OTLP-JSON converts otherwise"
fi
head -c 100 "$E2E_TMP/one.bin.gz" >"$E2E_TMP/cut.gz"
msg=$("$SPAA_BIN" convert --from otlp "$E2E_TMP/cut.gz" -o "$E2E_TMP/cut.spaa" 2>&1) &&
  fail "a truncated gzip converted"
assert_contains "$msg" "gzip" "a truncated gzip input is named as such"
echo "PASS [$E2E_NAME]"
