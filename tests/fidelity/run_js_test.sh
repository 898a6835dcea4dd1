#!/usr/bin/env bash
# Runs the JavaScript client fidelity test; a missing Node.js or client package is a
# failure that says how to install it.
#   run_js_test.sh <path to kube-sim> <tests/js dir>
set -euo pipefail
sim=$1
jsdir=$2
if ! command -v node >/dev/null 2>&1; then
  echo "FAIL: Node.js is not installed; install it with: sudo apt-get install nodejs npm (tools/setup.sh does this)" >&2
  exit 1
fi
if [ ! -f "$jsdir/node_modules/@kubernetes/client-node/package.json" ]; then
  echo "FAIL: @kubernetes/client-node is not installed in $jsdir/node_modules;" \
    "install it with: tools/setup.sh --with-js (or: cd tests/js && npm ci)" >&2
  exit 1
fi
exec node "$(dirname "$0")/js_informer_test.mjs" "$sim" "$jsdir"
