#!/usr/bin/env bash
# The serving core's load tests at full length (CI runs them short): 256 clients posting
# for 20 s (SPAA_LOAD_SECONDS), 2,000 idle connections, slowloris, over-limit answers, then
# the memory test (a 48 MiB pprof, three at once under a budget, RSS over 2,000 uploads),
# then the benchmark at 64 and 1,024 connections and the peak RSS of one large pprof and one
# large OTLP upload (bench/upload_memory.sh). Usage: tests/load.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
export SPAA_BIN="$build/spaa-relay" SPAA_BUILD="$build" SPAA_LOAD_SECONDS=${SPAA_LOAD_SECONDS:-20}
ulimit -n "$(ulimit -Hn)"
bash "$root/tests/e2e/serving_load.sh"
bash "$root/tests/e2e/memory_budget.sh"
"$build/bench/bench_serve_load" 5
bash "$root/bench/upload_memory.sh" "$build"
