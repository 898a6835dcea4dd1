#!/usr/bin/env bash
# Fidelity: kubectl (the real Go client) against kube-sim over TLS with a bearer token.
# apply -f of a CRD and custom resources, get -l, get -w seeing live changes, patch
# --type merge, delete, server-side validation errors, apply of a built-in kind with a
# strategic merge patch.
#
#   kubectl_test.sh <path to kube-sim> <fixtures dir>
# Exits 77 (ctest SKIP) when kubectl is not installed.
set -euo pipefail

sim=$1
fixtures=$2

if ! command -v kubectl >/dev/null 2>&1; then
  echo "SKIPPED: kubectl is not installed on this machine (install kubectl 1.27+ to run the kubectl fidelity test)"
  exit 77
fi

work=$(mktemp -d)
sim_pid=""
watch_pid=""
cleanup() {
  [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null || true
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Waits (up to 30 s) until a command succeeds.
wait_for() {
  local what=$1
  shift
  for _ in $(seq 1 300); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  fail "timed out waiting for $what"
}

"$sim" --tls --token fidelity-token --kubeconfig-out "$work/kubeconfig" >"$work/sim.out" 2>"$work/sim.err" &
sim_pid=$!
wait_for "kube-sim to start" grep -q "kube-sim listening on https://" "$work/sim.out"

export KUBECONFIG=$work/kubeconfig
k() { kubectl --cache-dir="$work/cache" --request-timeout=30s "$@"; }

echo "--- kubectl version against kube-sim"
k version

echo "--- apply -f a CRD, then custom resources"
out=$(k apply -f "$fixtures/widgets-crd.yaml")
[[ $out == *"customresourcedefinition.apiextensions.k8s.io/widgets.fidelity.example.com created"* ]] || fail "CRD apply: $out"
k wait --for condition=established --timeout=20s crd/widgets.fidelity.example.com
out=$(k apply -f "$fixtures/widgets.yaml")
[[ $out == *"widget.fidelity.example.com/front created"* && $out == *"widget.fidelity.example.com/back created"* ]] ||
  fail "custom resources apply: $out"
out=$(k apply -f "$fixtures/widgets.yaml")
[[ $out == *"front unchanged"* && $out == *"back unchanged"* ]] || fail "re-apply must be unchanged: $out"

echo "--- get, get -l, printer columns"
out=$(k get widgets)
echo "$out"
[[ $(echo "$out" | head -1) =~ ^NAME[[:space:]]+SIZE[[:space:]]+COLOR ]] || fail "printer columns: $out"
out=$(k get wdg -l tier=front -o name)
[ "$out" = "widget.fidelity.example.com/front" ] || fail "get -l tier=front: '$out'"
out=$(k get widgets -l 'tier in (front,back),tier!=front' -o jsonpath='{.items[*].metadata.name}')
[ "$out" = "back" ] || fail "set-based selector: '$out'"

echo "--- get -w sees live changes"
k get widgets -w --output-watch-events >"$work/watch.out" 2>&1 &
watch_pid=$!
wait_for "the watch to list the current widgets" grep -q "ADDED.*back" "$work/watch.out"
k patch widget back --type merge -p '{"spec":{"size":6}}'
k apply -f - <<'EOF'
apiVersion: fidelity.example.com/v1
kind: Widget
metadata:
  name: extra
spec:
  size: 1
EOF
k delete widget front
wait_for "MODIFIED back in the watch" grep -Eq "MODIFIED +back +6" "$work/watch.out"
wait_for "ADDED extra in the watch" grep -Eq "ADDED +extra" "$work/watch.out"
wait_for "DELETED front in the watch" grep -Eq "DELETED +front" "$work/watch.out"
kill "$watch_pid"
watch_pid=""
cat "$work/watch.out"

echo "--- patch --type merge"
k patch widget back --type merge -p '{"spec":{"color":"blue"}}'
out=$(k get widget back -o jsonpath='{.spec.size} {.spec.color} {.metadata.generation}')
[ "$out" = "6 blue 3" ] || fail "after patches: '$out'"
set +e
out=$(k patch widget back -p '{"spec":{"size":7}}' 2>&1)
rc=$?
set -e
[ $rc -ne 0 ] && [[ $out == *"strategic-merge-patch"* ]] || fail "strategic merge on a custom resource must be refused: $out"

echo "--- validation errors come back as Invalid with field paths"
set +e
out=$(k apply -f "$fixtures/widget-invalid.yaml" 2>&1)
rc=$?
set -e
echo "$out"
[ $rc -ne 0 ] || fail "an invalid widget was accepted"
[[ $out == *'The Widget "broken" is invalid'* ]] || fail "invalid message: $out"
[[ $out == *'spec.color: Unsupported value: "purple"'* ]] || fail "enum error: $out"
[[ $out == *'spec.size: Invalid value: -1'* ]] || fail "minimum error: $out"

echo "--- delete"
out=$(k delete widget extra)
[[ $out == *'widget.fidelity.example.com "extra" deleted'* ]] || fail "delete: $out"
set +e
out=$(k get widget extra 2>&1)
rc=$?
set -e
[ $rc -ne 0 ] && [[ $out == *'widgets.fidelity.example.com "extra" not found'* ]] || fail "get after delete: $out"

echo "--- built-in kind: apply, then apply with a container removed (strategic merge)"
k apply -f "$fixtures/deployment.yaml"
sed -e 's/value: one/value: two/' -e '/- name: sidecar/,$d' "$fixtures/deployment.yaml" >"$work/deployment2.yaml"
out=$(k apply -f "$work/deployment2.yaml")
[[ $out == *"deployment.apps/web configured"* ]] || fail "deployment re-apply: $out"
out=$(k get deployment web -o jsonpath='{.spec.template.spec.containers[*].name} {.spec.template.spec.containers[0].env[0].value} {.metadata.generation}')
[ "$out" = "web two 2" ] || fail "after strategic merge apply: '$out'"
k scale deployment web --replicas=4
out=$(k get deployment web -o jsonpath='{.spec.replicas}')
[ "$out" = "4" ] || fail "after kubectl scale: '$out'"
k get deployments
k delete -f "$work/deployment2.yaml"

echo "--- typed create commands (protobuf request bodies)"
k create namespace demo
k -n demo create configmap cfg --from-literal=a=b
k -n demo create secret generic sec --from-literal=user=admin
k -n demo create deployment web --image=nginx:1.25 --replicas=2
out=$(k -n demo get configmap cfg -o jsonpath='{.data.a}')
[ "$out" = "b" ] || fail "configmap from kubectl create: '$out'"
out=$(k -n demo get secret sec -o jsonpath='{.data.user}')
[ "$out" = "YWRtaW4=" ] || fail "secret from kubectl create: '$out'"
out=$(k -n demo get deployment web -o jsonpath='{.spec.replicas} {.spec.template.spec.containers[0].image}')
[ "$out" = "2 nginx:1.25" ] || fail "deployment from kubectl create: '$out'"

echo "--- the writes were recorded with kubectl's user agent"
out=$(k get --raw /admin/stats)
[[ $out == *'"by_user_agent":{"kubectl/'* ]] || fail "stats: $out"

echo "PASS: kubectl fidelity"
