#!/usr/bin/env bash
# The Content-Encodings an OpenTelemetry Collector exporter can send besides gzip, zlib and
# zstd, made by independent implementations (python3-snappy, python3-lz4): snappy (the block
# format, and the framing format sent under the same name), x-snappy-framed, and lz4 frames
# (independent blocks; linked blocks with block and content checksums) on
# /v1development/profiles, each stored profile read back as the fixture's offline
# conversion; a generated request of 2 MiB (many chunks and blocks) stored whole;
# corrupt bodies answered 400 with the OTLP Status naming the coding; bodies decoding past
# the route's cap answered 413; a pprof pushed to /ingest with Content-Encoding: snappy, and
# --max-decompressed holding there.
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:?}/fixtures/otlp"
PFIX="$SPAA_SHARED/fixtures/pprof"
if [[ ! -d "$FIX" || ! -d "$PFIX" ]]; then
  echo "skip [$E2E_NAME]: no $FIX or $PFIX"
  exit 77
fi
command -v jq >/dev/null || fail "jq is needed (scripts/install-deps.sh)"
# Debian's modules, for Debian's python (the python3 on PATH may be another one)
PY=/usr/bin/python3
"$PY" -c 'import snappy, lz4.frame, crcmod' 2>/dev/null ||
  fail "python3-snappy, python3-lz4 and python3-crcmod are needed (scripts/install-deps.sh)"
DEV=/v1development/profiles
PB=application/x-protobuf
JS=application/json

# pack CODING IN OUT: IN compressed by the Python libraries as a Collector exporter would send
# it with that `compression` (lz4-linked: linked blocks, block and content checksums, no
# content size; lz4-4m: 4 MiB blocks; snappy-framed: the framing format).
cat >"$E2E_TMP/pack.py" <<'EOF'
import sys
import lz4.frame
import snappy
import snappy.snappy

coding, src, dst = sys.argv[1:4]
data = open(src, "rb").read()


def framed(d):
    try:
        snappy.snappy._masked_crc32c(b"")
    except SystemError:
        # python3-snappy 0.5.3's own CRC-32C fails on Python 3.11 (PY_SSIZE_T_CLEAN): take
        # python3-crcmod's, the framing itself stays python3-snappy's
        import crcmod.predefined
        snappy.snappy._crc32c = crcmod.predefined.mkCrcFun("crc-32c")
    return snappy.StreamCompressor().add_chunk(d)


out = {
    "snappy": lambda d: snappy.compress(d),
    "snappy-framed": framed,
    "lz4": lambda d: lz4.frame.compress(d),
    "lz4-linked": lambda d: lz4.frame.compress(d, block_linked=True, block_checksum=True,
                                               content_checksum=True, store_size=False),
    "lz4-4m": lambda d: lz4.frame.compress(d, block_size=lz4.frame.BLOCKSIZE_MAX4MB,
                                           compression_level=9),
}[coding](data)
open(dst, "wb").write(out)
EOF
pack() { "$PY" "$E2E_TMP/pack.py" "$@" || fail "pack $1 $2"; }

RESP="$E2E_TMP/resp"
# post PATH FILE CONTENT_TYPE CONTENT_ENCODING: sets HTTP_CODE, the answer in $RESP
post() {
  HTTP_CODE=$(curl -sS -o "$RESP" -w '%{http_code}' -X POST -H "Content-Type: $3" \
    -H "Content-Encoding: $4" --data-binary @"$2" "$SERVER_URL$1" || true)
}
ids() { curl -sS "$SERVER_URL/api/v1/profiles?limit=1000" | jq -r '.profiles[].id' | sort; }

# send VECTOR PACKING CONTENT_ENCODING: the fixture's protobuf packed, POSTed: 200 with an
# empty answer, one profile more, whose SPAA is the fixture's offline conversion
send() {
  local vec=$1 packing=$2 ce=$3 before id
  pack "$packing" "$FIX/$vec.bin" "$E2E_TMP/$vec.$packing"
  before=$(ids)
  post "$DEV" "$E2E_TMP/$vec.$packing" "$PB" "$ce"
  assert_eq 200 "$HTTP_CODE" "$vec as $packing, Content-Encoding: $ce ($(tr -d '\0' <"$RESP"))"
  assert_eq 0 "$(stat -c %s "$RESP")" "$vec as $packing: empty ExportProfilesServiceResponse"
  id=$(comm -13 <(echo "$before") <(ids))
  assert_eq 1 "$(grep -c . <<<"$id")" "$vec as $packing: one profile stored"
  "$SPAA_BIN" convert --from otlp "$FIX/$vec.bin" -o "$E2E_TMP/$vec.offline.spaa" ||
    fail "offline convert $vec"
  assert_eq 200 "$(curl -sS -o "$E2E_TMP/got.spaa" -w '%{http_code}' \
    "$SERVER_URL/api/v1/profiles/$id/spaa")" "$vec as $packing: GET the SPAA of $id"
  cmp -s <(tail -n +2 "$E2E_TMP/got.spaa") <(tail -n +2 "$E2E_TMP/$vec.offline.spaa") ||
    fail "$vec as $packing: $id does not read back as its offline conversion"
}

