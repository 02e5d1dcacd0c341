#!/usr/bin/env bash
# POST /api/v1/spaa stores a profile under content ids whatever ids the file gives its stacks
# (spec §4.1 leaves a content-addressable file's hash to its writer): a pprof is uploaded,
# then the same profile as another tool could write it in SPAA (frames root first, other
# file-local ids, loaded at another address) with stack_id_mode content_addressable and its
# stacks named by the wrong content ids (each stack by the next one's, the last by a name
# of its own). Read back, its stacks have the pprof's ids and weights; samples, the window
# and related_stacks name the stacks they named in the file; a diff of the two is all
# `same`. A related_stacks entry naming no stack of the file is a 422 naming line and rule.
source "$(dirname "$0")/lib.bash"
command -v jq >/dev/null || fail "jq is required"
command -v python3 >/dev/null || fail "python3 is required"

# a small Go-like CPU pprof: four stacks, one with an unresolved frame
python3 - "$E2E_TMP/cpu.pb" "$(dirname "$0")" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from gen_pprof import varint, field_len, field_int
def packed(num, vals):
    return field_len(num, b"".join(varint(v) for v in vals))
strings = ["", "cpu", "nanoseconds", "main.main", "main.work", "main.parse", "/app/main.go",
           "/app/bin"]
p = bytearray(field_len(1, field_int(1, 1) + field_int(2, 2)))
for locs, v in (([2, 1], 300), ([3, 2, 1], 500), ([4, 3, 1], 700), ([4, 1], 100)):
    p += field_len(2, packed(1, locs) + packed(2, [v]))
p += field_len(3, field_int(1, 1) + field_int(2, 0x400000) + field_int(3, 0x800000) +
               field_int(4, 0x1000) + field_int(5, 7))
for lid in (1, 2, 3):
    p += field_len(4, field_int(1, lid) + field_int(2, 1) + field_int(3, 0x401000 + 0x40 * lid) +
                   field_len(4, field_int(1, lid) + field_int(2, 10 * lid)))
p += field_len(4, field_int(1, 4) + field_int(2, 1) + field_int(3, 0x402345))
for fid in (1, 2, 3):
    p += field_len(5, field_int(1, fid) + field_int(2, fid + 2) + field_int(4, 6))
for s in strings:
    p += field_len(6, s.encode())
p += field_int(9, 1700000000000000000) + field_int(10, 10000000000)
p += field_len(11, field_int(1, 1) + field_int(2, 2)) + field_int(12, 10000000)
open(sys.argv[1], "wb").write(p)
PY

start_server
http POST "/v1/pprof?service=ids-pprof" --data-binary @"$E2E_TMP/cpu.pb"
[[ "$HTTP_CODE" == 2* ]] || fail "the pprof upload: $HTTP_CODE $HTTP_BODY"
http GET "/api/v1/profiles?service=ids-pprof"
PID=$(jq -r '.profiles[0].id' <<<"$HTTP_BODY")
http GET "/api/v1/profiles/$PID/spaa"
assert_eq 200 "$HTTP_CODE" "the pprof's SPAA"
printf '%s\n' "$HTTP_BODY" >"$E2E_TMP/pprof.spaa"
# the content ids, in the export's (canonical) order
mapfile -t CIDS < <(jq -r 'select(.type == "stack") | .id' "$E2E_TMP/pprof.spaa")
assert_eq 4 "${#CIDS[@]}" "stacks of the pprof"

# the same profile written by "another tool", stacks named by the wrong ids
python3 - "$E2E_TMP/pprof.spaa" "$E2E_TMP/other.spaa" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
stacks = [r for r in recs if r["type"] == "stack"]
wrong = {s["id"]: (stacks[i + 1]["id"] if i + 1 < len(stacks) else "0xdeadbeef")
         for i, s in enumerate(stacks)}
shift = 0x10000000  # loaded elsewhere: the same dso-relative addresses
out = []
for r in recs:
    r = dict(r)
    if r["type"] == "header":
        r["frame_order"] = "root_to_leaf"
        r["source_tool"] = "perf"
        for k in [k for k in r if k.startswith("x_pprof")]:
            del r[k]
    elif r["type"] == "dso":
        r["id"] = 7
        m = r["x_mapping"]
        m["start"] = hex(int(m["start"], 16) + shift)
        m["limit"] = hex(int(m["limit"], 16) + shift)
        del r["x_pprof_mapping_id"]
    elif r["type"] == "frame":
        r["id"] += 100
        r["dso"] = 7
        if not r["func_resolved"]:
            r["ip"] = hex(int(r["ip"], 16) + shift)
            r["func"] = r["ip"]
    elif r["type"] == "stack":
        r["frames"] = [f + 100 for f in reversed(r["frames"])]
        r["exclusive"]["frame"] += 100
        r["id"] = wrong[r["id"]]
    out.append(r)
