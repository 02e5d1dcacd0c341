#!/usr/bin/env bash
# Build each layer probe (see CMakeLists.txt here): an "ok" probe must compile, a "no" probe
# must fail because a header is not found from that layer.
# usage: layers.sh BUILD_DIR TARGET:HEADER:ok|TARGET:HEADER:MISSING_HEADER...
set -uo pipefail
build=$1
shift
pass=0 fail=0
for c in "$@"; do
  IFS=: read -r target hdr want <<<"$c"
  missing=$want
  out=$(cmake --build "$build" --target "$target" 2>&1)
  rc=$?
  if [ "$want" = ok ]; then
    if [ $rc -eq 0 ]; then pass=$((pass + 1)); else
      echo "FAIL $target: \"$hdr\" must compile from its own layer"; echo "$out" | tail -5
      fail=$((fail + 1)); fi
  else
    if [ $rc -ne 0 ] && grep -qF "$missing: No such file" <<<"$out"; then pass=$((pass + 1)); else
      echo "FAIL $target: including \"$hdr\" must fail with '$missing: No such file' (rc=$rc)"
      echo "$out" | tail -5; fail=$((fail + 1)); fi
  fi
done
echo "layers: $pass passed, $fail failed"
[ $fail -eq 0 ]
