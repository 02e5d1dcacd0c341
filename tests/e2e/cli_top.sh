#!/usr/bin/env bash
# `spaa-relay top` on real inputs: the ranking and total are the API's /top for the same
# profile; an input holding several profiles needs --profile K (it used to rank the first one
# alone without a word); the failures and their exit codes (1: the input, 2: usage).
source "$(dirname "$0")/lib.bash"

FIX="${SPAA_SHARED:?}/fixtures"
if [[ ! -d "$FIX" ]]; then
  echo "skip [$E2E_NAME]: no $FIX"
  exit 77
fi
command -v jq >/dev/null || fail "jq is needed"
B=$SPAA_BIN

# run CMD...: sets OUT, ERR and RC
run() {
  RC=0
  "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
  OUT=$(cat "$E2E_TMP/out")
  ERR=$(cat "$E2E_TMP/err")
}

# one pprof: the same total and first function as the API's /top of the stored profile
pb="$FIX/pprof/pyroscope_go.cpu.labels.pprof"
run "$B" top --limit 3 "$pb"
assert_eq 0 "$RC" "top on a pprof ($ERR)"
start_server
http POST "/v1/pprof?service=clitop" --data-binary @"$pb"
[[ "$HTTP_CODE" == 2* ]] || fail "the pprof uploaded: $HTTP_CODE $HTTP_BODY"
id=$(curl -sS "$SERVER_URL/api/v1/profiles?service=clitop" | jq -r '.profiles[0].id')
api=$(curl -sS "$SERVER_URL/api/v1/profiles/$id/top?limit=3")
total=$(jq -r .total <<<"$api")
first=$(jq -r '.top[0].name' <<<"$api")
assert_contains "$(head -n 1 <<<"$OUT")" "total $total," "the CLI's total is the API's"
assert_contains "$(sed -n 3p <<<"$OUT")" "  $first" "the CLI's first function is the API's"
[[ $(wc -l <<<"$OUT") -eq 5 ]] || fail "--limit 3: a title, a heading and 3 rows: $OUT"

# an OTLP request of four profiles: refused without --profile, each one with it
multi="$FIX/otlp/v1dev_03_multi_resource_scope.bin"
run "$B" top --from otlp "$multi"
assert_eq 2 "$RC" "several profiles without --profile"
assert_contains "$ERR" "holds 4 profiles: give --profile K (1..4)" "the refusal says what to do"
run "$B" top --from otlp --profile 2 "$multi"
assert_eq 0 "$RC" "--profile 2 ($ERR)"
second=$OUT
run "$B" top --from otlp --profile 1 "$multi"
assert_eq 0 "$RC" "--profile 1 ($ERR)"
[[ "$OUT" != "$second" ]] || fail "profiles 1 and 2 ranked the same: $OUT"
run "$B" top --from otlp --profile 5 "$multi"
assert_eq 2 "$RC" "--profile past the last"
assert_contains "$ERR" "holds 4 profiles: no profile 5" "--profile 5"
run "$B" top --profile 0 "$pb"
assert_eq 2 "$RC" "--profile 0"
run "$B" top --event nope "$pb"
assert_eq 2 "$RC" "an unknown event is a usage error"
assert_contains "$ERR" "nope" "the unknown event named"
# guessed as validate guesses: OTLP-JSON, and SPAA under zstd, without --from
run "$B" top --from otlp --limit 1 "$FIX/otlp/v1dev_01_cpu_basic.json"
want=$OUT
run "$B" top --limit 1 "$FIX/otlp/v1dev_01_cpu_basic.json"
assert_eq 0 "$RC" "top on OTLP-JSON without --from ($ERR)"
assert_eq "$want" "$OUT" "OTLP-JSON guessed"
"$B" convert --from pprof --zstd "$pb" -o "$E2E_TMP/p.spaa.zst" || fail "convert to zstd SPAA"
run "$B" top --limit 3 "$pb"
want=$OUT
run "$B" top --limit 3 "$E2E_TMP/p.spaa.zst"
assert_eq 0 "$RC" "top on zstd SPAA without --from ($ERR)"
assert_eq "$want" "$OUT" "zstd SPAA guessed"
# folded stacks: guessed too, a cpu profile at 100 Hz
printf 'main;work;spin 7\nmain;idle 3\n' >"$E2E_TMP/stacks.folded"
run "$B" top --limit 1 "$E2E_TMP/stacks.folded"
assert_eq 0 "$RC" "top on folded stacks without --from ($ERR)"
assert_contains "$OUT" "metric cpu (nanoseconds), total 100000000" "folded stacks guessed"
assert_contains "$OUT" "spin" "folded stacks' top function"
printf 'garbage' >"$E2E_TMP/bad"
run "$B" top "$E2E_TMP/bad"
assert_eq 1 "$RC" "an input that is no profile"
stop_server
echo "ok [$E2E_NAME]"