first = [r for r in out if r["type"] == "stack"][0]
first["related_stacks"] = [wrong[stacks[1]["id"]]]
start = recs[0]["time_range"]["start"]
for i, s in enumerate(stacks):
    out.append({"type": "sample", "timestamp": start + i, "pid": 1, "tid": 1, "cpu": 0,
                "event": "cpu", "stack_id": wrong[s["id"]]})
out.append({"type": "window", "id": "w1", "start": start, "end": start + 10,
            "unit": "nanoseconds",
            "by_stack": [{"stack_id": wrong[s["id"]],
                          "weights": [{"metric": "cpu", "value": 1}]} for s in stacks]})
with open(sys.argv[2], "w") as f:
    for r in out:
        f.write(json.dumps(r) + "\n")
PY
grep -q '"stack_id_mode": "content_addressable"' "$E2E_TMP/other.spaa" || fail "the header's mode"
grep -q "\"id\": \"${CIDS[0]}\"" "$E2E_TMP/other.spaa" && fail "a stack kept its own id"
"$SPAA_BIN" validate "$E2E_TMP/other.spaa" >/dev/null || fail "the other tool's file is valid SPAA"

http POST "/api/v1/spaa?service=ids-spaa" --data-binary @"$E2E_TMP/other.spaa"
assert_eq 200 "$HTTP_CODE" "the SPAA upload ($HTTP_BODY)"
SID=$(jq -r .id <<<"$HTTP_BODY")
http GET "/api/v1/profiles/$SID/spaa"
assert_eq 200 "$HTTP_CODE" "the upload read back"
printf '%s\n' "$HTTP_BODY" >"$E2E_TMP/back.spaa"

# the stacks: the pprof's ids with the pprof's weights
stacks() { jq -c 'select(.type == "stack") | [.id, .weights]' "$1" | sort; }
assert_eq "$(stacks "$E2E_TMP/pprof.spaa")" "$(stacks "$E2E_TMP/back.spaa")" \
  "stack ids and weights of the upload are the pprof's"
# the references: sample i and window entry i were written for stack i
assert_eq "${CIDS[*]}" "$(jq -r 'select(.type == "sample") | .stack_id' "$E2E_TMP/back.spaa" |
  paste -sd' ')" "the samples name their stacks' content ids"
assert_eq "${CIDS[*]}" "$(jq -r 'select(.type == "window") | .by_stack[].stack_id' \
  "$E2E_TMP/back.spaa" | paste -sd' ')" "the window names its stacks' content ids"
assert_eq "${CIDS[1]}" "$(jq -r --arg id "${CIDS[0]}" \
  'select(.type == "stack" and .id == $id) | .related_stacks[]' "$E2E_TMP/back.spaa")" \
  "related_stacks names the content id of the stack it named"
# one id, one stack: the id the file gave the first stack is the second stack's, with the
# second's frames, in both profiles
http GET "/api/v1/stacks/${CIDS[1]}"
assert_eq 200 "$HTTP_CODE" "stack ${CIDS[1]}"
assert_eq 2 "$(jq .profiles <<<"$HTTP_BODY")" "both profiles hold stack ${CIDS[1]}"
assert_eq "main.parse main.work main.main" "$(jq -r '[.frames[].function] | join(" ")' \
  <<<"$HTTP_BODY")" "stack ${CIDS[1]}'s frames"

# the diff of the two sources: every stack and function the same
http GET "/api/v1/diff?base.service=ids-pprof&target.service=ids-spaa&limit=100"
assert_eq 200 "$HTTP_CODE" "the diff ($HTTP_BODY)"
assert_eq "$(printf '%s\n' "${CIDS[@]}" | sort | paste -sd' ')" \
  "$(jq -r '.stacks[].id' <<<"$HTTP_BODY" | sort | paste -sd' ')" "the diff's stacks ($HTTP_BODY)"
assert_eq "same" "$(jq -r '[.stacks[].status, .functions[].status] | unique | join(",")' \
  <<<"$HTTP_BODY")" "every status of the diff ($HTTP_BODY)"
assert_eq 0 "$(jq .delta <<<"$HTTP_BODY")" "the diff's total delta"

# a related_stacks entry naming a stack the file does not have: refused, nothing stored
jq -c 'if .type == "stack" and (.related_stacks | length) > 0
       then .related_stacks = ["0xfeedface"] else . end' "$E2E_TMP/other.spaa" \
  >"$E2E_TMP/dangling.spaa"
line=$(grep -n feedface "$E2E_TMP/dangling.spaa" | cut -d: -f1)
http POST "/api/v1/spaa?service=ids-dangling" --data-binary @"$E2E_TMP/dangling.spaa"
assert_eq 422 "$HTTP_CODE" "a dangling related_stacks entry ($HTTP_BODY)"
assert_eq "line $line: stack 0xfeedface is never defined (rule related-stack-missing, field related_stacks)" \
  "$(jq -r .detail <<<"$HTTP_BODY")" "the answer names line and rule"
http GET "/api/v1/profiles?service=ids-dangling"
assert_eq 0 "$(jq '.profiles | length' <<<"$HTTP_BODY")" "nothing stored"
stop_server
echo "ok [$E2E_NAME]"
