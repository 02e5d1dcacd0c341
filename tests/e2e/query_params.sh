#!/usr/bin/env bash
# Strict parameters of the query API over a real server: a diff's sides (filters only under
# base./target., every value of both sides checked, view parameters unprefixed, an id and a
# selection for one side a conflict), the error naming the side that lacks the metric and
# where the metric came from; unknown parameters on a profile's metadata and SPAA, a
# parameter given twice (label repeats), a NUL byte in a name or value, an unknown source.
source "$(dirname "$0")/lib.bash"
F=${SPAA_SHARED:-}/fixtures
if [[ ! -d "$F/pprof" || ! -d "$F/sentry" ]]; then
  echo "skip [$E2E_NAME]: shared fixtures not found"
  exit 0
fi
command -v jq >/dev/null || fail "jq is required"
start_server

ids_header() { printf '%s\n' "$HTTP_HEADERS" | sed -n 's/^X-Spaa-Profile-Ids: //Ip' | head -n1; }
get() { http GET "$1" --max-time 30; }
body() { printf '%s' "${HTTP_BODY:0:300}" | tr -cd '[:print:]'; } # for messages
detail() { jq -r '.detail // empty' <<<"$HTTP_BODY" 2>/dev/null || true; }
# bad PATH CODE TEXT...: the answer has status CODE and its detail contains every TEXT
bad() {
  local path=$1 code=$2 t
  shift 2
  get "$path"
  assert_eq "$code" "$HTTP_CODE" "GET $path ($(body))"
  for t in "$@"; do
    assert_contains "$(detail)" "$t" "GET $path"
  done
}
ok() {
  get "$1"
  assert_eq 200 "$HTTP_CODE" "GET $1 ($(body))"
}

# --- fixtures: two pprof profiles of service shop (env dev and prod), a Sentry profile ------
http POST '/ingest?name=shop.cpu%7Benv%3Ddev%7D' --max-time 30 \
  --data-binary @"$F/pprof/pyroscope_go.cpu.labels.pprof"
assert_eq 200 "$HTTP_CODE" "pprof push (dev)"
DEV=$(ids_header)
http POST '/ingest?name=shop.cpu%7Benv%3Dprod%7D' --max-time 30 \
  --data-binary @"$F/pprof/google-pprof_sample.cpu"
assert_eq 200 "$HTTP_CODE" "pprof push (prod)"
PROD=$(ids_header)
http POST /api/42/envelope/ -H 'Content-Type:' --max-time 30 \
  --data-binary @"$F/sentry/constructed_envelope_transaction_profile_v1.envelope"
assert_eq 200 "$HTTP_CODE" "sentry envelope ($(body))"
SENTRY=$(ids_header)
[[ "$DEV" =~ ^[0-9a-f]{32}$ && "$PROD" =~ ^[0-9a-f]{32}$ && -n "$SENTRY" ]] ||
  fail "upload ids: '$DEV' '$PROD' '$SENTRY'"

cpu_total() { # ID: the stored cpu total
  curl -s --max-time 30 "$SERVER_URL/api/v1/profiles/$1" | jq -r '[.events[].totals.cpu // empty][0]'
}
DEV_CPU=$(cpu_total "$DEV")
PROD_CPU=$(cpu_total "$PROD")

# --- diff: each side's selection applies, and only it -----------------------------------------
get '/api/v1/diff?base.service=shop&base.label=env:dev&target.service=shop&target.label=env:prod&limit=1'
assert_eq 200 "$HTTP_CODE" "diff of two selections ($(body))"
assert_eq "$DEV_CPU $PROD_CPU" "$(jq -r '"\(.base_total) \(.target_total)"' <<<"$HTTP_BODY")" \
  "diff totals: each side its own selection"
# label repeats: both labels reach the base's selection, which no profile has (a 404 naming them)
bad '/api/v1/diff?base.service=shop&base.label=env:dev&base.label=x:y&target.service=shop&limit=1' 404 \
  "the base selection matches no stored profile (service=shop, label=env:dev, label=x:y)"
ok "/api/v1/diff?base=$DEV&target.service=shop&target.time=profile&target.from=0&focus=main&by=frame&limit=1"

# unprefixed filters select nothing on a diff: a 400 pointing to base.NAME / target.NAME
bad '/api/v1/diff?service=shop&base.from=now-1d&target.from=now-1h' 400 \
  "'service'" "base.service" "target.service"
