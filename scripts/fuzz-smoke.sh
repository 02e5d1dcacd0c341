#!/usr/bin/env bash
# Run every libFuzzer target in BUILD_DIR/tests/fuzz for SECONDS on its seed corpus.
# usage: scripts/fuzz-smoke.sh BUILD_DIR [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
secs=${2:-20}
n=0 failed=0
for bin in "$dir"/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  # corpus and dictionary: tests/fuzz/corpus/<name without fuzz_>, else the longest
  # prefix of it cut at an underscore (fuzz_spaa_read -> corpus/spaa_read, then corpus/spaa)
  key=${name#fuzz_} corpus="" dict=""
  while :; do
    [ -z "$corpus" ] && [ -d "$root/tests/fuzz/corpus/$key" ] && corpus="$root/tests/fuzz/corpus/$key"
    [ -z "$dict" ] && [ -f "$root/tests/fuzz/$key.dict" ] && dict="$root/tests/fuzz/$key.dict"
    case $key in *_*) key=${key%_*} ;; *) break ;; esac
  done
  work=$(mktemp -d)
  args=(-max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=0
    -artifact_prefix="$dir/fuzz-artifacts/$name-")
  mkdir -p "$dir/fuzz-artifacts"
  [ -n "$dict" ] && args+=(-dict="$dict")
  [ -n "$corpus" ] && cp -r "$corpus/." "$work/"
  echo "fuzz: $name for ${secs}s"
  if ! "$bin" "${args[@]}" "$work" >"$work.log" 2>&1; then
    echo "fuzz: $name FAILED (reproducer in $dir/fuzz-artifacts/)"; tail -40 "$work.log"
    failed=$((failed + 1))
  fi
  rm -rf "$work" "$work.log"
  n=$((n + 1))
done
echo "fuzz: $n targets, $failed failed"
[ "$failed" -eq 0 ]
