#!/usr/bin/env bash
# Peak RSS of the whole server for one large upload, as a ratio to the upload's decompressed
# size (target: peak <= 2x that size + 32 MB). The floor is the idle server's own peak,
# measured in the same run. Each input goes to a fresh server:
#   1. pprof: a generated 48 MiB profile (tests/e2e/gen_pprof.py: 1.4 M samples, 60 k stacks),
#      gzipped, pushed to /ingest as Pyroscope clients do; then converted offline to SPAA and
#      uploaded to /api/v1/spaa; and one a third as large pushed uncompressed;
#   2. OTLP: the same kind of CPU profile as an ExportProfilesServiceRequest of as many MiB
#      (tests/e2e/gen_otlp.py: the Collector's translation, one profile per sample type),
#      posted to /v1development/profiles as it is, then gzipped (Content-Encoding: gzip);
#   3. OTLP: bench_otlp_ingest's synthetic ExportProfilesServiceRequest (20 MB protobuf, eight
#      profiles of 60 k stacks each, half with timestamped samples), likewise;
#   4. Sentry envelopes (tests/e2e/gen_sentry.py) posted to /api/7/envelope/ as SDKs post them:
#      a continuous-profiling chunk (V2) of 120 k samples over 2 k stacks, a transaction
#      profile (V1) of the same shape, and a chunk dense in stacks (130 k samples, 60 k stacks
#      over 20 k frames: the shape of a tester's 17.7 MB chunk).
# usage: bench/upload_memory.sh [BUILD_DIR] [PPROF_MIB]   (default: build, 48)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
MIB=${2:-48}
export SPAA_BIN=$build/spaa-relay SPAA_BUILD=$build
source "$root/tests/e2e/lib.bash"

# one upload into a fresh server (its own data directory: an empty store): sets MEASURED to
# "idle_kib peak_kib status" (not run in a subshell, where start_server would give every
# server the same data directory and log)
measure() { # PATH FILE CONTENT_TYPE [CONTENT_ENCODING]
  start_server --max-body 64m --max-decompressed 64m --log-level warn
  local idle code
  idle=$(vmhwm_kb "$SERVER_PID")
  code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Content-Type: $3" \
    ${4:+-H "Content-Encoding: $4"} --data-binary @"$2" "$SERVER_URL$1")
  MEASURED="$idle $(vmhwm_kb "$SERVER_PID") $code"
  stop_server
  rm -rf "$SERVER_DATA"
}

report() { # NAME DECODED_BYTES "idle peak status"
  local name=$1 dec=$2 idle peak code
  read -r idle peak code <<<"$3"
  [[ "$code" == 2* ]] || fail "$name: the upload was answered $code"
  awk -v n="$name" -v d="$dec" -v i="$idle" -v p="$peak" 'BEGIN {
    t = 2 * d / 1024 + 32768
    printf "%-28s %8.1f MiB decoded  idle %6.1f MiB  peak %7.1f MiB = %5.2fx decoded  " \
           "(target %6.1f MiB: %s)\n", n, d / 1048576, i / 1024, p / 1024, p * 1024 / d,
           t / 1024, p <= t ? "met" : "missed"
  }'
}

echo "peak RSS of the server for one upload (VmHWM), against 2x the decompressed size + 32 MB"
python3 "$root/tests/e2e/gen_pprof.py" "$E2E_TMP/big.pb" "$MIB"
dec=$(stat -c %s "$E2E_TMP/big.pb")
gzip -1 "$E2E_TMP/big.pb"
measure "/ingest?name=big.cpu" "$E2E_TMP/big.pb.gz" application/octet-stream
report "pprof ${MIB} MiB (gzip)" "$dec" "$MEASURED"
"$SPAA_BIN" convert --from pprof --name big.cpu "$E2E_TMP/big.pb.gz" -o "$E2E_TMP/big.spaa"
measure "/api/v1/spaa?service=big" "$E2E_TMP/big.spaa" application/x-ndjson
report "the same as SPAA" "$(stat -c %s "$E2E_TMP/big.spaa")" "$MEASURED"
rm -f "$E2E_TMP/big.pb.gz" "$E2E_TMP/big.spaa"
# a third of that profile pushed as it is, uncompressed: the body is the decoded bytes
python3 "$root/tests/e2e/gen_pprof.py" "$E2E_TMP/plain.pb" $((MIB / 3))
measure "/ingest?name=plain.cpu" "$E2E_TMP/plain.pb" application/octet-stream
report "pprof $((MIB / 3)) MiB (uncompressed)" "$(stat -c %s "$E2E_TMP/plain.pb")" "$MEASURED"
rm -f "$E2E_TMP/plain.pb"

python3 "$root/tests/e2e/gen_otlp.py" "$E2E_TMP/big-otlp.pb" "$MIB" >/dev/null
measure /v1development/profiles "$E2E_TMP/big-otlp.pb" application/x-protobuf
report "OTLP ${MIB} MiB (protobuf)" "$(stat -c %s "$E2E_TMP/big-otlp.pb")" "$MEASURED"
# the same request gzipped, as a Collector's exporter sends it (Content-Encoding: gzip)
gzip -1 -c "$E2E_TMP/big-otlp.pb" >"$E2E_TMP/big-otlp.pb.gz"
measure /v1development/profiles "$E2E_TMP/big-otlp.pb.gz" application/x-protobuf gzip
report "OTLP ${MIB} MiB (gzip encoded)" "$(stat -c %s "$E2E_TMP/big-otlp.pb")" "$MEASURED"
rm -f "$E2E_TMP/big-otlp.pb" "$E2E_TMP/big-otlp.pb.gz"

"$build/bench/bench_otlp_ingest" "${SPAA_SHARED:-$root/../shared}" write "$E2E_TMP/otlp.bin"
measure /v1development/profiles "$E2E_TMP/otlp.bin" application/x-protobuf
report "OTLP synthetic (protobuf)" "$(stat -c %s "$E2E_TMP/otlp.bin")" "$MEASURED"
rm -f "$E2E_TMP/otlp.bin"

for shape in "v2 120000 2000 3000" "v1 120000 2000 3000" "v2 130000 60000 20000"; do
  read -r v n_s n_st _ <<<"$shape"
  python3 "$root/tests/e2e/gen_sentry.py" "$E2E_TMP/sentry.env" $shape >/dev/null
  measure "/api/7/envelope/?sentry_key=k" "$E2E_TMP/sentry.env" application/x-sentry-envelope
  report "Sentry $v ${n_s} smp ${n_st} stk" "$(stat -c %s "$E2E_TMP/sentry.env")" "$MEASURED"
  rm -f "$E2E_TMP/sentry.env"
done