# The first 3 bytes of the answer in hex: "08 03 12" for a google.rpc.Status of code 3 with a
# message.
status_hex() { od -An -tx1 -N3 "$RESP" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }

start_server
# --- every coding and its variants, on single-profile vectors ----------------------------
send v1dev_01_cpu_basic snappy snappy
send v1dev_02_native_inlined_buildid snappy-framed x-snappy-framed
send v1dev_04_attributes_links_payload snappy-framed snappy # framed, sent as "snappy"
send v1dev_06_minimal lz4-linked lz4
send v1exp_01_ebpf_cpu lz4 lz4
# OTLP/JSON of two profiles, the coding's name in capitals
before=$(ids)
pack lz4 "$FIX/v1dev_05_timestamps_offcpu.json" "$E2E_TMP/05.json.lz4"
post "$DEV" "$E2E_TMP/05.json.lz4" "$JS" LZ4
assert_eq 200 "$HTTP_CODE" "OTLP/JSON as lz4"
assert_eq '{}' "$(cat "$RESP")" "OTLP/JSON as lz4: empty answer"
assert_eq 2 "$(comm -13 <(echo "$before") <(ids) | grep -c .)" "OTLP/JSON as lz4: 2 profiles"

stop_server || fail "the server did not exit 0"

# --- a request of 2 MiB: 2 profiles, many snappy chunks and lz4 blocks, each packing on a
# server of its own (the same profiles again would be found already stored) ----------------
read -r want_count want_cpu < <("$PY" "$(dirname "$0")/gen_otlp.py" "$E2E_TMP/big.pb" 2)
want=$(tr ' ' '\n' <<<"$want_count $want_cpu" | sort -n | xargs)
for packing in snappy snappy-framed lz4 lz4-linked lz4-4m; do
  ce=${packing%%-*}
  [[ "$packing" == snappy-framed ]] && ce=x-snappy-framed
  pack "$packing" "$E2E_TMP/big.pb" "$E2E_TMP/big.$packing"
  start_server
  post "$DEV" "$E2E_TMP/big.$packing" "$PB" "$ce"
  assert_eq 200 "$HTTP_CODE" "2 MiB request as $packing ($(tr -d '\0' <"$RESP" | head -c 300))"
  got=""
  for id in $(ids); do
    got+="$(curl -sS "$SERVER_URL/api/v1/profiles/$id/top?limit=1" |
      grep -o '"total":[0-9]*' | head -1 | cut -d: -f2) "
  done
  assert_eq "$want" "$(tr ' ' '\n' <<<"$got" | grep . | sort -n | xargs)" \
    "2 MiB request as $packing: both profiles' totals"
  stop_server || fail "the server of $packing did not exit 0"
  rm -f "$E2E_TMP/big.$packing"
done

# --- faults: corrupt 400, past the route's 64 MiB cap 413 ------------------------------------
start_server
n0=$(ids | grep -c . || true)
pack snappy "$FIX/v1dev_06_minimal.bin" "$E2E_TMP/06.snappy"
head -c -1 "$E2E_TMP/06.snappy" >"$E2E_TMP/06.cut"
post "$DEV" "$E2E_TMP/06.cut" "$PB" snappy
assert_eq 400 "$HTTP_CODE" "truncated snappy"
assert_eq "08 03 12" "$(status_hex)" "truncated snappy: Status{code 3}"
assert_contains "$(tr -d '\0' <"$RESP")" "corrupt snappy body" "truncated snappy: message"
pack snappy-framed "$FIX/v1dev_06_minimal.bin" "$E2E_TMP/06.sz"
"$PY" - "$E2E_TMP/06.sz" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[-1] ^= 0x20  # a flipped bit in the data: its chunk's CRC-32C no longer matches
open(sys.argv[1], "wb").write(b)
EOF
post "$DEV" "$E2E_TMP/06.sz" "$JS" x-snappy-framed
assert_eq 400 "$HTTP_CODE" "x-snappy-framed with a bad checksum"
assert_contains "$(cat "$RESP")" '{"code":3,"message":"' "bad checksum: JSON Status"
assert_contains "$(cat "$RESP")" "corrupt x-snappy-framed body: the checksum of the chunk" \
  "bad checksum: message"
