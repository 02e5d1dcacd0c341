# Source it: web_node_install installs tests/web/package.json's pinned packages (playwright-
# core) once per build dir with `npm ci`, and sets WEB_NODE to the folder holding its
# node_modules; web_chromium sets CHROMIUM to Debian's chromium. Both fail (never skip)
# when something is missing: scripts/install-deps.sh installs chromium, nodejs and npm.
# Needs lib.bash's fail (tests) or a fail function of the caller's own.
WEB_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

web_node_install() {
  command -v node >/dev/null || fail "node is required (scripts/install-deps.sh installs nodejs)"
  command -v npm >/dev/null || fail "npm is required (scripts/install-deps.sh installs npm)"
  WEB_NODE=${SPAA_BUILD:-${TMPDIR:-/tmp}}/web-node
  if [[ -f "$WEB_NODE/node_modules/playwright-core/package.json" ]] &&
    cmp -s "$WEB_SRC/package-lock.json" "$WEB_NODE/package-lock.json"; then
    return 0
  fi
  local staging="$WEB_NODE.tmp.$$" log
  rm -rf "$staging"
  mkdir -p "$staging"
  cp "$WEB_SRC/package.json" "$WEB_SRC/package-lock.json" "$staging/"
  log="$staging.log"
  # three tries, 10 s apart: a registry that drops one connection is not a failure of ours
  local try
  for try in 1 2 3; do
    (cd "$staging" && npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1 && break
    if ((try == 3)); then
      rm -rf "$staging"
      fail "npm ci of tests/web/package.json failed three times: $(tail -n 5 "$log")"
    fi
    echo "npm ci failed (try $try of 3), again in 10 s: $(tail -n 1 "$log")" >&2
    sleep 10
  done
  rm -f "$log"
  rm -rf "$WEB_NODE"
  mv "$staging" "$WEB_NODE"
}

web_chromium() {
  CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
  [[ -n "$CHROMIUM" ]] || fail "chromium is required (scripts/install-deps.sh installs it)"
  export CHROMIUM
}
