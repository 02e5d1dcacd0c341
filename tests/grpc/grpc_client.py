#!/usr/bin/python3
"""A gRPC client for the end-to-end tests, on Debian's python3-grpcio (raw-bytes unary calls)
and python3-h2 (hand-made HTTP/2 for what a well-behaved client never sends).

  export PORT FILE [--version V] [--gzip] [--timeout S] [--token T | --basic USER:PASS]
      [--method PATH]
      one Export call (or a call of PATH); prints one JSON line: code, details, response
      (hex), and the partial_success of an ExportProfilesServiceResponse
  many PORT FILE N [--version V]
      N concurrent calls on one channel (one HTTP/2 connection); prints the codes, counted
  raw PORT FILE [--timeout GRPC_TIMEOUT] [--encoding E] [--path P] [--ctype C]
      [--http-method M] [--flag N] [--twice] [--cut N] [--no-body]
      one call over python3-h2, FILE as its message; prints the :status, content-type,
      grpc-status and grpc-message it got. What a well-behaved client never sends: --ctype ''
      sends no content-type, --flag the prefix's flag byte (0), --twice the message twice,
      --cut drops the body's last N bytes, --no-body ends the stream with the HEADERS frame
  garbage PORT [--no-preface | --silent]
      the client preface (or an HTTP/1.1 request instead, or nothing), then bytes that are
      no HTTP/2 frame; prints whether the server sent GOAWAY before it closed the connection
      (a server that does not close it within 20 s makes this fail)
  connect PORT FILE CTYPE [--gzip] [--token T] [--method M] [--header NAME:VALUE]...
      one Connect unary call of push.v1.PusherService/Push over python3-h2 (FILE as the body,
      gzip-compressed with Content-Encoding: gzip when asked); prints one JSON line: the
      :status, content-type, retry-after and allow, and the body (text; "" for none)
  settings PORT [--ack SECONDS]
      the client preface and an empty SETTINGS frame by hand, then a PING every 0.25 s
      (so that the connection is never idle) and never an ACK of the server's SETTINGS;
      prints the error code of the GOAWAY the server sent and whether it closed the
      connection (gives up after 20 s). With --ack: a well-behaved client (python3-h2, which
      acknowledges) pings for SECONDS, then makes one call; prints its grpc-status and
      whether a GOAWAY came
  stall PORT FILE
      one Export call from a client whose stream window is 0 (SETTINGS_INITIAL_WINDOW_SIZE),
      so the answer's DATA can never be sent; pings every 0.25 s and prints the error code of
      the RST_STREAM the server sent (gives up after 20 s)
  slow PORT FILE --frame | --body
      a client that trickles a HEADERS frame (a byte every 0.5 s) or a message (a byte every
      0.3 s in DATA frames); prints how the server ended it: the RST_STREAM error code,
      whether it closed the connection, after how many seconds (gives up after 30 s)
  shutdown PORT FILE PID
      one call whose body is sent in two halves, with SIGTERM sent to PID in between: prints
      the call's grpc-status and whether a GOAWAY came (the call must still be answered)
  hold PORT N MIB SECONDS [--split] [--trickle S]
      one connection, N Export calls each announcing a message of MIB MiB and sending all of
      it but its last byte, as fast as the server's windows let it (a call answered or reset
      meanwhile stops; with --split, the first call's 5-byte prefix comes first, in two DATA
      frames, 2 bytes then the rest; with --trickle, all but the last 256 bytes, then one
      byte every S seconds until SIGUSR1); prints {"sent_mib": ...} once no call has more to
      send at once, then pings every 0.5 s, so that the connection is never idle, until
      every call is answered or reset (at most SECONDS); prints one JSON line: per call its grpc-status, grpc-message
      and grpc-retry-pushback-ms, the error code of a RST_STREAM, and whether the connection
      got GOAWAY
"""
import base64
import json
import os
import select
import signal
import socket
import time
import sys
import threading