for f in service project source event from to time label labels transaction release \
  environment trace_id; do
  bad "/api/v1/diff?base.service=shop&target.service=shop&$f=x" 400 "'$f'" "base.$f" "target.$f"
done
# every value of both sides is checked, an id side's prefixed filters included
bad '/api/v1/diff?base.service=shop&base.from=garbage&target.service=shop' 400 "'base.from'"
bad '/api/v1/diff?base.service=shop&target.service=shop&target.to=garbage' 400 "'target.to'"
bad '/api/v1/diff?base.service=shop&base.time=bogus&target.service=shop' 400 "'base.time'"
bad '/api/v1/diff?base.service=shop&target.service=shop&target.label=bad' 400 "'target.label'"
bad '/api/v1/diff?base.source=nosuch&target.service=shop' 400 "'base.source'" "sentry, otlp, pprof, folded or spaa"
bad "/api/v1/diff?base=$DEV&base.from=garbage&target.service=shop" 400 "'base'" "'base.from'"
bad "/api/v1/diff?base=$DEV&base.time=bogus&target=$PROD" 400 "'base.time'"
bad "/api/v1/diff?base.label=bad&target=$PROD&base=$DEV" 400 "'base.label'"
# an id and a selection for one side
bad "/api/v1/diff?base=$DEV&base.service=x&target=$PROD" 400 "conflicting 'base' and 'base.service'"
bad "/api/v1/diff?base=$DEV&target=$PROD&target.label=env:prod" 400 "conflicting 'target' and 'target.label'"
# view parameters apply to both sides, unprefixed; prefixed they are unknown
for side in base target; do
  for p in focus ignore by limit format budget base target; do
    bad "/api/v1/diff?base.service=shop&target.service=shop&$side.$p=1" 400 "unknown parameter '$side.$p'"
  done
  bad "/api/v1/diff?base.service=shop&target.service=shop&$side.metric=cpu" 400 "'$side.metric'" "metric="
done

# --- diff: the side that lacks the metric, and where the metric came from --------------------
bad '/api/v1/diff?base.service=shop&target.service=42' 400 \
  "target lacks metric 'cpu'" "the base's metric" "by default" "target selection"
bad '/api/v1/diff?base.service=shop&target.service=42&metric=cpu' 400 \
  "target lacks metric 'cpu'" "named by 'metric'"
bad "/api/v1/diff?base=$DEV&target=$SENTRY" 400 \
  "target lacks metric 'cpu'" "the base's metric" "profile '$SENTRY'"
bad "/api/v1/diff?base=$SENTRY&target=$DEV&metric=cpu" 400 "base lacks metric 'cpu'" "named by 'metric'"
bad '/api/v1/diff?base.service=42&target.service=shop&metric=cpu' 400 "base lacks metric 'cpu'"
get '/api/v1/diff?base.service=shop&base.label=env:dev&target.service=shop&metric=samples&limit=1'
assert_eq 200 "$HTTP_CODE" "diff by metric= ($(body))"
assert_eq samples "$(jq -r .metric <<<"$HTTP_BODY")" "diff metric"

# --- parameter names everywhere: a profile's metadata and SPAA take none ---------------------
bad "/api/v1/profiles/$DEV?x=1" 400 "unknown parameter 'x'"
bad "/api/v1/profiles/$DEV/spaa?x=1" 400 "unknown parameter 'x'"
bad "/api/v1/profiles/$DEV/spaa?event=cpu" 400 "unknown parameter 'event'"
ok "/api/v1/profiles/$DEV"
ok "/api/v1/profiles/$DEV/spaa"

