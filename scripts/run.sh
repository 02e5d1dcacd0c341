#!/usr/bin/env bash
# Install what is missing, build, and start the server on its embedded default: listening
# on 127.0.0.1:8080 (SPAA_RELAY_LISTEN to change), SQLite file under ./data. Extra arguments
# go to `spaa-relay serve`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" --build-only
"$root/scripts/build.sh" "$root/build"
cd "$root"
exec "$root/build/spaa-relay" serve "$@"