SERVICE = "/opentelemetry.proto.collector.profiles.%s.ProfilesService/Export"


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def partial_success(resp):
    """(rejected_profiles, error_message) of an ExportProfilesServiceResponse."""
    rejected, message, i = 0, "", 0
    while i < len(resp):
        key, i = varint(resp, i)
        if key & 7 != 2:
            raise ValueError("unexpected wire type")
        n, i = varint(resp, i)
        inner, i = resp[i:i + n], i + n
        if key >> 3 != 1:
            continue
        j = 0
        while j < len(inner):
            k, j = varint(inner, j)
            if k == 8:
                rejected, j = varint(inner, j)
            elif k & 7 == 2:
                m, j = varint(inner, j)
                if k >> 3 == 2:
                    message = inner[j:j + m].decode()
                j += m
            else:
                raise ValueError("unexpected field")
    return rejected, message


def opt(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def cmd_export(port, path, args):
    import grpc
    data = open(path, "rb").read()
    meta = [("authorization", "Bearer " + opt(args, "--token"))] if "--token" in args else None
    if "--basic" in args:
        meta = [("authorization", "Basic " + base64.b64encode(opt(args, "--basic").encode()).decode())]
    comp = grpc.Compression.Gzip if "--gzip" in args else None
    timeout = float(opt(args, "--timeout")) if "--timeout" in args else None
    with grpc.insecure_channel("127.0.0.1:%s" % port) as ch:
        call = ch.unary_unary(opt(args, "--method",
                                  SERVICE % opt(args, "--version", "v1development")))
        out = {"code": "OK", "details": ""}
        try:
            resp = call(data, metadata=meta, compression=comp, timeout=timeout)
            out["response"] = resp.hex()
            if "--method" not in args:
                out["rejected"], out["message"] = partial_success(resp)
        except grpc.RpcError as e:
            out["code"], out["details"] = e.code().name, e.details() or ""
    print(json.dumps(out, sort_keys=True))


def cmd_many(port, path, args):
    import grpc
    data = open(path, "rb").read()
    n = int(args[0])
    with grpc.insecure_channel("127.0.0.1:%s" % port) as ch:
        call = ch.unary_unary(SERVICE % opt(args, "--version", "v1development"))
        futures = [call.future(data, timeout=120) for _ in range(n)]
        codes = {}
        for f in futures:
            try:
                f.result()
                code = "OK"
            except grpc.RpcError as e:
                code = e.code().name
            codes[code] = codes.get(code, 0) + 1
    print(json.dumps(codes, sort_keys=True))


def h2_conn(port):
    import h2.config
    import h2.connection
    sock = socket.create_connection(("127.0.0.1", int(port)), timeout=20)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def cmd_raw(port, path, args):
    import h2.events
    data = open(path, "rb").read()
    msg = bytes([int(opt(args, "--flag", "0"))]) + len(data).to_bytes(4, "big") + data
    if "--twice" in args:
        msg += msg
    if "--cut" in args:
        msg = msg[:len(msg) - int(opt(args, "--cut"))]
    sock, conn = h2_conn(port)
    headers = [(":method", opt(args, "--http-method", "POST")), (":scheme", "http"),
               (":authority", "127.0.0.1"),
               (":path", opt(args, "--path", SERVICE % "v1development"))]
    if opt(args, "--ctype", "application/grpc"):
        headers.append(("content-type", opt(args, "--ctype", "application/grpc")))
    headers.append(("te", "trailers"))
    if "--timeout" in args:
        headers.append(("grpc-timeout", opt(args, "--timeout")))
    if "--encoding" in args:
        headers.append(("grpc-encoding", opt(args, "--encoding")))
    sid = conn.get_next_available_stream_id()
    conn.ping(b"spaa-rly")
    if "--no-body" in args:
        conn.send_headers(sid, headers, end_stream=True)
    else:
        conn.send_headers(sid, headers)
        conn.send_data(sid, msg, end_stream=True)
    sock.sendall(conn.data_to_send())
    got, done = read_answer(sock, conn)
    sock.close()
    print(json.dumps({k: got.get(k, "") for k in (":status", "content-type", "grpc-status",
                                                  "grpc-message", "grpc-retry-pushback-ms",
                                                  "ping", "goaway")},
                     sort_keys=True))


def read_answer(sock, conn):
    """Read until the stream ends; the header fields seen, and ping / goaway flags."""
    import h2.events
    got, done = {}, False
    while not done:
        chunk = sock.recv(65536)
        if not chunk:
            break
        for ev in conn.receive_data(chunk):
            if isinstance(ev, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                for k, v in ev.headers:
                    got[k.decode()] = v.decode()
            elif isinstance(ev, h2.events.DataReceived):
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.PingAckReceived):
                got["ping"] = "ack"
            elif isinstance(ev, h2.events.ConnectionTerminated):
                got["goaway"] = "yes"
            elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)):
                done = True
        sock.sendall(conn.data_to_send())
    return got, done


