#!/usr/bin/env bash
# A real Sentry SDK against the real server: @sentry/node with @sentry/profiling-node (from
# npm, cached under the build dir) runs a CPU-busy span with transaction profiling
# (profilesSampleRate: a V1 "profile" item) and then with continuous profiling
# (profileSessionSampleRate + profileLifecycle "trace": "profile_chunk" items), DSN pointed
# at the server; the profiles must be stored, listed, and their SPAA valid.
source "$(dirname "$0")/lib.bash"

# 10.x is the newest line with both modes (11 dropped transaction profiling)
SDK_VERSION=10.75.3
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "skip: node and npm are needed (Debian packages nodejs and npm)"
  exit 77
fi

# --- the SDK, installed once per build dir --------------------------------------------------
CACHE=${SPAA_BUILD:-$E2E_TMP}/npm-sentry-$SDK_VERSION
if [[ ! -f "$CACHE/node_modules/@sentry/profiling-node/package.json" ]]; then
  staging="$CACHE.tmp.$$"
  rm -rf "$staging"
  mkdir -p "$staging"
  echo '{"private":true}' >"$staging/package.json"
  # three tries, 10 s apart: a registry that drops one connection is not a failure of ours
  for try in 1 2 3; do
    (cd "$staging" && npm install --no-audit --no-fund --loglevel=error \
      "@sentry/node@$SDK_VERSION" "@sentry/profiling-node@$SDK_VERSION") >"$E2E_TMP/npm.log" 2>&1 &&
      break
    ((try == 3)) && break
    echo "npm install failed (try $try of 3), again in 10 s: $(tail -n 1 "$E2E_TMP/npm.log")" >&2
    sleep 10
  done
  if ! [[ -f "$staging/node_modules/@sentry/profiling-node/package.json" ]]; then
    rm -rf "$staging"
    if grep -qiE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|network|proxy' "$E2E_TMP/npm.log"; then
      echo "skip: npm cannot reach its registry: $(grep -m1 -iE 'ENOTFOUND|EAI_AGAIN|ECONN|ETIMEDOUT|network|proxy' "$E2E_TMP/npm.log")"
      exit 77
    fi
    fail "npm install failed: $(tail -n 5 "$E2E_TMP/npm.log")"
  fi
  rm -rf "$CACHE"
  mv "$staging" "$CACHE"
fi

KEY=5a1e5a1e5a1e5a1e5a1e5a1e5a1e5a1e
PROJECT=4242
start_server --sentry-key "$PROJECT:$KEY"
DSN="http://$KEY@127.0.0.1:$SERVER_PORT/$PROJECT"

# run.js MODE: "transaction" (V1) or "continuous" (V2); a busy span of ~800 ms, then flush
cat >"$E2E_TMP/run.js" <<'JS'
const Sentry = require('@sentry/node');
const { nodeProfilingIntegration } = require('@sentry/profiling-node');
const mode = process.argv[2];
const opts = {
  dsn: process.env.E2E_DSN,
  release: 'e2e@1.0.0',
  environment: 'e2e',
  tracesSampleRate: 1,
  integrations: [nodeProfilingIntegration()],
};
if (mode === 'transaction') opts.profilesSampleRate = 1;
else { opts.profileSessionSampleRate = 1; opts.profileLifecycle = 'trace'; }
Sentry.init(opts);

function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function busy(ms) {
  const end = Date.now() + ms;
  let x = 0;
  while (Date.now() < end) x += fib(20);
  return x;
}
(async () => {
  Sentry.startSpan({ name: 'e2e-busy-' + mode, op: 'task' }, () => busy(800));
  await new Promise((r) => setTimeout(r, 200));
  const ok = await Sentry.flush(10000);
  await Sentry.close(10000);
  if (!ok) { console.error('flush timed out'); process.exit(1); }
})();
JS

