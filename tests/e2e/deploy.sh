#!/usr/bin/env bash
# Deployment: open mode on a non-loopback address is refused (with the way out in the
# message) and allowed by --allow-open / SPAA_RELAY_ALLOW_OPEN; the container's own settings
# (the Dockerfile's ENV and CMD, the example config) start a server that its HEALTHCHECK
# command (spaa-relay healthcheck on /readyz) finds healthy and the compose example client
# pushes to; healthcheck fails on a dead server; scripts/check-deploy.sh catches broken files.
source "$(dirname "$0")/lib.bash"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v python3 >/dev/null || fail "python3 is needed (scripts/install-deps.sh)"

expect_refusal() { # WANT_SUBSTRING command...
  local want=$1 out rc=0
  shift
  out=$("$@" 2>&1) || rc=$?
  assert_eq 2 "$rc" "exit status of: $*"
  assert_contains "$out" "$want" "message of: $*"
  assert_contains "$out" "allow_open = true (SPAA_RELAY_ALLOW_OPEN=true, --allow-open)" \
    "the way out, in the message of: $*"
}

# --- open on 0.0.0.0 without keys: refused, and nothing is created -----------------------
expect_refusal "refusing to start open: listen is 0.0.0.0:0, not loopback, and no sentry keys" \
  "$SPAA_BIN" serve --listen 0.0.0.0:0 --data-dir "$E2E_TMP/never"
[[ ! -e "$E2E_TMP/never" ]] || fail "a refused start created its data directory"
expect_refusal "listen is [::]:0" "$SPAA_BIN" serve --listen '[::]:0' --data-dir "$E2E_TMP/never"
expect_refusal "grpc_listen is 0.0.0.0:0" \
  env SPAA_RELAY_GRPC_LISTEN=0.0.0.0:0 "$SPAA_BIN" serve --listen 127.0.0.1:0 --data-dir "$E2E_TMP/never"
expect_refusal "refusing to start open" \
  env SPAA_RELAY_ALLOW_OPEN=false "$SPAA_BIN" serve --listen 0.0.0.0:0 --data-dir "$E2E_TMP/never"

# --- the container's settings, read from the Dockerfile ----------------------------------
# ENV of the final stage (ports 0: tests run in parallel) and CMD's --config, with the
# example config from the repository in place of /etc/spaa-relay/spaa-relay.conf
env_line=$(grep -E '^ENV SPAA_RELAY_LISTEN=' "$ROOT/docker/Dockerfile") || fail "no ENV line in the Dockerfile"
container_env=()
for kv in ${env_line#ENV }; do
  case $kv in
    SPAA_RELAY_LISTEN=* | SPAA_RELAY_GRPC_LISTEN=*) container_env+=("${kv%:*}:0") ;;
    SPAA_RELAY_DATA_DIR=*) container_env+=("SPAA_RELAY_DATA_DIR=$E2E_TMP/container-data") ;;
    *) container_env+=("$kv") ;;
  esac
done
assert_contains "${container_env[*]}" "SPAA_RELAY_LISTEN=0.0.0.0:0" "the container listens on 0.0.0.0"
assert_contains "${container_env[*]}" "SPAA_RELAY_GRPC_LISTEN=0.0.0.0:0" "gRPC on 0.0.0.0"
grep -q '^CMD \["serve", "--config", "/etc/spaa-relay/spaa-relay.conf"\]' "$ROOT/docker/Dockerfile" \
  || fail "the Dockerfile's CMD is not serve --config /etc/spaa-relay/spaa-relay.conf"
health=$(grep -A1 '^HEALTHCHECK' "$ROOT/docker/Dockerfile" | tr -d '\\\n')
assert_contains "$health" '"healthcheck", "--url", "http://127.0.0.1:8080/readyz"' "the HEALTHCHECK"

# as shipped, with no keys or tokens: refused
expect_refusal "listen is 0.0.0.0:0" \
  env "${container_env[@]}" "$SPAA_BIN" serve --config "$ROOT/config/example.conf"

# with SPAA_RELAY_ALLOW_OPEN=true: starts (start_server's --listen/--data-dir put back the
# container's values, flags winning over the environment)
for kv in "${container_env[@]}"; do export "$kv"; done
export SPAA_RELAY_ALLOW_OPEN=true
start_server --config "$ROOT/config/example.conf" --listen 0.0.0.0:0 --data-dir "$E2E_TMP/container-data"
unset SPAA_RELAY_ALLOW_OPEN
grep -q 'listening on 0.0.0.0:' "$SERVER_LOG" || fail "not listening on 0.0.0.0"
grep -q 'msg="listening on gRPC h2c" addr=0.0.0.0:' "$SERVER_LOG" || fail "gRPC not on 0.0.0.0"
grep -q 'allow_open=true' "$SERVER_LOG" || fail "the configuration line lacks allow_open=true"
grep -q "file=\"$ROOT/config/example.conf\"" "$SERVER_LOG" || fail "the example config was not read"
grep -q 'level=warn msg="open mode' "$SERVER_LOG" || fail "no open-mode warning"

