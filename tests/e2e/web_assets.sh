#!/usr/bin/env bash
# The web page embedded in the binary: every file of server/web/ served byte-identical at
# /web/<name> (index.html at / too) with its media type, an ETag answered 304 on
# If-None-Match (weak, in a list, or *), the Content-Security-Policy and nosniff, HEAD
# without a body; unknown files and deeper paths 404 with JSON; the page needs no token
# when the API does.
source "$(dirname "$0")/lib.bash"
WEB="$(cd "$(dirname "$0")/../../server/web" && pwd)"
command -v jq >/dev/null || fail "jq is required"
start_server --read-token webtok

media_of() {
  case "$1" in
  *.html) echo "text/html; charset=utf-8" ;;
  *.js) echo "text/javascript; charset=utf-8" ;;
  *.css) echo "text/css; charset=utf-8" ;;
  *.svg) echo "image/svg+xml" ;;
  *.png) echo "image/png" ;;
  *) fail "no expected media type for $1: add it here and in server/web.c" ;;
  esac
}
header() { printf '%s\n' "$HTTP_HEADERS" | sed -n "s/^$1: //Ip" | head -n1; }

n=0
for f in "$WEB"/*; do
  name=$(basename "$f")
  curl -sS -o "$E2E_TMP/got" -D "$E2E_TMP/h" "$SERVER_URL/web/$name" || fail "GET /web/$name"
  HTTP_HEADERS=$(tr -d '\r' <"$E2E_TMP/h")
  assert_contains "$(head -n1 <<<"$HTTP_HEADERS")" " 200" "GET /web/$name status"
  cmp -s "$f" "$E2E_TMP/got" || fail "/web/$name differs from server/web/$name"
  assert_eq "$(media_of "$name")" "$(header Content-Type)" "/web/$name Content-Type"
  assert_eq "$(stat -c %s "$f")" "$(header Content-Length)" "/web/$name Content-Length"
  etag=$(header ETag)
  [[ "$etag" =~ ^\"[0-9a-f]{16}\"$ ]] || fail "/web/$name ETag '$etag'"
  assert_eq "\"$(sha256sum "$f" | cut -c1-16)\"" "$etag" "/web/$name ETag is its SHA-256"
  assert_eq "nosniff" "$(header X-Content-Type-Options)" "/web/$name nosniff"
  csp=$(header Content-Security-Policy)
  assert_contains "$csp" "default-src 'self'" "/web/$name CSP"
  assert_contains "$csp" "script-src 'self';" "/web/$name CSP scripts"
  [[ "$csp" != *unsafe-inline* && "$csp" != *unsafe-eval* ]] || fail "/web/$name CSP: $csp"
  # revalidation: the same ETag (alone, weak, in a list, or *) is a 304 with no body
  for inm in "$etag" "W/$etag" "\"0000000000000000\", $etag" "*"; do
    http GET "/web/$name" -H "If-None-Match: $inm"
    assert_eq 304 "$HTTP_CODE" "/web/$name If-None-Match: $inm"
    assert_eq "" "$HTTP_BODY" "/web/$name 304 body"
    assert_eq "$etag" "$(header ETag)" "/web/$name 304 ETag"
  done
  http GET "/web/$name" -H 'If-None-Match: "0000000000000000"'
  assert_eq 200 "$HTTP_CODE" "/web/$name with another ETag"
  n=$((n + 1))
done
((n >= 3)) || fail "only $n files in server/web/"

# / is index.html, HEAD has its headers and no body
curl -sS -o "$E2E_TMP/root" "$SERVER_URL/" || fail "GET /"
cmp -s "$WEB/index.html" "$E2E_TMP/root" || fail "/ is not server/web/index.html"
got=$(curl -sS -I -o /dev/null -D "$E2E_TMP/h" -w '%{http_code} %{size_download}' "$SERVER_URL/") ||
  fail "HEAD /"
HTTP_HEADERS=$(tr -d '\r' <"$E2E_TMP/h")
assert_eq "200 0" "$got" "HEAD /: status and body bytes"
assert_eq "text/html; charset=utf-8" "$(header Content-Type)" "HEAD / Content-Type"
assert_eq "$(stat -c %s "$WEB/index.html")" "$(header Content-Length)" "HEAD / Content-Length"
http GET '/?x=1'
assert_eq 200 "$HTTP_CODE" "GET / with a query"

# unknown files and paths: 404 with a JSON body that names them
for p in /web/nope.js /web/index.htm /web/.. /web/a/b.js /web/; do
  http GET "$p" --path-as-is
  assert_eq 404 "$HTTP_CODE" "GET $p"
  assert_eq "not_found" "$(jq -r .error <<<"$HTTP_BODY")" "GET $p error ($HTTP_BODY)"
  [[ -n "$(jq -r .detail <<<"$HTTP_BODY")" ]] || fail "GET $p: no detail"
done
http GET /web/nope.js
assert_contains "$HTTP_BODY" "nope.js" "404 names the file"
http POST /web/app.js -d x
assert_eq 405 "$HTTP_CODE" "POST /web/app.js"

# the page loads without a token while the API wants one; /api/v1/access says so
http GET /api/v1/services
assert_eq 401 "$HTTP_CODE" "services without a token"
http GET /api/v1/access
assert_eq 200 "$HTTP_CODE" "access without a token"
assert_eq "true false" "$(jq -r '"\(.read_token_required) \(.authorized)"' <<<"$HTTP_BODY")" "access, no token"
http GET /api/v1/access -H 'Authorization: Bearer nope'
assert_eq "true false" "$(jq -r '"\(.read_token_required) \(.authorized)"' <<<"$HTTP_BODY")" "access, bad token"
http GET /api/v1/access -H 'Authorization: Bearer webtok'
assert_eq "true true" "$(jq -r '"\(.read_token_required) \(.authorized)"' <<<"$HTTP_BODY")" "access, good token"
echo "ok [$E2E_NAME]: $n files byte-identical, 304s, 404s"