def cmd_shutdown(port, path, args):
    data = open(path, "rb").read()
    msg = b"\0" + len(data).to_bytes(4, "big") + data
    half = len(msg) // 2
    sock, conn = h2_conn(port)
    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":authority", "x"),
                            (":path", SERVICE % "v1development"),
                            ("content-type", "application/grpc"), ("te", "trailers")])
    conn.send_data(sid, msg[:half])
    sock.sendall(conn.data_to_send())
    time.sleep(0.5)
    os.kill(int(args[0]), signal.SIGTERM)
    time.sleep(0.5)  # the GOAWAY is on its way; the stream was opened before it
    conn.send_data(sid, msg[half:], end_stream=True)
    sock.sendall(conn.data_to_send())
    # python3-h2 takes GOAWAY as the end of the connection and refuses what follows, which
    # the server may send for streams opened before it: read the frames by hand
    raw = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        raw += chunk
    sock.close()
    got, i = {}, 0
    while i + 9 <= len(raw):
        n, kind, sid_ = int.from_bytes(raw[i:i + 3], "big"), raw[i + 3], \
            int.from_bytes(raw[i + 5:i + 9], "big") & 0x7FFFFFFF
        if kind == 7:
            got["goaway"] = "yes"
        elif kind == 1 and sid_ == sid:
            for k, v in conn.decoder.decode(raw[i + 9:i + 9 + n]):
                got[k.decode() if isinstance(k, bytes) else k] = \
                    v.decode() if isinstance(v, bytes) else v
        i += 9 + n
    print(json.dumps({"grpc-status": got.get("grpc-status", ""),
                      "goaway": got.get("goaway", "")}, sort_keys=True))


def cmd_garbage(port, args):
    sock = socket.create_connection(("127.0.0.1", int(port)), timeout=20)
    if "--silent" in args:
        pass  # nothing at all: the server's idle timeout must close it
    elif "--no-preface" in args:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
    else:
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x04\x07\x00\x00\x00\x00\x00"
                     + b"this is not an HTTP/2 frame at all" * 8)
    got = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    except ConnectionResetError:
        pass
    # a GOAWAY frame is type 7
    i, types = 0, []
    while i + 9 <= len(got):
        n = int.from_bytes(got[i:i + 3], "big")
        types.append(got[i + 3])
        i += 9 + n
    print(json.dumps({"closed": True, "goaway": 7 in types}))


class Answer:
    """What came back on one stream: header fields, body, whether it ended (or was reset)."""

    def __init__(self):
        self.fields, self.body, self.done = {}, b"", False

    def feed(self, sock, conn, chunk):
        import h2.events
        for ev in conn.receive_data(chunk):
            if isinstance(ev, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                for k, v in ev.headers:
                    self.fields[k.decode()] = v.decode()
            elif isinstance(ev, h2.events.DataReceived):
                self.body += ev.data
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)):
                self.done = True
        sock.sendall(conn.data_to_send())


def send_body(sock, conn, sid, data, ans):
    """Send data on stream sid as the peer's flow-control windows allow, then end it; stops
    early when the answer ends first (a refusal before the whole body)."""
    while data and not ans.done:
        n = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size, len(data))
        if n == 0:
            chunk = sock.recv(65536)
            if not chunk:
                return
            ans.feed(sock, conn, chunk)
            continue
        conn.send_data(sid, data[:n])
        data = data[n:]
        sock.sendall(conn.data_to_send())
    if not ans.done:
        conn.end_stream(sid)
        sock.sendall(conn.data_to_send())


