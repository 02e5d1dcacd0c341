#!/usr/bin/env bash
# HTTP edges a client can hit before any handler: a URI or a head over our caps (414, 431),
# HTTP/1.1 without Host (400), answered once with our JSON body. What libmicrohttpd 0.9.75
# answers itself and does not let us shape (a head over its 32 KiB memory, a malformed
# Content-Length, bad chunked framing) keeps its status, and the server keeps serving.
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

# answered by libmicrohttpd itself: the status is right, the body is its own
a=$(raw "b'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: '+b'a'*40000+b'\r\n\r\n'")
assert_contains "$a" "HTTP/1.1 431" "a 40 KB head (libmicrohttpd)"
a=$(raw "b'POST /api/v1/spaa HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n'")
assert_contains "$a" "HTTP/1.1 400" "bad chunked framing (libmicrohttpd)"
a=$(raw "b'POST /api/v1/spaa HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'")
assert_contains "$a" "HTTP/1.1 400" "Content-Length: -1 (libmicrohttpd)"

http GET /healthz
assert_eq 200 "$HTTP_CODE" "still serving"
stop_server
echo "http_edges: ok"