# --- a single-valued parameter given twice; label and labels repeat ----------------------------
bad '/api/v1/profiles?limit=5&limit=6' 400 "parameter 'limit' given twice"
# empty pieces of a query are nothing, wherever they are; an empty name with a value is not
ok '/api/v1/profiles?&limit=1'
ok '/api/v1/profiles?limit=1&&service=shop&'
bad '/api/v1/profiles?=1&limit=1' 400 "unknown parameter '(empty name)'"
bad '/api/v1/profiles?service=a&service=b' 400 "parameter 'service' given twice"
bad '/api/v1/profiles?service=shop&service=shop' 400 "parameter 'service' given twice"
bad '/api/v1/top?service=shop&from=0&from=1' 400 "parameter 'from' given twice"
bad "/api/v1/profiles/$DEV/top?limit=1&limit=2" 400 "parameter 'limit' given twice"
bad "/api/v1/profiles/$DEV/flamegraph?focus=a&focus=b" 400 "parameter 'focus' given twice"
bad '/api/v1/pprof?service=shop&service=42' 400 "parameter 'service' given twice"
bad "/api/v1/diff?base=$DEV&target=$PROD&limit=1&limit=2" 400 "parameter 'limit' given twice"
bad '/api/v1/diff?base.service=shop&target.service=shop&base.service=x' 400 "parameter 'base.service' given twice"
bad "/api/v1/diff?base=$DEV&base=$PROD&target=$PROD" 400 "parameter 'base' given twice"
bad '/api/v1/profiles?limit&limit' 400 "parameter 'limit' given twice"
get '/api/v1/profiles?label=env:dev&label=__name__:cpu'
assert_eq 200 "$HTTP_CODE" "label repeated ($(body))"
assert_eq "$DEV" "$(jq -r '[.profiles[].id] | join(",")' <<<"$HTTP_BODY")" "two label filters"
get '/api/v1/profiles?labels=env:prod&labels=__name__:cpu'
assert_eq 200 "$HTTP_CODE" "labels repeated ($(body))"
assert_eq "$PROD" "$(jq -r '[.profiles[].id] | join(",")' <<<"$HTTP_BODY")" "two labels filters"

# --- a NUL byte in a value or a name is refused, not cut --------------------------------------
bad '/api/v1/profiles?service=shop%00x' 400 "'service'" "NUL"
bad '/api/v1/top?service=shop%00' 400 "'service'" "NUL"
bad "/api/v1/profiles/$DEV/top?focus=main%00xyz" 400 "'focus'" "NUL"
bad '/api/v1/diff?base.service=shop%00x&target.service=shop' 400 "'base.service'" "NUL"
bad '/api/v1/profiles?ser%00vice=shop' 400 "NUL"
get '/api/v1/profiles?service=shop'
assert_eq 2 "$(jq '.profiles | length' <<<"$HTTP_BODY")" "service=shop (no NUL) still selects"

# --- source: one of the documented sources ----------------------------------------------------
bad '/api/v1/profiles?source=nosuch' 400 "'source'" "sentry, otlp, pprof, folded or spaa"
bad '/api/v1/top?source=pprof2' 400 "'source'" "sentry, otlp, pprof, folded or spaa"
bad '/api/v1/profiles?source=' 400 "'source'"
for s in sentry otlp pprof spaa; do
  ok "/api/v1/profiles?source=$s"
done
get '/api/v1/profiles?source=sentry'
assert_eq "$SENTRY" "$(jq -r '[.profiles[].id] | join(",")' <<<"$HTTP_BODY")" "source=sentry"

# --- a label key with two values would match nothing (or, kept last, half of it): refused --------
bad '/api/v1/profiles?label=env:dev&label=env:prod' 400 "'env' given two values" "'dev' and 'prod'"
bad '/api/v1/profiles?labels=env:dev,env:prod' 400 "'env' given two values"
bad '/api/v1/top?service=shop&label=env:dev&labels=env:prod' 400 "'env' given two values"
get '/api/v1/profiles?label=env:dev&labels=env:dev'
assert_eq "$DEV" "$(jq -r '[.profiles[].id] | join(",")' <<<"$HTTP_BODY")" "one value given twice"

# --- each view takes its own parameters, not another's ----------------------------------------
bad "/api/v1/profiles/$DEV/flamegraph?limit=5" 400 "unknown parameter 'limit'"
bad "/api/v1/profiles/$DEV/top?max_nodes=5" 400 "unknown parameter 'max_nodes'"
bad "/api/v1/profiles/$DEV/collapsed?budget=512" 400 "unknown parameter 'budget'"
bad '/api/v1/flamegraph?service=shop&limit=5' 400 "unknown parameter 'limit'"
bad '/api/v1/summary?service=shop&max_nodes=5' 400 "unknown parameter 'max_nodes'"
ok "/api/v1/profiles/$DEV/top?limit=5"
ok "/api/v1/profiles/$DEV/flamegraph?max_nodes=5"
ok '/api/v1/summary?service=shop&budget=512&format=json'

echo "ok [$E2E_NAME]"
