#!/usr/bin/env bash
# Install what is missing, build, and run the whole test suite:
#   1. a plain build (warnings as errors) and every CTest test (unit, end to end, conformance);
#   2. the same suite under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. every libFuzzer target built with clang, run briefly on its seed corpus.
# SPAA_TEST_QUICK=1 runs step 1 only. Fixtures are read from ../shared when it exists.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
jobs=$(nproc)
fail=0
stages=0
failed=()

# suite NAME DIR [ctest args...]: run a build's CTest suite; a failed test's name is kept, and
# its output's last lines are printed again at the very end, where a log cut to its tail
# still shows them
suite() {
  local name=$1 dir=$2 rc=0
  shift 2
  rm -f "$dir/Testing/Temporary/LastTestsFailed.log"
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --output-junit "$dir/ctest-junit.xml" "$@") ||
    rc=$?
  if [ "$rc" -ne 0 ]; then
    failed+=("$name")
    python3 - "$name" "$dir/ctest-junit.xml" >"$dir/ctest-failed.txt" 2>&1 <<'PY' || true
import sys, xml.etree.ElementTree as ET
name, path = sys.argv[1], sys.argv[2]
for case in ET.parse(path).getroot().iter("testcase"):
    if case.get("status") in ("run", "notrun", "disabled", None) and case.find("failure") is None:
        continue
    out = (case.findtext("system-out") or "").rstrip().splitlines()
    print(f"-- {name}: {case.get('name')} ({case.get('status')}, {case.get('time')} s); its last lines:")
    for line in out[-15:]:
        print("   " + line)
PY
  fi
  return "$rc"
}

echo "== plain build and tests"
"$root/scripts/build.sh" "$root/build" -DSPAA_WERROR=ON
stages=$((stages + 1))
suite plain "$root/build" || fail=$((fail + 1))

if [ "${SPAA_TEST_QUICK:-0}" != "1" ]; then
  echo "== ASan + UBSan build and tests"
  BUILD_TYPE=Debug "$root/scripts/build.sh" "$root/build-asan" -DSPAA_ASAN=ON -DSPAA_UBSAN=ON \
    -DSPAA_WERROR=ON
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    suite sanitizers "$root/build-asan" -LE slow || fail=$((fail + 1))
  stages=$((stages + 1))

  echo "== fuzz smoke run"
  CC=clang BUILD_TYPE=RelWithDebInfo "$root/scripts/build.sh" "$root/build-fuzz" \
    -DCMAKE_C_COMPILER=clang -DSPAA_FUZZ=ON -DSPAA_TESTS=ON >/dev/null
  "$root/scripts/fuzz-smoke.sh" "$root/build-fuzz" "${SPAA_FUZZ_SECONDS:-20}" || fail=$((fail + 1))
  stages=$((stages + 1))
fi

for name in "${failed[@]}"; do
  dir=$root/build
  [ "$name" = sanitizers ] && dir=$root/build-asan
  cat "$dir/ctest-failed.txt" 2>/dev/null || true
  echo "$name: failed tests: $(cut -d: -f2- "$dir/Testing/Temporary/LastTestsFailed.log" 2>/dev/null | xargs)"
done
# one closing line: stages (plain suite, sanitizer suite, fuzz smoke) passed and failed
echo "stages: $((stages - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
