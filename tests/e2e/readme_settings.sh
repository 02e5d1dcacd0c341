#!/usr/bin/env bash
# The README documents every setting and every metric: each option `serve --help` lists
# appears in README.md's configuration table with its flag, environment variable and
# config key (and the key in config/example.conf), and each metric family a running server
# exposes is named in README.md and docs/metrics.md.
source "$(dirname "$0")/lib.bash"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
README="$ROOT/README.md"
[[ -f $README && -f $ROOT/docs/metrics.md && -f $ROOT/config/example.conf ]] ||
  fail "README.md, docs/metrics.md or config/example.conf not found under $ROOT"

"$SPAA_BIN" serve --help >"$E2E_TMP/help.txt" || fail "serve --help"
n=0
while read -r flag env; do
  flag=${flag%%[*}
  [[ $flag == --config ]] && continue
  key=${flag#--}
  key=${key//-/_}
  grep -qF -- "\`$flag" "$README" || fail "README.md lacks the flag $flag"
  grep -qF "\`$env\`" "$README" || fail "README.md lacks the variable $env ($flag)"
  grep -qE "^\| \`$key\`" "$README" || fail "README.md's table lacks the config key $key"
  grep -qE "^#? ?$key = " "$ROOT/config/example.conf" || fail "config/example.conf lacks $key"
  n=$((n + 1))
done < <(awk '/^  --/ { for (i = 2; i <= NF; i++) if ($i ~ /^SPAA_RELAY_/) { print $1, $i; break } }' \
  "$E2E_TMP/help.txt")
((n >= 29)) || fail "only $n options read from serve --help"
echo "$n settings documented"

start_server --grpc-listen ''
http GET /metrics
assert_eq 200 "$HTTP_CODE" "metrics"
m=0
while read -r name; do
  grep -qF "\`$name" "$README" || fail "README.md does not name the metric $name"
  grep -qF "\`$name" "$ROOT/docs/metrics.md" || fail "docs/metrics.md does not name $name"
  m=$((m + 1))
done < <(printf '%s\n' "$HTTP_BODY" | awk '$1 == "#" && $2 == "TYPE" { print $3 }')
((m >= 30)) || fail "only $m metric families exposed"
echo "$m metrics documented"
echo "ok [$E2E_NAME]"
