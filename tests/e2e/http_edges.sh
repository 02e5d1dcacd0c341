#!/usr/bin/env bash
# HTTP edges a client can hit before any handler: a URI or a head over our caps (414, 431),
# HTTP/1.1 without Host (400), a transfer coding other than chunked (501), and what
# libmicrohttpd refuses before any handler (a head over its 32 KiB memory, a malformed or
# overflowing Content-Length, bad chunked framing, a malformed header line, an unknown HTTP
# version; server/http_edge.c): each answered once, with our JSON body, also on a
# keep-alive connection's second request; the server keeps serving and counts them.
source "$(dirname "$0")/lib.bash"

# raw PYTHON_BYTES_EXPR: send the bytes, print what came back (CRLF shown as " | ")
raw() {
  python3 - "$SERVER_PORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(eval(sys.argv[2]))
s.settimeout(3)
d = b""
try:
    while True:
        x = s.recv(65536)
        if not x:
            break
        d += x
except OSError:
    pass
print(d.decode("latin-1").replace("\r\n", " | "))
PY
}

# count_status ANSWER: how many status lines the answer holds
count_status() { grep -o 'HTTP/1.1 [0-9][0-9][0-9]' <<<"$1" | wc -l; }

start_server

a=$(raw "b'GET /healthz HTTP/1.1\r\n\r\n'")
assert_contains "$a" "HTTP/1.1 400" "HTTP/1.1 without Host"
assert_contains "$a" '{"error":"bad_request","detail":"an HTTP/1.1 request must carry a Host header"}' \
  "HTTP/1.1 without Host: JSON"
assert_eq 1 "$(count_status "$a")" "one answer without Host"
a=$(raw "b'GET /healthz HTTP/1.0\r\n\r\n'")
assert_contains "$a" "HTTP/1.1 200" "HTTP/1.0 needs no Host"

a=$(raw "b'GET /'+b'a'*20000+b' HTTP/1.1\r\nHost: x\r\n\r\n'")
assert_contains "$a" "HTTP/1.1 414" "a 20 KB path"
assert_contains "$a" '"error":"uri_too_long"' "a 20 KB path: JSON"
assert_eq 1 "$(count_status "$a")" "one answer to a long path"
a=$(raw "b'POST /ingest?name='+b'a'*20000+b' HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n'")
assert_contains "$a" "HTTP/1.1 414" "a 20 KB query string"
assert_contains "$a" "over the 8192-byte cap" "a 20 KB query string: detail"

a=$(raw "b'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: '+b'a'*14000+b'\r\n\r\n'")
assert_contains "$a" "HTTP/1.1 200" "a 14 KB head is served"
for kb in 20 30; do
  a=$(raw "b'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: '+b'a'*($kb*1024)+b'\r\n\r\n'")
  assert_contains "$a" "HTTP/1.1 431" "a $kb KB head"
  assert_contains "$a" '"error":"headers_too_large"' "a $kb KB head: JSON"
  assert_contains "$a" "over the 16384-byte cap" "a $kb KB head: detail"
  assert_eq 1 "$(count_status "$a")" "one answer to a $kb KB head"
done

# edge ANSWER STATUS ERROR WHAT: one answer, with that status and our JSON error code
edge() {
  assert_contains "$1" "HTTP/1.1 $2" "$4"
  assert_contains "$1" "Content-Type: application/json" "$4: JSON"
  assert_contains "$1" "{\"error\":\"$3\",\"detail\":\"" "$4: our error body"
  [[ "$1" != *"<html>"* ]] || fail "$4: an HTML body: $1"
  assert_eq 1 "$(count_status "$1")" "$4: answered once"
}
# refused by libmicrohttpd before any handler, made ours by server/http_edge.c
a=$(raw "b'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: '+b'a'*40000+b'\r\n\r\n'")
edge "$a" 431 headers_too_large "a 40 KB head"
assert_contains "$a" "over the 16384-byte cap" "a 40 KB head: detail"
a=$(raw "b'GET /'+b'a'*40000+b' HTTP/1.1\r\nHost: x\r\n\r\n'")
edge "$a" 414 uri_too_long "a 40 KB request line"
a=$(raw "b'POST /api/v1/spaa HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n'")
edge "$a" 400 bad_request "bad chunked framing"
assert_contains "$a" "the chunked body is malformed" "bad chunked framing: detail"
a=$(raw "b'POST /api/v1/spaa HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'")
edge "$a" 400 bad_request "Content-Length: -1"
assert_contains "$a" "the Content-Length header is not a length" "Content-Length: -1: detail"
a=$(raw "b'POST /api/v1/spaa HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n'")
edge "$a" 413 payload_too_large "an overflowing Content-Length"
a=$(raw "b'GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n'")
edge "$a" 400 bad_request "a header line without a colon"
a=$(raw "b'GET /healthz HTTP/2.5\r\nHost: x\r\n\r\n'")
edge "$a" 505 http_version_not_supported "HTTP/2.5"
# the second request of a keep-alive connection, the first answer still on its way
a=$(raw "b'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nPOST /api/v1/spaa HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n'")
assert_contains "$a" "HTTP/1.1 200" "keep-alive: the first answer"
assert_contains "$a" '{"error":"bad_request","detail":"the Content-Length header is not a length' \
  "keep-alive: the second, ours"