# run_sdk MODE: run the script, in the cache dir's module resolution
run_sdk() {
  (cd "$E2E_TMP" && NODE_PATH="$CACHE/node_modules" E2E_DSN="$DSN" timeout 60 node run.js "$1") \
    >"$E2E_TMP/sdk-$1.log" 2>&1 || fail "the SDK run ($1) failed: $(tail -n 20 "$E2E_TMP/sdk-$1.log")"
}

# check_profiles KIND MIN: at least MIN stored profiles of attrs.kind KIND, each with valid
# SPAA holding samples; prints nothing, sets IDS
check_profiles() {
  local kind=$1 min=$2 id spaa="$E2E_TMP/p.spaa" n
  http GET "/api/v1/profiles?service=$PROJECT&source=sentry"
  assert_eq 200 "$HTTP_CODE" "list"
  IDS=$(printf '%s' "$HTTP_BODY" | jq -r --arg k "$kind" '.profiles[] | select(.attrs.kind == $k) | .id')
  n=$(printf '%s' "$IDS" | grep -c . || true)
  ((n >= min)) || fail "$kind: $n profiles stored, want at least $min: $HTTP_BODY
$(grep -E 'sentry (profile dropped|envelope refused)' "$SERVER_LOG" | tail -n 5)"
  for id in $IDS; do
    curl -sS -o "$spaa" "$SERVER_URL/api/v1/profiles/$id/spaa"
    head -n1 "$spaa" | grep -q '"source_tool":"sentry"' || fail "$kind $id: SPAA header: $(head -c 300 "$spaa")"
    grep -q '"type":"sample"' "$spaa" || fail "$kind $id: no sample records"
    grep -q '"type":"stack"' "$spaa" || fail "$kind $id: no stacks"
    "$SPAA_BIN" validate - <"$spaa" >"$E2E_TMP/validate.out" 2>&1 ||
      fail "$kind $id: the SPAA does not validate: $(head -n 5 "$E2E_TMP/validate.out")"
  done
}

# --- transaction profiling: one V1 profile item next to its transaction -----------------
run_sdk transaction
grep -q 'msg="sentry envelope" project=4242' "$SERVER_LOG" || fail "no envelope reached the server"
check_profiles transaction 1
V1_ID=$(printf '%s\n' "$IDS" | head -n1)
http GET "/api/v1/profiles/$V1_ID"
assert_eq 200 "$HTTP_CODE" "metadata of the V1 profile"
assert_eq "e2e-busy-transaction" "$(printf '%s' "$HTTP_BODY" | jq -r '.attrs.transaction')" \
  "transaction name of the V1 profile ($HTTP_BODY)"
assert_eq "e2e@1.0.0" "$(printf '%s' "$HTTP_BODY" | jq -r '.attrs.release')" "release"
assert_eq node "$(printf '%s' "$HTTP_BODY" | jq -r '.attrs.platform')" "platform"
curl -sS -o "$E2E_TMP/v1.spaa" "$SERVER_URL/api/v1/profiles/$V1_ID/spaa"
grep -q '"func":"fib"' "$E2E_TMP/v1.spaa" ||
  fail "the busy function is not among the V1 profile's frames"

# --- continuous profiling: profile_chunk items --------------------------------------------
run_sdk continuous
check_profiles continuous 1
for id in $IDS; do
  curl -sS -o "$E2E_TMP/v2.spaa" "$SERVER_URL/api/v1/profiles/$id/spaa"
  grep -q '"func":"fib"' "$E2E_TMP/v2.spaa" && FOUND=1
done
[[ -n "${FOUND:-}" ]] || fail "the busy function is in no continuous chunk"
# every answer was a 200: the SDK's requests carried the key in the query string
if grep 'msg="request" method=POST path="/api/4242/envelope"' "$SERVER_LOG" | grep -v 'status=200' >/dev/null; then
  fail "an SDK request was not answered 200: $(grep 'path="/api/4242/envelope"' "$SERVER_LOG" | grep -v status=200 | head -n 3)"
fi
echo "ok [$E2E_NAME]: V1 $V1_ID, chunks $(printf '%s' "$IDS" | tr '\n' ' ')"
