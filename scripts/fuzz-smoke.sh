#!/usr/bin/env bash
# Run every libFuzzer target in BUILD_DIR/tests/fuzz for SECONDS on its seed corpus, as many
# at once as there are processors (SPAA_FUZZ_JOBS sets another number); each target's
# outcome is printed in the targets' order once it has run.
# usage: scripts/fuzz-smoke.sh BUILD_DIR [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
secs=${2:-20}
par=${SPAA_FUZZ_JOBS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$dir/fuzz-artifacts"

# one NAME BIN: run one target, its output into $out/NAME.log, its exit status into NAME.rc
one() {
  local name=$1 bin=$2 key corpus="" dict="" work rc=0
  # corpus and dictionary: tests/fuzz/corpus/<name without fuzz_>, else the longest
  # prefix of it cut at an underscore (fuzz_spaa_read -> corpus/spaa_read, then corpus/spaa)
  key=${name#fuzz_}
  while :; do
    [ -z "$corpus" ] && [ -d "$root/tests/fuzz/corpus/$key" ] && corpus="$root/tests/fuzz/corpus/$key"
    [ -z "$dict" ] && [ -f "$root/tests/fuzz/$key.dict" ] && dict="$root/tests/fuzz/$key.dict"
    case $key in *_*) key=${key%_*} ;; *) break ;; esac
  done
  work=$(mktemp -d)
  local args=(-max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=0
    -artifact_prefix="$dir/fuzz-artifacts/$name-")
  [ -n "$dict" ] && args+=(-dict="$dict")
  [ -n "$corpus" ] && cp -r "$corpus/." "$work/"
  "$bin" "${args[@]}" "$work" >"$out/$name.log" 2>&1 || rc=$?
  rm -rf "$work"
  echo "$rc" >"$out/$name.rc"
}

names=()
for bin in "$dir"/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  names+=("$name")
  while [ "$(jobs -rp | wc -l)" -ge "$par" ]; do wait -n || true; done
  one "$name" "$bin" &
done
wait

n=0 failed=0
for name in "${names[@]}"; do
  echo "fuzz: $name for ${secs}s"
  if [ "$(cat "$out/$name.rc" 2>/dev/null || echo 1)" != 0 ]; then
    echo "fuzz: $name FAILED (reproducer in $dir/fuzz-artifacts/)"; tail -40 "$out/$name.log"
    failed=$((failed + 1))
  fi
  n=$((n + 1))
done
echo "fuzz: $n targets, $failed failed"
[ "$failed" -eq 0 ]
