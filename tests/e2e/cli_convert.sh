#!/usr/bin/env bash
# e2e: `spaa-relay convert --from spaa` to canonical SPAA (stdout, -o FILE, --zstd, stdin),
# idempotence, content ids, -o DIR (new or empty only), --to collapsed, and the failures
# (exit 1 invalid input, 2 usage).
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

# -o DIR holds one conversion: a directory that holds files is refused (exit 2, before any
# work, nothing written or removed); converting a request of two profiles into the folder
# of one of three left the third beside them
otlp_req() { # an OTLP/JSON request of $2 profiles, one resource each, into $1
  python3 - "$1" "$2" <<'PY'
import json, sys
n = int(sys.argv[2])
def resource(i):
    return {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "s%d" % i}}]},
            "scopeProfiles": [{"scope": {}, "profiles": [{"sampleType": {"typeStrindex": 1, "unitStrindex": 2},
                                                           "samples": [{"stackIndex": 1, "values": [str(i + 1)]}]}]}]}
json.dump({"resourceProfiles": [resource(i) for i in range(n)],
           "dictionary": {"locationTable": [{}, {"lines": [{"functionIndex": 1}]}],
                          "functionTable": [{}, {"nameStrindex": 3}],
                          "stringTable": ["", "samples", "count", "main"],
                          "stackTable": [{}, {"locationIndices": [1]}]}}, open(sys.argv[1], "w"))
PY
}
otlp_req "$T/three.json" 3
otlp_req "$T/two.json" 2
"$BIN" convert --from otlp "$T/three.json" -o "$T/multi" || fail "convert -o DIR (new)"
[ "$(ls "$T/multi" | wc -l)" -eq 3 ] || fail "three profiles: $(ls "$T/multi")"
cp -a "$T/multi" "$T/multi.before"
"$BIN" convert --from otlp "$T/two.json" -o "$T/multi" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "into a DIR holding an earlier conversion: exit $rc, $(ls "$T/multi")"
grep -q "^spaa-relay: convert: $T/multi: the directory is not empty: " "$T/err" ||
  fail "not-empty message: $(cat "$T/err")"
diff -r "$T/multi.before" "$T/multi" >/dev/null || fail "the refused run changed DIR"
# one profile into a directory holding files (the user's, an earlier output): refused too
echo mine >"$T/dir/notes.txt"
"$BIN" convert --from spaa "$DATA/spec_examples.spaa" -o "$T/dir" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "one profile into a non-empty DIR: exit $rc"
grep -q "the directory is not empty" "$T/err" || fail "message: $(cat "$T/err")"
[ "$(cat "$T/dir/notes.txt")" = mine ] && cmp -s "$T/dir/0.spaa" "$T/a.spaa" ||
  fail "the files in DIR changed"
# emptied, the directory is taken again; a file named inside it is written beside the rest
rm "$T/multi"/*
"$BIN" convert --from otlp "$T/two.json" -o "$T/multi" || fail "convert into the emptied DIR"
[ "$(ls "$T/multi" | wc -l)" -eq 2 ] || fail "two profiles: $(ls "$T/multi")"
"$BIN" convert --from spaa "$DATA/spec_examples.spaa" -o "$T/dir/b.spaa" || fail "-o DIR/FILE"
cmp -s "$T/dir/b.spaa" "$T/a.spaa" || fail "DIR/FILE"

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