def cmd_connect(port, path, args):
    import gzip
    data = open(path, "rb").read()
    headers = [(":method", opt(args, "--method", "POST")), (":scheme", "http"),
               (":authority", "127.0.0.1"), (":path", "/push.v1.PusherService/Push"),
               ("content-type", args[0])]
    if "--gzip" in args:
        data = gzip.compress(data)
        headers.append(("content-encoding", "gzip"))
    if "--token" in args:
        headers.append(("authorization", "Bearer " + opt(args, "--token")))
    for i, a in enumerate(args):
        if a == "--header":
            k, v = args[i + 1].split(":", 1)
            headers.append((k.lower(), v.strip()))
    sock, conn = h2_conn(port)
    sid = conn.get_next_available_stream_id()
    ans = Answer()
    conn.send_headers(sid, headers)
    sock.sendall(conn.data_to_send())
    send_body(sock, conn, sid, data, ans)
    while not ans.done:
        chunk = sock.recv(65536)
        if not chunk:
            break
        ans.feed(sock, conn, chunk)
    sock.close()
    out = {k: ans.fields.get(k, "") for k in (":status", "content-type", "retry-after",
                                                  "allow")}
    out["body"] = ans.body.decode("utf-8", "replace")
    print(json.dumps(out, sort_keys=True))


def read_frames(buf):
    """Split complete frames off buf: a list of (type, flags, stream, payload), the rest."""
    frames = []
    while len(buf) >= 9:
        n = int.from_bytes(buf[:3], "big")
        if len(buf) < 9 + n:
            break
        frames.append((buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF,
                       buf[9:9 + n]))
        buf = buf[9 + n:]
    return frames, buf


def cmd_settings(port, args):
    if "--ack" in args:
        return settings_acked(port, float(opt(args, "--ack")))
    sock = socket.create_connection(("127.0.0.1", int(port)), timeout=0.25)
    # the preface, then SETTINGS (type 4) with no parameter
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
    got = {"goaway_error": None, "closed": False, "server_settings": False}
    buf, end = b"", time.monotonic() + 20
    while time.monotonic() < end:
        try:
            sock.sendall(b"\x00\x00\x08\x06\x00\x00\x00\x00\x00" + b"keepbusy")  # PING
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except (BrokenPipeError, ConnectionResetError):
            chunk = b""
        if not chunk:
            got["closed"] = True
            break
        frames, buf = read_frames(buf + chunk)
        for kind, flags, _, payload in frames:
            if kind == 4 and not flags & 1:
                got["server_settings"] = True
            elif kind == 7:
                got["goaway_error"] = int.from_bytes(payload[4:8], "big")
    sock.close()
    print(json.dumps(got, sort_keys=True))


def settings_acked(port, seconds):
    import h2.events
    sock, conn = h2_conn(port)
    sock.settimeout(0.25)
    got, end = {}, time.monotonic() + seconds
    while time.monotonic() < end:
        conn.ping(b"keepbusy")
        sock.sendall(conn.data_to_send())
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            got["closed"] = "yes"
            break
        for ev in conn.receive_data(chunk):
            if isinstance(ev, h2.events.ConnectionTerminated):
                got["goaway"] = "yes"
        sock.sendall(conn.data_to_send())  # the ACK of the server's SETTINGS, among others
    if "goaway" not in got and "closed" not in got:
        sock.settimeout(20)
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":authority", "x"),
                                (":path", "/no.Such/Method"), ("content-type", "application/grpc"),
                                ("te", "trailers")], end_stream=True)
        sock.sendall(conn.data_to_send())
        answer, _ = read_answer(sock, conn)
        got.update(answer)
    sock.close()
    print(json.dumps({k: got.get(k, "") for k in ("grpc-status", "goaway", "closed")},
                     sort_keys=True))


