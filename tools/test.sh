#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test.
# Exits non-zero on any failure. Extra arguments go to ctest (e.g. -R informer).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/setup.sh" --preset dev --with-js
cd "$root"

# The real API server (tests/k8s/control_plane.hpp): the integration tests run a second
# time on kube-apiserver with etcd (ctest label integration-real) when one is at hand.
# KUBEBUILDER_ASSETS or AOP_KUBE_APISERVER set by the caller win; otherwise
# ../shared/envtest/kube-apiserver beside the repository is used, with etcd from Debian.
# Without any, those runs report Skipped with the reason (see README, "Testing against a
# real API server").
if [ -z "${KUBEBUILDER_ASSETS:-}" ] && [ -z "${AOP_KUBE_APISERVER:-}" ] &&
   [ -x "$root/../shared/envtest/kube-apiserver" ]; then
  export AOP_KUBE_APISERVER
  AOP_KUBE_APISERVER=$(cd "$root/../shared/envtest" && pwd)/kube-apiserver
fi
if [ -n "${AOP_KUBE_APISERVER:-}" ] && [ -z "${KUBEBUILDER_ASSETS:-}" ] &&
   ! command -v etcd >/dev/null 2>&1 && [ ! -x /usr/bin/etcd ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "test: installing etcd-server (etcd for the real-API-server tests)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
fi

ctest --test-dir build --output-on-failure --no-tests=error -j "$(nproc)" "$@"
