#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test.
# Exits non-zero on any failure. Extra arguments go to ctest (e.g. -R informer).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/setup.sh" --preset dev --with-js
cd "$root"
ctest --test-dir build --output-on-failure --no-tests=error -j "$(nproc)" "$@"
