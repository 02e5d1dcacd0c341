#!/usr/bin/env bash
# Install the Debian packages spaa-relay needs to build, run and test. Idempotent: installs
# only what is missing, and runs apt-get update only when something is.
# usage: scripts/install-deps.sh [--build-only | --runtime-only]
#   (no flag)       what building and the whole test suite need
#   --build-only    what building needs (scripts/run.sh)
#   --runtime-only  the shared libraries the binary runs with
set -euo pipefail

build_pkgs=(build-essential cmake pkg-config protobuf-c-compiler
  libmicrohttpd-dev libjansson-dev libprotobuf-c-dev libzstd-dev libsqlite3-dev
  zlib1g-dev libxxhash-dev libpq-dev libnghttp2-dev libbrotli-dev)
test_pkgs=(libcmocka-dev curl zstd gzip clang libclang-rt-14-dev procps jq golang-go sqlite3 postgresql
  python3-grpcio python3-h2 python3-prometheus-client python3-yaml
  python3-snappy python3-lz4 python3-crcmod
  chromium fonts-dejavu-core)
runtime_pkgs=(libmicrohttpd12 libjansson4 libprotobuf-c1 libzstd1 libsqlite3-0 zlib1g
  libxxhash0 libpq5 libnghttp2-14 libbrotli1)

want=("${build_pkgs[@]}")
if [ "${1:-}" = "--build-only" ]; then
  :
elif [ "${1:-}" != "--runtime-only" ]; then
  want+=("${test_pkgs[@]}")
  # the real-SDK test runs @sentry/node, the web page's test playwright-core (driving the
  # chromium above): Debian's node when the machine has none of its own
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || want+=(nodejs npm)
else
  want=("${runtime_pkgs[@]}")
fi

missing=()
for p in "${want[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (missing: ${missing[*]})" >&2; exit 1; }
  SUDO=sudo
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