assert_eq 2 "$(count_status "$a")" "keep-alive: two answers, one each"
a=$(raw "b'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nPOST /api/v1/spaa HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;x\r\nabcdeXY'")
assert_contains "$a" "HTTP/1.1 200" "keep-alive chunked: the first answer"
assert_contains "$a" '"detail":"the chunked body is malformed' "keep-alive chunked: the second, ours"
assert_eq 2 "$(count_status "$a")" "keep-alive chunked: two answers"
# a transfer coding other than chunked: 501, not a wait for a body nobody can delimit
a=$(raw "b'POST /ingest HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc'")
edge "$a" 501 not_implemented "Transfer-Encoding: gzip"
a=$(raw "b'GET /healthz\r\n\r\n'")
edge "$a" 400 bad_request "a request line without a version"
a=$(raw "b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'")
edge "$a" 505 http_version_not_supported "the HTTP/2 preface on the HTTP/1.1 port"
# where the body ends in doubt: two lengths, or a length and a transfer coding; the bytes
# after it are not read as a request of their own (one answer, the connection closed)
a=$(raw "b'POST /ingest?name=dup.cpu HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 40\r\n\r\naGET /api/v1/services HTTP/1.1\r\nHost: x\r\n\r\n'")
edge "$a" 400 bad_request "two Content-Length headers"
assert_contains "$a" "more than one Content-Length" "two Content-Length headers: detail"
a=$(raw "b'POST /ingest?name=dup.cpu HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/v1/services HTTP/1.1\r\nHost: x\r\n\r\n'")
edge "$a" 400 bad_request "Content-Length and Transfer-Encoding"
# %00 would end the path early (a profile's id naming the collection), %2F make a separator
for u in '/api/v1/profiles/%00' '/api/v1/profiles?service=a%00b' '/healthz%00x'; do
  http GET "$u"
  assert_eq 400 "$HTTP_CODE" "$u"
  assert_contains "$HTTP_BODY" "encoded NUL byte" "$u: detail"
done
http DELETE '/api/v1/profiles/%00?service=x'
assert_eq 400 "$HTTP_CODE" "a DELETE of an encoded NUL id is no collection delete"
for u in '/api/v1/profiles/%2F' '/api/v1/profiles/a%2fb/spaa'; do
  http GET "$u"
  assert_eq 400 "$HTTP_CODE" "$u"
  assert_contains "$HTTP_BODY" "encoded '/'" "$u: detail"
done
http GET '/api/v1/profiles?service=a%2Fb'
assert_eq 200 "$HTTP_CODE" "%2F in a query value is a '/'"
# on the Sentry envelope route, in its dialect: Relay's body, and the CORS headers a browser
# SDK needs to read the answer
http POST '/api/42/envelope/?sentry_key=a%00b' --data-binary '{}'
assert_eq 400 "$HTTP_CODE" "an encoded NUL on the envelope route"
assert_contains "$HTTP_BODY" '"detail":' "an encoded NUL on the envelope route: Relay's body"
assert_contains "$HTTP_HEADERS" "Access-Control-Allow-Origin: *" "an encoded NUL on the envelope route: CORS"

# counted by status under route "-" (413 and 505 come from the edge only)
m=$(curl -sS "$SERVER_URL/metrics")
assert_contains "$m" 'spaa_relay_requests_total{route="-",status="413"} 1' "the edge's 413 counted"
assert_contains "$m" 'spaa_relay_requests_total{route="-",status="505"} 2' "the edge's 505 counted"

http GET /healthz
assert_eq 200 "$HTTP_CODE" "still serving"
stop_server
echo "http_edges: ok"
