#!/usr/bin/env bash
# What an OTLP resource's attributes become, at the edges senders reach in practice:
#  - a 7,500-byte process.command_line (a JVM's classpath, from the Collector's resource
#    detection) does not cost the profile: it is stored, the value kept whole in the header,
#    only left out of the labels (the store indexes labels up to 4,096 bytes);
#  - a blank service.name counts as absent: process.executable.name names the service;
#  - a service name with quotes and key=value inside stays one field in the log (JSON log).
source "$(dirname "$0")/lib.bash"
command -v jq >/dev/null || fail "jq is required"

request() { # writes a two-resource OTLP/JSON request to $1
  python3 - "$1" <<'PY'
import json, sys
def resource(attrs):
    return {"resource": {"attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs]},
            "scopeProfiles": [{"scope": {}, "profiles": [{"sampleType": {"typeStrindex": 1, "unitStrindex": 2},
                                                           "samples": [{"stackIndex": 1, "values": ["3"]}]}]}]}
cmd = "java -cp " + ":".join("/opt/app/lib/dependency-%04d.jar" % i for i in range(260))
req = {"resourceProfiles": [
          resource([("service.name", "javasvc"), ("process.command_line", cmd), ("host.name", "h1")]),
          resource([("service.name", "  "), ("process.executable.name", "myexe")]),
          resource([("service.name", 'my service id=42 "q"')])],
       "dictionary": {"locationTable": [{}, {"lines": [{"functionIndex": 1}]}],
                      "functionTable": [{}, {"nameStrindex": 3}],
                      "stringTable": ["", "samples", "count", "main"],
                      "stackTable": [{}, {"locationIndices": [1]}]}}
assert len(cmd) > 7000
json.dump(req, open(sys.argv[1], "w"))
print(len(cmd))
PY
}
CMDLEN=$(request "$E2E_TMP/req.json")

start_server --log-format json
http POST /v1development/profiles -H 'Content-Type: application/json' --data-binary @"$E2E_TMP/req.json"
assert_eq 200 "$HTTP_CODE" "the request ($HTTP_BODY)"
assert_eq 3 "$(sed -n 's/^X-Spaa-Profile-Count: *//Ip' <<<"$HTTP_HEADERS" | tr -d '\r')" "three profiles stored"

http GET '/api/v1/profiles?service=javasvc'
assert_eq 1 "$(jq '.profiles | length' <<<"$HTTP_BODY")" "the JVM's profile stored"
JID=$(jq -r '.profiles[0].id' <<<"$HTTP_BODY")
assert_eq h1 "$(jq -r '.profiles[0].labels["host.name"]' <<<"$HTTP_BODY")" "its short labels kept"
assert_eq null "$(jq -r '.profiles[0].labels["process.command_line"]' <<<"$HTTP_BODY")" \
  "the command line is no label"
http GET "/api/v1/profiles/$JID/spaa"
kept=$(head -n1 <<<"$HTTP_BODY" | jq -r '.["x_otel_resource_process.command_line"] | length')
assert_eq "$CMDLEN" "$kept" "the command line kept whole in the header"

http GET '/api/v1/profiles?service=myexe'
assert_eq 1 "$(jq '.profiles | length' <<<"$HTTP_BODY")" "a blank service.name: the executable names it"

svc=$(jq -r 'select(.msg == "profile stored") | .service' "$SERVER_LOG" | grep 'my service')
assert_eq 'my service id=42 "q"' "$svc" "the quoted service name is one log field"
jq -e 'select(.msg == "profile stored" and (.id == "42" or .id == 42))' "$SERVER_LOG" >/dev/null &&
  fail "the service name made a field of its own: $(grep -a 'my service' "$SERVER_LOG")"
stop_server
echo "ok [$E2E_NAME]"
