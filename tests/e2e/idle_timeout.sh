#!/usr/bin/env bash
# Idle connections are closed after --idle-timeout seconds: a client that connects and says
# nothing, or stops in the middle of its headers, is dropped; the server keeps serving.
source "$(dirname "$0")/lib.bash"

# read from fd 3 for up to $1 s: prints "eof" when the server closed, "open" on time-out
probe() {
  local rc=0 line
  IFS= read -r -t "$1" -u 3 line || rc=$?
  if ((rc == 0)); then echo "data"; elif ((rc > 128)); then echo "open"; else echo "eof"; fi
}

start_server --idle-timeout 1
exec 3<>"/dev/tcp/127.0.0.1/$SERVER_PORT"
sleep 3
assert_eq eof "$(probe 2)" "a silent connection is closed after the idle timeout"
exec 3>&-

exec 3<>"/dev/tcp/127.0.0.1/$SERVER_PORT"
printf 'POST /api/v1/spaa HTTP/1.1\r\nHost: x\r\n' >&3
sleep 3
assert_eq eof "$(probe 2)" "a connection stalled inside its headers is closed"
exec 3>&-

http GET /healthz
assert_eq 200 "$HTTP_CODE" "still serving after dropping idle connections"
stop_server

# the control: with the default (30 s) the same silent connection is still open after 3 s
start_server
exec 3<>"/dev/tcp/127.0.0.1/$SERVER_PORT"
sleep 3
assert_eq open "$(probe 1)" "a silent connection stays open within the default timeout"
exec 3>&-
stop_server
echo "idle_timeout: ok"