# the HEALTHCHECK command: healthy once /readyz answers 200
out=$("$SPAA_BIN" healthcheck --url "$SERVER_URL/readyz") || fail "healthcheck of a live server failed: $out"
assert_eq "$SERVER_URL/readyz: 200" "$out" "healthcheck output"
"$SPAA_BIN" healthcheck --url "$SERVER_URL/healthz" >/dev/null || fail "healthcheck /healthz"
rc=0; out=$("$SPAA_BIN" healthcheck --url "$SERVER_URL/nope" 2>&1) || rc=$?
assert_eq 1 "$rc" "healthcheck of a 404"
assert_contains "$out" "answered 404" "healthcheck of a 404"

# the compose example client pushes a generated profile; it is stored and readable
out=$(python3 "$ROOT/docker/example-client/push_pprof.py" --url "$SERVER_URL" --once --seed 7) \
  || fail "example client: $out"
assert_contains "$out" "pushed: 200 ids=" "example client"
id=${out#*ids=}; id=${id%% *}
[[ -n "$id" ]] || fail "no profile id in: $out"
http GET "/api/v1/profiles/$id/top?limit=3"
assert_eq 200 "$HTTP_CODE" "top of the pushed profile: $HTTP_BODY"
assert_contains "$HTTP_BODY" "parse_json" "top of the pushed profile"
http GET "/api/v1/profiles?service=example-client"
assert_contains "$HTTP_BODY" "\"id\":\"$id\"" "the pushed profile in the list"
PORT=$SERVER_PORT
stop_server || fail "the container-configured server did not stop cleanly"

# a dead server is unhealthy (the HEALTHCHECK must not pass while nothing listens)
rc=0; out=$("$SPAA_BIN" healthcheck --url "http://127.0.0.1:$PORT/readyz" --timeout 2 2>&1) || rc=$?
assert_eq 1 "$rc" "healthcheck of a stopped server"
assert_contains "$out" "cannot connect" "healthcheck of a stopped server"
rc=0; "$SPAA_BIN" healthcheck --url "ftp://x/" 2>/dev/null || rc=$?
assert_eq 2 "$rc" "healthcheck of a bad URL"

# --- 0.0.0.0 with tokens needs no allow_open; the client then needs the token -------------
start_server --listen 0.0.0.0:0 --ingest-token tok --read-token rtok
grep -q 'allow_open=false' "$SERVER_LOG" || fail "allow_open should be false"
rc=0; python3 "$ROOT/docker/example-client/push_pprof.py" --url "$SERVER_URL" --once 2>"$E2E_TMP/client.err" || rc=$?
assert_eq 1 "$rc" "a push without the token"
grep -q "push refused: 401" "$E2E_TMP/client.err" || fail "no 401: $(cat "$E2E_TMP/client.err")"
python3 "$ROOT/docker/example-client/push_pprof.py" --url "$SERVER_URL" --token tok --once >/dev/null \
  || fail "a push with the token failed"
stop_server || fail "stop"
for kv in "${container_env[@]}"; do unset "${kv%%=*}"; done

# --- the static checker passes on the repository and catches broken files -----------------
out=$(SPAA_BIN=$SPAA_BIN bash "$ROOT/scripts/check-deploy.sh" "$ROOT" 2>&1) || fail "check-deploy: $out"
fake=$E2E_TMP/fake
mkdir -p "$fake"
for x in CMakeLists.txt codecs storage config server bench tests; do ln -s "$ROOT/$x" "$fake/$x"; done
mutate() { # WANT_PROBLEM FILE SED_SCRIPT
  rm -rf "$fake/docker"
  cp -r "$ROOT/docker" "$fake/docker"
  sed -i -e "$3" "$fake/docker/$2"
  local rc=0 out
  out=$(bash "$ROOT/scripts/check-deploy.sh" "$fake" 2>&1) || rc=$?
  assert_eq 1 "$rc" "check-deploy on a broken $2 ($3)"
  assert_contains "$out" "$1" "check-deploy on a broken $2 ($3)"
}
mutate "HEALTHCHECK runs --version" Dockerfile 's#"healthcheck", "--url", "http://127.0.0.1:8080/readyz"#"--version"#'
mutate "COPY source 'bench2' does not exist" Dockerfile 's#^COPY bench ./bench#COPY bench2 ./bench#'
mutate "not started with --config FILE" Dockerfile 's#^CMD .*#CMD ["serve"]#'
mutate "SPAA_RELAY_LISTEN=127.0.0.1:8080 does not listen on every interface" Dockerfile 's#SPAA_RELAY_LISTEN=0.0.0.0:8080#SPAA_RELAY_LISTEN=127.0.0.1:8080#'
mutate "does not parse" compose.yaml 's#^services:#services: [#'
mutate "volume 'spaa-dat', not declared" compose.yaml 's#- spaa-data:/data#- spaa-dat:/data#'
mutate "maps a port the image does not EXPOSE" compose.yaml 's#127.0.0.1:8080:8080#127.0.0.1:8080:9090#'
mutate "it would refuse to start on 0.0.0.0" compose.yaml '/SPAA_RELAY_.*_TOKENS/d'
mutate "ProtectSystem=strict missing" spaa-relay.service '/^ProtectSystem=/d'
mutate "runs as root" spaa-relay.service '/^DynamicUser=/d'
if command -v systemd-analyze >/dev/null; then
  mutate "systemd-analyze verify" spaa-relay.service 's#^RestartSec=2#RestartSec=soon#'
fi
echo ok