def cmd_stall(port, path, args):
    import h2.events
    import h2.settings
    data = open(path, "rb").read()
    sock, conn = h2_conn(port)
    conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":authority", "x"),
                            (":path", SERVICE % "v1development"),
                            ("content-type", "application/grpc"), ("te", "trailers")])
    conn.send_data(sid, b"\0" + len(data).to_bytes(4, "big") + data, end_stream=True)
    sock.sendall(conn.data_to_send())
    sock.settimeout(0.25)
    got, end = {"reset": None, "status": ""}, time.monotonic() + 20
    while time.monotonic() < end and got["reset"] is None:
        conn.ping(b"keepbusy")
        sock.sendall(conn.data_to_send())
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            break
        for ev in conn.receive_data(chunk):
            if isinstance(ev, h2.events.ResponseReceived):
                got["status"] = dict(ev.headers).get(b":status", b"").decode()
            elif isinstance(ev, h2.events.StreamReset):
                got["reset"] = int(ev.error_code)
        sock.sendall(conn.data_to_send())
    sock.close()
    print(json.dumps(got, sort_keys=True))


def cmd_slow(port, path, args):
    """A client that trickles: --frame sends a HEADERS frame one byte every 0.5 s; --body sends
    whole HEADERS, then its message one byte every 0.3 s in DATA frames. Prints how the server
    ended it: the RST_STREAM error code, whether it closed the connection, and after how
    many seconds (gives up after 30 s)."""
    import h2.events
    data = open(path, "rb").read()
    msg = b"\0" + len(data).to_bytes(4, "big") + data
    sock, conn = h2_conn(port)
    sid = conn.get_next_available_stream_id()
    headers = [(":method", "POST"), (":scheme", "http"), (":authority", "x"),
               (":path", SERVICE % "v1development"), ("content-type", "application/grpc"),
               ("te", "trailers")]
    trickle = b""
    sock.settimeout(0.3)
    try:  # the server's SETTINGS, acknowledged before anything is trickled
        conn.receive_data(sock.recv(65536))
        sock.sendall(conn.data_to_send())
    except socket.timeout:
        pass
    if "--frame" in args:
        conn.send_headers(sid, headers)
        trickle = conn.data_to_send()  # held back: sent a byte at a time below
    else:
        conn.send_headers(sid, headers)
        sock.sendall(conn.data_to_send())
    sock.settimeout(0.1)
    got, t0, end = {"reset": None, "closed": False}, time.monotonic(), time.monotonic() + 30
    sent, step = 0, 0.5 if "--frame" in args else 0.3
    next_send = t0
    while time.monotonic() < end and got["reset"] is None and not got["closed"]:
        now = time.monotonic()
        try:
            if now >= next_send:
                next_send = now + step
                if "--frame" in args and sent < len(trickle):
                    sock.sendall(trickle[sent:sent + 1])
                    sent += 1
                elif "--body" in args and sent < len(msg) - 1:
                    conn.send_data(sid, msg[sent:sent + 1])
                    sent += 1
                    sock.sendall(conn.data_to_send())
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            got["closed"] = True
            break
        if not chunk:
            got["closed"] = True
            break
        if "--frame" in args:
            continue  # the server's SETTINGS and the like; our h2 state is not fed
        for ev in conn.receive_data(chunk):
            if isinstance(ev, h2.events.StreamReset):
                got["reset"] = int(ev.error_code)
        try:
            sock.sendall(conn.data_to_send())
        except OSError:
            got["closed"] = True
    got["seconds"] = round(time.monotonic() - t0, 1)
    sock.close()
    print(json.dumps(got, sort_keys=True))