pack lz4-linked "$FIX/v1dev_06_minimal.bin" "$E2E_TMP/06.lz4"
printf 'trailing' >>"$E2E_TMP/06.lz4"
post "$DEV" "$E2E_TMP/06.lz4" "$PB" lz4
assert_eq 400 "$HTTP_CODE" "lz4 with trailing garbage"
assert_contains "$(tr -d '\0' <"$RESP")" "corrupt lz4 body: 8 unexpected bytes after the end" \
  "lz4 trailing garbage: message"
post "$DEV" "$E2E_TMP/06.lz4" "$PB" x-snappy-framed
assert_eq 400 "$HTTP_CODE" "lz4 sent as x-snappy-framed"
assert_contains "$(tr -d '\0' <"$RESP")" "does not start with a stream identifier" "wrong coding"
head -c 67108865 /dev/zero >"$E2E_TMP/zeros"
pack lz4 "$E2E_TMP/zeros" "$E2E_TMP/zeros.lz4"
pack snappy "$E2E_TMP/zeros" "$E2E_TMP/zeros.snappy"
rm -f "$E2E_TMP/zeros"
post "$DEV" "$E2E_TMP/zeros.lz4" "$PB" lz4
assert_eq 413 "$HTTP_CODE" "lz4 decoding past 64 MiB"
assert_eq "08 08 12" "$(status_hex)" "413 Status{code 8 RESOURCE_EXHAUSTED}"
assert_contains "$(tr -d '\0' <"$RESP")" "lz4 body decodes to more than the 67108864-byte cap" \
  "413 lz4 message"
post "$DEV" "$E2E_TMP/zeros.snappy" "$JS" snappy
assert_eq 413 "$HTTP_CODE" "a snappy block declaring more than 64 MiB"
assert_contains "$(cat "$RESP")" "(it declares 67108865 bytes)" "413 snappy message"
assert_eq "$n0" "$(ids | grep -c . || true)" "nothing stored from the faults"
stop_server || fail "the faults server did not exit 0"

# --- pprof on /ingest: Content-Encoding snappy; --max-decompressed ---------------------------
start_server --max-decompressed 1m
PP=$(ls "$PFIX"/*.pb.gz "$PFIX"/*.pprof 2>/dev/null | grep -v invalid | head -n1 || true)
[[ -n "$PP" ]] || fail "no pprof fixture in $PFIX"
pack snappy "$PP" "$E2E_TMP/pp.snappy"
http POST "/ingest?name=snappy.cpu&format=pprof" -H 'Content-Encoding: snappy' \
  --data-binary @"$E2E_TMP/pp.snappy"
assert_eq 200 "$HTTP_CODE" "/ingest, a pprof as snappy: $HTTP_BODY"
http GET "/api/v1/profiles?service=snappy"
assert_eq 1 "$(printf '%s' "$HTTP_BODY" | jq '.profiles | length')" "the snappy pprof listed"
id=$(printf '%s' "$HTTP_BODY" | jq -r '.profiles[0].id')
assert_read_back "$SERVER_URL" "$(dirname "$PP")" <(echo "$id $(basename "$PP")")
head -c 1048577 /dev/zero >"$E2E_TMP/1m1"
pack lz4 "$E2E_TMP/1m1" "$E2E_TMP/1m1.lz4"
http POST "/ingest?name=big.cpu&format=pprof" -H 'Content-Encoding: lz4' \
  --data-binary @"$E2E_TMP/1m1.lz4"
assert_eq 413 "$HTTP_CODE" "/ingest, lz4 past --max-decompressed"
assert_contains "$HTTP_BODY" "lz4 body decodes to more than the 1048576-byte cap" "/ingest 413"
printf '\x0a\x10hello' >"$E2E_TMP/short.snappy"
http POST "/ingest?name=bad.cpu&format=pprof" -H 'Content-Encoding: snappy' \
  --data-binary @"$E2E_TMP/short.snappy"
assert_eq 400 "$HTTP_CODE" "/ingest, corrupt snappy"
assert_eq bad_compression "$(json_get "$HTTP_BODY" error)" "/ingest corrupt snappy: error"
assert_contains "$HTTP_BODY" "corrupt snappy body: the data ends after 5 of the 10 declared bytes" \
  "/ingest corrupt snappy: detail"
stop_server || fail "the pprof server did not exit 0"
echo "ok [$E2E_NAME]"
