#!/usr/bin/env bash
# e2e: `spaa-relay validate` on the spec's examples (valid), on broken files (exit 1 with
# FILE:LINE: error: [rule] field: message), zstd and stdin input, a corrupt zstd file (exit 1),
# and usage/I-O errors (exit 2).
set -u
BIN=${SPAA_BIN:?SPAA_BIN must point at spaa-relay}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$HERE/../data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# the spec's own examples: valid
out=$("$BIN" validate "$DATA/spec_examples.spaa" 2>"$T/err"); rc=$?
[ $rc -eq 0 ] || fail "spec examples: exit $rc: $(cat "$T/err")"
[ "$out" = "$DATA/spec_examples.spaa: valid (2 stacks, 0 warnings)" ] || fail "summary: $out"
[ ! -s "$T/err" ] || fail "unexpected stderr: $(cat "$T/err")"

# zstd, from stdin
zstd -q -c "$DATA/spec_examples.spaa" > "$T/spec.spaa.zst"
out=$("$BIN" validate - < "$T/spec.spaa.zst"); rc=$?
[ $rc -eq 0 ] || fail "zstd stdin: exit $rc"
[ "$out" = "<stdin>: valid (2 stacks, 0 warnings)" ] || fail "zstd summary: $out"

# an invalid file: the stack's frame 77 does not exist
sed -e '/"id": 77,/d' "$DATA/spec_examples.spaa" > "$T/bad.spaa"
out=$("$BIN" validate "$T/bad.spaa" 2>"$T/err"); rc=$?
[ $rc -eq 1 ] || fail "bad file: exit $rc"
grep -q "^$T/bad.spaa: invalid (2 errors, 0 warnings)$" <<<"$out" || fail "bad summary: $out"
grep -q "^$T/bad.spaa:10: error: \[stack-frame-missing\] frames\[1\]: stack 0xdeadbeef references frame 77" "$T/err" \
  || fail "bad diagnostics: $(cat "$T/err")"

# warnings keep a file valid, and are counted; --quiet hides them
sed -e 's/"source_tool": "perf"/"source_tool": "mystery"/' "$DATA/spec_examples.spaa" > "$T/warn.spaa"
out=$("$BIN" validate "$T/warn.spaa" 2>"$T/err"); rc=$?
[ $rc -eq 0 ] || fail "warn file: exit $rc"
[ "$out" = "$T/warn.spaa: valid (2 stacks, 1 warnings)" ] || fail "warn summary: $out"
grep -q "^$T/warn.spaa:1: warning: \[unknown-source-tool\] source_tool: " "$T/err" || fail "warning: $(cat "$T/err")"
"$BIN" validate --quiet "$T/warn.spaa" 2>"$T/err" >/dev/null
[ ! -s "$T/err" ] || fail "--quiet printed: $(cat "$T/err")"

# several files: the worst status wins, a summary for each
out=$("$BIN" validate "$DATA/spec_examples.spaa" "$T/bad.spaa" 2>/dev/null); rc=$?
[ $rc -eq 1 ] || fail "two files: exit $rc"
[ "$(wc -l <<<"$out")" -eq 2 ] || fail "two summaries expected: $out"

# truncated zstd: invalid input, exit 1 (as convert says); a missing file, no arguments, a
# bad option: exit 2
head -c 100 "$T/spec.spaa.zst" > "$T/cut.zst"
"$BIN" validate "$T/cut.zst" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "truncated zstd: exit $rc"
"$BIN" convert --from spaa "$T/cut.zst" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "truncated zstd, convert: exit $rc"
"$BIN" validate "$T/nope.spaa" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "missing file: exit $rc"
"$BIN" validate "$T/nope.spaa" "$T/bad.spaa" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "missing + invalid: exit $rc"
"$BIN" validate >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "no args: exit $rc"
"$BIN" validate --frobnicate x >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad option: exit $rc"

# --max-errors caps what is printed, not what is counted
for i in 1 2 3 4 5; do echo "{\"type\":\"dso\",\"id\":\"x$i\"}"; done > "$T/many.spaa"
out=$("$BIN" validate --max-errors 2 "$T/many.spaa" 2>"$T/err"); rc=$?
[ $rc -eq 1 ] || fail "many: exit $rc"
[ "$(grep -c ': error: ' "$T/err")" -eq 2 ] || fail "max-errors: $(cat "$T/err")"
grep -q "invalid (6 errors" <<<"$out" || fail "many summary: $out"
echo "ok"