def cmd_hold(port, n, args):
    import h2.events
    n, size, secs = int(n), int(float(args[0]) * 1024 * 1024), float(args[1])
    split = "--split" in args
    trickle = float(opt(args, "--trickle", "0"))
    # with --trickle, the last bytes but one are kept to be sent one at a time until SIGUSR1
    stop_at = size + 4 - (256 if trickle else 0)
    stopped = [not trickle]
    signal.signal(signal.SIGUSR1, lambda *_: stopped.__setitem__(0, True))
    sock, conn = h2_conn(port)
    calls = {}
    first = conn.get_next_available_stream_id()
    for _ in range(n):
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":authority", "x"),
                                (":path", SERVICE % "v1development"),
                                ("content-type", "application/grpc"), ("te", "trailers")])
        calls[sid] = {"sent": 0, "status": None, "message": None, "pushback": None,
                      "reset": None, "ended": False}
    sock.sendall(conn.data_to_send())
    got = {"goaway": False}
    zeros = bytes(1 << 16)

    def pump(timeout):
        if not select.select([sock], [], [], timeout)[0]:
            return True
        try:
            chunk = sock.recv(1 << 20)
        except OSError:
            chunk = b""
        if not chunk:
            return False
        for ev in conn.receive_data(chunk):
            call = calls.get(getattr(ev, "stream_id", None))
            if isinstance(ev, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                fields = {k.decode(): v.decode() for k, v in ev.headers}
                if "grpc-status" in fields:
                    call["status"] = fields["grpc-status"]
                    call["message"] = fields.get("grpc-message", "")
                    call["pushback"] = fields.get("grpc-retry-pushback-ms")
            elif isinstance(ev, h2.events.StreamEnded):
                call["ended"] = True
            elif isinstance(ev, h2.events.StreamReset):
                call["reset"], call["ended"] = int(ev.error_code), True
            elif isinstance(ev, h2.events.ConnectionTerminated):
                got["goaway"] = True
        sock.sendall(conn.data_to_send())
        return True

    # the message: its prefix, then zeros (what they mean does not matter: never complete)
    alive, end = True, time.monotonic() + secs
    while alive and time.monotonic() < end:
        moved = False
        for sid, call in calls.items():
            left = stop_at - call["sent"]  # of the 5-byte prefix and size bytes
            if call["ended"] or call["status"] is not None or left <= 0:
                continue
            if split and sid != first and calls[first]["sent"] < 5 and \
                    calls[first]["status"] is None:
                continue  # the first call's prefix goes first, in its two frames
            w = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size, left)
            if w <= 0:
                continue
            if call["sent"] == 0 and split and sid == first:
                chunk = b"\0" + size.to_bytes(4, "big")[:1]  # the prefix in two frames
            elif call["sent"] < 5:
                chunk = (b"\0" + size.to_bytes(4, "big") + zeros)[call["sent"]:call["sent"] + w]
            else:
                chunk = zeros[:w]
            conn.send_data(sid, chunk)
            call["sent"] += len(chunk)
            moved = True
        sock.sendall(conn.data_to_send())
        alive = pump(0 if moved else 0.05)
        if not moved and all(c["ended"] or c["status"] is not None or c["sent"] >= stop_at
                             for c in calls.values()):
            break
    print(json.dumps({"sent_mib": sum(c["sent"] for c in calls.values()) >> 20}), flush=True)
    next_byte = time.monotonic() + trickle
    while alive and time.monotonic() < end and not all(c["ended"] for c in calls.values()):
        if not stopped[0] and time.monotonic() >= next_byte:
            next_byte += trickle
            for sid, call in calls.items():
                if not call["ended"] and call["status"] is None and call["sent"] < size + 4:
                    conn.send_data(sid, b"\0")
                    call["sent"] += 1
        conn.ping(b"holding!")
        sock.sendall(conn.data_to_send())
        alive = pump(min(0.5, trickle) if trickle else 0.5)
    sock.close()
    print(json.dumps({"calls": [{k: c[k] for k in ("status", "message", "pushback", "reset")}
                                for c in calls.values()], "goaway": got["goaway"]},
                     sort_keys=True), flush=True)


def main():
    cmd, port = sys.argv[1], sys.argv[2]
    if cmd == "garbage":
        return cmd_garbage(port, sys.argv[3:])
    if cmd == "settings":
        return cmd_settings(port, sys.argv[3:])
    fn = {"export": cmd_export, "many": cmd_many, "raw": cmd_raw, "shutdown": cmd_shutdown,
          "connect": cmd_connect, "stall": cmd_stall, "slow": cmd_slow, "hold": cmd_hold}[cmd]
    return fn(port, sys.argv[3], sys.argv[4:])


if __name__ == "__main__":
    main()
