#!/usr/bin/env bash
# CLI polish: every subcommand's --help lists every flag its parser knows (read from the
# sources) and the --from/--to formats (read from the registry's own error messages) and the
# time formats; an unknown flag, command, key or format gets "did you mean"; validate on a
# file that is not SPAA says what it looks like and gives a convert command that works.
source "$(dirname "$0")/lib.bash"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$SPAA_BIN

help_of() { # CMD -> its --help on stdout, exit 0, nothing on stderr
  local out rc=0
  out=$("$B" "$1" --help 2>"$E2E_TMP/help.err") || rc=$?
  assert_eq 0 "$rc" "$1 --help exit status"
  [[ ! -s "$E2E_TMP/help.err" ]] || fail "$1 --help wrote to stderr: $(cat "$E2E_TMP/help.err")"
  printf '%s' "$out"
}
expect_flags() { # CMD HELP FLAG...
  local cmd=$1 text=$2 f
  shift 2
  [[ $# -gt 0 ]] || fail "$cmd: no flags found in its source (the test's pattern is stale)"
  for f in "$@"; do
    grep -qe "$f\b" <<<"$text" || fail "$cmd --help does not list $f"
  done
}

# --- every flag, from the parsers' sources ---------------------------------------------------
serve_help=$(help_of serve)
mapfile -t flags < <(grep -oE '"SPAA_RELAY_[A-Z_]+", "--[a-z-]+"' "$ROOT/config/config.c" | grep -oE -- '--[a-z-]+')
[[ ${#flags[@]} -ge 20 ]] || fail "serve: only ${#flags[@]} flags found in config/config.c"
expect_flags serve "$serve_help" "${flags[@]}" --config
for env in $(grep -oE '"SPAA_RELAY_[A-Z_]+"' "$ROOT/config/config.c" | tr -d '"'); do
  assert_contains "$serve_help" "$env" "serve --help names the variable"
done
assert_contains "$serve_help" "durations s, m, h, d or w" "serve --help: duration format"
assert_contains "$serve_help" "sizes take k, m or g (binary: 1k = 1024; max_db_size also t)" "serve --help: size format"

convert_help=$(help_of convert)
mapfile -t flags < <(grep -oE 'strcmp\(s, "-[-a-z]+"\)' "$ROOT/server/cmd_convert.c" | grep -oE -- '-[-a-z]+')
expect_flags convert "$convert_help" "${flags[@]}"
top_help=$(help_of top)
mapfile -t flags < <(grep -oE 'strcmp\(o, "-[-a-z]+"\)' "$ROOT/server/cmd_top.c" | grep -oE -- '-[-a-z]+')
expect_flags top "$top_help" "${flags[@]}"
validate_help=$(help_of validate)
mapfile -t flags < <(grep -oE 'strcmp\(a, "-[-a-z]+"\)' "$ROOT/server/cmd_validate.c" | grep -oE -- '-[-a-z]+' | grep -vx -- '--')
expect_flags validate "$validate_help" "${flags[@]}"
hc_help=$(help_of healthcheck)
mapfile -t flags < <(grep -oE 'strcmp\(a, "-[-a-z]+"\)' "$ROOT/server/cmd_healthcheck.c" | grep -oE -- '-[-a-z]+')
expect_flags healthcheck "$hc_help" "${flags[@]}"
top_level=$("$B" --help)
for c in serve validate convert top healthcheck; do
  assert_contains "$top_level" "  $c " "spaa-relay --help lists $c"
done

# --- the formats, as the registry knows them ------------------------------------------------
echo x >"$E2E_TMP/x"
known_from=$("$B" convert --from nosuch "$E2E_TMP/x" 2>&1 || true)
known_from=${known_from##*known: }; known_from=${known_from%)}
known_to=$("$B" convert --from pprof --to nosuch "$E2E_TMP/x" 2>&1 || true)
known_to=${known_to##*(}; known_to=${known_to%)}
[[ -n "$known_from" && -n "$known_to" ]] || fail "no format lists in the error messages"
for f in ${known_from//,/ }; do
  grep -qE "^      $f +" <<<"$convert_help" || fail "convert --help does not describe --from $f"
  assert_contains "$top_help" "$f" "top --help: --from $f"
  assert_contains "$validate_help" "$f" "validate --help: format $f"
done
for f in ${known_to//,/ }; do
  grep -qE "^      $f +" <<<"$convert_help" || fail "convert --help does not describe --to $f"
done
assert_contains "$convert_help" "'now', or unix time as digits" "convert --help: time formats"
assert_contains "$convert_help" "milliseconds (below 1e14)" "convert --help: time formats"

# --- did you mean ----------------------------------------------------------------------------
expect_usage() { # WANT command...
  local want=$1 out rc=0
  shift
  out=$("$@" 2>&1) || rc=$?
  assert_eq 2 "$rc" "exit status of: $*"
  assert_contains "$out" "$want" "message of: $*"
}
expect_usage "--retentoin: unknown option (did you mean --retention?)" "$B" serve --retentoin 3d
expect_usage "--alow-open: unknown option (did you mean --allow-open?)" "$B" serve --alow-open
printf 'listen = 127.0.0.1:0\nretenton = 3d\n' >"$E2E_TMP/typo.conf"
expect_usage "$E2E_TMP/typo.conf:2: unknown key 'retenton' (did you mean retention?)" \
  "$B" serve --config "$E2E_TMP/typo.conf"
expect_usage "unknown option '--form' (did you mean --from?)" "$B" convert --form pprof x
expect_usage "unknown option '--zstf' (did you mean --zstd?)" "$B" convert --from pprof --zstf x
expect_usage "unknown format 'prof' (did you mean pprof?)" "$B" convert --from prof "$E2E_TMP/x"
expect_usage "unknown option '--limt' (did you mean --limit?)" "$B" top --limt 3 x
expect_usage "unknown option '--quite' (did you mean --quiet?)" "$B" validate --quite x
expect_usage "unknown option '--max-erors' (did you mean --max-errors?)" "$B" validate --max-erors 3 x
expect_usage "unknown option '--ulr' (did you mean --url?)" "$B" healthcheck --ulr x
expect_usage "unknown command 'conver' (did you mean convert?)" "$B" conver
expect_usage "unknown option '--frobnicate'" "$B" convert --frobnicate
out=$("$B" convert --frobnicate 2>&1 || true)
[[ $out != *"did you mean"* ]] || fail "a far-off flag got a suggestion: $out"
expect_usage "--event needs a value" "$B" convert --from pprof x --event

# --- validate on what is not SPAA ------------------------------------------------------------
# not_spaa FILE WHAT -> checks exit 1, the summary and the message; sets HINT (the command)
not_spaa() {
  local file=$1 what=$2 out rc=0
  out=$("$B" validate "$file" 2>"$E2E_TMP/v.err") || rc=$?
  assert_eq 1 "$rc" "validate $file: exit status"
  assert_contains "$out" "$file: invalid (not SPAA: " "validate $file: summary"
  assert_contains "$(cat "$E2E_TMP/v.err")" "$file: error: not SPAA: this looks like $what" \
    "validate $file: message"
  HINT=$(sed -n "s|^$file: hint: ||p" "$E2E_TMP/v.err")
  [[ -n "$HINT" ]] || fail "validate $file: no hint in: $(cat "$E2E_TMP/v.err")"
}
# run_hint: run HINT's command with this binary; its output must validate
run_hint() {
  local cmd=${HINT#*: } out
  cmd=${cmd//spaa-relay /$B }
  bash -c "set -o pipefail; $cmd" >/dev/null 2>"$E2E_TMP/hint.err" || fail "the hint '$HINT' failed: $(cat "$E2E_TMP/hint.err")"
  out=${cmd##* -o }
  "$B" validate --quiet "$out" >/dev/null || fail "the output of '$HINT' does not validate"
}

printf '{"hello": "world"}\n' >"$E2E_TMP/other.json"
not_spaa "$E2E_TMP/other.json" "JSON, but not SPAA"
assert_contains "$HINT" "no converter reads it" "hint for other JSON"
printf 'main;work 3\nmain;idle 1\n' >"$E2E_TMP/stacks.folded"
not_spaa "$E2E_TMP/stacks.folded" "folded (collapsed) stacks text"
assert_eq "convert it first: spaa-relay convert --from folded $E2E_TMP/stacks.folded -o $E2E_TMP/stacks.folded.spaa" "$HINT" "hint for folded stacks"
run_hint
printf 'hello\n' >"$E2E_TMP/readme.txt"
not_spaa "$E2E_TMP/readme.txt" "text that is not JSON"
gzip -c "$ROOT/tests/data/spec_examples.spaa" >"$E2E_TMP/spec.spaa.gz"
not_spaa "$E2E_TMP/spec.spaa.gz" "SPAA, compressed with gzip"
assert_eq "validate reads plain or zstd SPAA: zcat $E2E_TMP/spec.spaa.gz | spaa-relay validate -" "$HINT" "gzip SPAA hint"
out=$(zcat "$E2E_TMP/spec.spaa.gz" | "$B" validate -) || fail "the gzip SPAA hint does not validate: $out"
# SPAA itself, plain and zstd, is still validated as before
"$B" validate "$ROOT/tests/data/spec_examples.spaa" >/dev/null || fail "spec examples"

if spaa_fixtures=$SPAA_SHARED/fixtures && [[ -d $spaa_fixtures/pprof ]]; then
  F=$spaa_fixtures
  while read -r rel what want; do
    cp "$F/$rel" "$E2E_TMP/$(basename "$rel")"
    file=$E2E_TMP/$(basename "$rel")
    not_spaa "$file" "${what//_/ }"
    assert_contains "$HINT" "$want" "hint for $rel"
    run_hint
  done <<'LIST'
pprof/parca_node-profile.pb.gz a_pprof_profile_(protobuf),_compressed_with_gzip convert it first: spaa-relay convert --from pprof
pprof/pyroscope_go.cpu.labels.pprof a_pprof_profile --from pprof
otlp/v1dev_01_cpu_basic.bin an_OTLP_profiles_export_request_(protobuf) --from otlp
otlp/v1dev_01_cpu_basic.bin.gz an_OTLP_profiles_export_request_(protobuf),_compressed_with_gzip convert it first: zcat
otlp/v1dev_01_cpu_basic.json an_OTLP_profiles_export_request_(OTLP-JSON) --from otlp
sentry/constructed_envelope_transaction_profile_v1.envelope a_Sentry_envelope --from sentry
sentry/relay_sample_v2_valid_cocoa.json a_Sentry_profile_(JSON) --from sentry
sentry/vroom_node_v1.json a_Sentry_profile_(JSON) --from sentry
LIST
else
  echo "cli_help: no shared fixtures: the format-sniffing part on real files is skipped"
fi
echo ok
