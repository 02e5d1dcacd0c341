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

echo "== plain build and tests"
"$root/scripts/build.sh" "$root/build" -DSPAA_WERROR=ON
stages=$((stages + 1))
(cd "$root/build" && ctest --output-on-failure -j"$jobs") || fail=$((fail + 1))

if [ "${SPAA_TEST_QUICK:-0}" != "1" ]; then
  echo "== ASan + UBSan build and tests"
  BUILD_TYPE=Debug "$root/scripts/build.sh" "$root/build-asan" -DSPAA_ASAN=ON -DSPAA_UBSAN=ON \
    -DSPAA_WERROR=ON
  (cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$jobs" \
    -LE slow) || fail=$((fail + 1))
  stages=$((stages + 1))

  echo "== fuzz smoke run"
  CC=clang BUILD_TYPE=RelWithDebInfo "$root/scripts/build.sh" "$root/build-fuzz" \
    -DCMAKE_C_COMPILER=clang -DSPAA_FUZZ=ON -DSPAA_TESTS=ON >/dev/null
  "$root/scripts/fuzz-smoke.sh" "$root/build-fuzz" "${SPAA_FUZZ_SECONDS:-20}" || fail=$((fail + 1))
  stages=$((stages + 1))
fi

# one closing line: stages (plain suite, sanitizer suite, fuzz smoke) passed and failed
echo "stages: $((stages - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
