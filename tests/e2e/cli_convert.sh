#!/usr/bin/env bash
# e2e: `spaa-relay convert --from spaa` to canonical SPAA (stdout, -o FILE, --zstd, stdin),
# idempotence, content ids, --to collapsed, and the failures (exit 1 invalid input, 2 usage).
set -u
BIN=${SPAA_BIN:?SPAA_BIN must point at spaa-relay}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$HERE/../data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$BIN" convert --from spaa "$DATA/spec_examples.spaa" > "$T/a.spaa" || fail "convert to stdout"
"$BIN" validate "$T/a.spaa" >/dev/null 2>&1 || fail "converted output is not valid"
# content ids replace the local ones, also where samples and windows use them
grep -q '"id":"0x99ebfc3b615266e7108358c434ac59dc"' "$T/a.spaa" || fail "stack content id"
[ "$(grep -c '"stack_id":"0x99ebfc3b615266e7108358c434ac59dc"' "$T/a.spaa")" -eq 2 ] || fail "references"
grep -q '"stack_id_mode":"content_addressable"' "$T/a.spaa" || fail "id mode"
# idempotent: converting the output gives the same bytes; -o FILE; stdin; --zstd
"$BIN" convert --from spaa --to spaa "$T/a.spaa" -o "$T/b.spaa" || fail "convert -o"
cmp -s "$T/a.spaa" "$T/b.spaa" || fail "not idempotent"
"$BIN" convert --from spaa - < "$DATA/spec_examples.spaa" | cmp -s - "$T/a.spaa" || fail "stdin"
(cd "$T" && "$BIN" convert --from spaa - -o - < "$DATA/spec_examples.spaa") |
  cmp -s - "$T/a.spaa" || fail "-o - is stdout"
[[ ! -e "$T/-" ]] || fail "-o - wrote a file named -"
"$BIN" convert --from spaa --zstd "$DATA/spec_examples.spaa" -o "$T/c.spaa.zst" || fail "zstd"
zstd -q -d -c "$T/c.spaa.zst" | cmp -s - "$T/a.spaa" || fail "zstd output differs"
"$BIN" convert --from spaa "$T/c.spaa.zst" | cmp -s - "$T/a.spaa" || fail "zstd input"
# -o naming a directory: the file goes inside
mkdir "$T/dir"
"$BIN" convert --from spaa "$DATA/spec_examples.spaa" -o "$T/dir" || fail "convert -o DIR"
cmp -s "$T/dir/0.spaa" "$T/a.spaa" || fail "DIR/0.spaa: $(ls "$T/dir")"

# folded stacks: root first, weighted by the first event's primary metric
out=$("$BIN" convert --from spaa --to collapsed "$DATA/spec_examples.spaa") || fail "collapsed"
[ "$out" = "__libc_start_main;mycrate::main;mycrate::parse::run;mycrate::parse::parse_file 987654321" ] \
  || fail "collapsed: $out"
out=$("$BIN" convert --from spaa --to collapsed --event malloc "$DATA/spec_examples.spaa") || fail "collapsed malloc"
[ "$out" = "mycrate::main;mycrate::parse::run;mycrate::parse::parse_file 104857600" ] || fail "malloc: $out"
# an event the profile lacks: a usage error naming the event, not the output file
"$BIN" convert --from spaa --to collapsed --event nope "$DATA/spec_examples.spaa" >/dev/null \
  2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "unknown event: exit $rc"
grep -q '^spaa-relay: convert: no event "nope"' "$T/err" || fail "unknown event: $(cat "$T/err")"

# failures
sed -e '/"id": 77,/d' "$DATA/spec_examples.spaa" > "$T/bad.spaa"
"$BIN" convert --from spaa "$T/bad.spaa" > /dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || fail "invalid input: exit $rc"
grep -q "frame 77" "$T/err" || fail "message: $(cat "$T/err")"
printf '{"type":"header","format":"spaa"' > "$T/broken.spaa"
"$BIN" convert --from spaa "$T/broken.spaa" > /dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || fail "broken json: exit $rc"
grep -q "broken.spaa:1: error:" "$T/err" || fail "broken message: $(cat "$T/err")"
grep -q "error: line 1:" "$T/err" && fail "the line named twice: $(cat "$T/err")"
"$BIN" convert --from nonsense "$DATA/spec_examples.spaa" >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown --from"
"$BIN" convert --from spaa --to otlp "$DATA/spec_examples.spaa" >/dev/null 2>"$T/err"; [ $? -eq 2 ] || fail "--to otlp"
grep -q "not supported yet" "$T/err" || fail "otlp message"
"$BIN" convert "$DATA/spec_examples.spaa" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no --from"
"$BIN" convert --from spaa "$T/missing" >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing input"
"$BIN" convert --from spaa >/dev/null 2>&1; [ $? -eq 2 ] || fail "no input"
echo "ok"
