#!/usr/bin/python3
"""Applies the rendered deploy/ manifests to a fresh kube-sim with kubectl.

    check_kube_sim_apply.py SOURCE_DIR KUBE_SIM_BINARY

Renders `kubectl kustomize` of deploy/ and of each overlay, starts kube-sim on a free
loopback port, applies them in turn (the CRDs, then everything else), reads the objects
back, and creates one minimal object of each custom kind so the CRDs are shown to be
served. Exit 77 (ctest SKIP) only when
kubectl is absent.
"""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

SKIP = 77
# Applied one after the other to the same kube-sim: the base, then each overlay over it.
OVERLAYS = ("deploy", "deploy/overlays/prometheus-operator-crds", "deploy/overlays/ha",
            "deploy/overlays/telegraf")
START_DEADLINE_S = 30
COMMAND_TIMEOUT_S = 60

# One small valid object per custom kind.
SAMPLES = """
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: sample, namespace: default}
spec:
  metrics:
    shards: 2
    instanceSelector: {matchLabels: {agent: sample}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: sample, namespace: default, labels: {agent: sample}}
spec:
  remoteWrite: [{url: "http://mimir.example/api/v1/push"}]
  serviceMonitorSelector: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: sample, namespace: default}
spec:
  clients: [{url: "http://loki.example/loki/api/v1/push"}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: PodLogs
metadata: {name: sample, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  pipelineStages: [{cri: {}}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: sample, namespace: default}
spec:
  name: node_exporter
  type: {allNodes: true}
  config: {autoscrape: {enable: true}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: sample, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  endpoints: [{port: http, interval: 30s, relabelings: [{sourceLabels: [__meta_x], targetLabel: x}]}]
---
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata: {name: sample, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  podMetricsEndpoints: [{port: http}]
---
apiVersion: monitoring.coreos.com/v1
kind: Probe
metadata: {name: sample, namespace: default}
spec:
  prober: {url: "blackbox:9115"}
  targets: {staticConfig: {static: ["https://example.com"]}}
"""


def fail(msg):
    print("FAIL: " + msg)
    return 1


def start_kube_sim(binary, kubeconfig, log):
    proc = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--kubeconfig-out", kubeconfig],
                            stdout=subprocess.PIPE, stderr=log)
    deadline = time.monotonic() + START_DEADLINE_S
    buf = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break  # exited
        buf += chunk
        for line in buf.decode(errors="replace").splitlines():
            if line.startswith("kube-sim listening on "):
                return proc, line.split("kube-sim listening on ", 1)[1].strip()
    proc.kill()
    proc.wait()
    return None, buf.decode(errors="replace")


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def kubectl(kubectl_bin, kubeconfig, *args):
    return subprocess.run([kubectl_bin, "--kubeconfig", kubeconfig] + list(args),
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    src, binary = os.path.abspath(argv[0]), argv[1]
    kubectl_bin = shutil.which("kubectl")
    if not kubectl_bin:
        print("SKIP: kubectl not found; install kubectl to apply deploy/ to kube-sim")
        return SKIP
    if not os.access(binary, os.X_OK):
        return fail("%s is not built; build target kube-sim" % binary)

    renders = []
    for overlay in OVERLAYS:
        rendered = subprocess.run([kubectl_bin, "kustomize", os.path.join(src, overlay)],
                                  capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
        if rendered.returncode != 0:
            return fail("kubectl kustomize %s: %s" % (overlay, rendered.stderr.strip()))
        docs = [d for d in yaml.safe_load_all(rendered.stdout) if d]
        crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
        rest = [d for d in docs if d["kind"] != "CustomResourceDefinition"]
        # Namespaces before the objects that live in them.
        rest.sort(key=lambda d: d["kind"] != "Namespace")
        renders.append((overlay, crds, rest))

    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        steps = []
        for i, (overlay, crds, rest) in enumerate(renders):
            for name, group in (("crds", crds), ("rest", rest)):
                path = os.path.join(tmp, "%d-%s.yaml" % (i, name))
                with open(path, "w", encoding="utf-8") as f:
                    f.write(yaml.safe_dump_all(group))
                steps.append((overlay, path, group))
        samples = os.path.join(tmp, "samples.yaml")
        with open(samples, "w", encoding="utf-8") as f:
            f.write(SAMPLES)
        log_path = os.path.join(tmp, "kube-sim.log")
        with open(log_path, "wb") as log:
            proc, info = start_kube_sim(binary, kubeconfig, log)
            if proc is None:
                with open(log_path, encoding="utf-8", errors="replace") as f:
                    return fail("kube-sim did not print 'kube-sim listening on <URL>' within %ds; "
                                "stdout: %r; stderr: %s" % (START_DEADLINE_S, info, f.read()[-2000:]))
            try:
                print("kube-sim listening on " + info)
                all_crds = {d["metadata"]["name"]: d for _, crds, _ in renders for d in crds}
                return run_checks(kubectl_bin, kubeconfig, steps, samples, list(all_crds.values()))
            finally:
                stop(proc)


def run_checks(kubectl_bin, kubeconfig, steps, samples, crds):
    problems = 0
    for overlay, path, group in steps:
        r = kubectl(kubectl_bin, kubeconfig, "apply", "-f", path)
        print("%s:\n%s" % (overlay, r.stdout.strip()))
        if r.returncode != 0:
            problems += fail("kubectl apply of %s: %s" % (overlay, r.stderr.strip()))
            continue
        # Everything applied is there, as applied.
        r = kubectl(kubectl_bin, kubeconfig, "get", "-f", path, "-o", "json")
        if r.returncode != 0:
            problems += fail("kubectl get -f (%s): %s" % (overlay, r.stderr.strip()))
            continue
        got = json.loads(r.stdout)
        items = got.get("items", [got]) if got.get("kind", "").endswith("List") else [got]
        want = sorted((d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]) for d in group)
        have = sorted((i.get("kind"), i.get("metadata", {}).get("namespace", ""),
                       i.get("metadata", {}).get("name")) for i in items)
        if have != want:
            problems += fail("%s: read back %s, applied %s" % (overlay, have, want))
        for item in items:
            if item.get("kind") != "Deployment":
                continue
            applied = [d for d in group if d["kind"] == "Deployment"][0]
            c = item["spec"]["template"]["spec"]["containers"][0]
            sc = c.get("securityContext", {})
            if (item["spec"].get("replicas") != applied["spec"]["replicas"]
                    or sc.get("readOnlyRootFilesystem") is not True):
                problems += fail("%s: Deployment read back without its settings: %s"
                                 % (overlay, json.dumps(item["spec"])[:500]))
    if problems:
        return 1
    files = {"samples.yaml": samples}

    # The CRDs are served: one object of each kind is accepted and listed.
    r = kubectl(kubectl_bin, kubeconfig, "apply", "-f", files["samples.yaml"])
    print(r.stdout.strip())
    if r.returncode != 0:
        problems += fail("kubectl apply of sample custom resources: " + r.stderr.strip())
    else:
        for d in crds:
            names = d["spec"]["names"]
            r = kubectl(kubectl_bin, kubeconfig, "get", "%s.%s" % (names["plural"], d["spec"]["group"]),
                        "-n", "default", "sample", "-o", "json")
            if r.returncode != 0:
                problems += fail("get %s sample: %s" % (names["kind"], r.stderr.strip()))
        r = kubectl(kubectl_bin, kubeconfig, "get", "grafanaagents.monitoring.grafana.com", "-n",
                    "default", "sample", "-o", "jsonpath={.spec.metrics.shards}")
        if r.returncode == 0 and r.stdout.strip() != "2":
            problems += fail("GrafanaAgent spec.metrics.shards read back as %r" % r.stdout)
    if problems:
        return 1
    print("kube-sim apply: ok (%s; %d CRDs, %d sample custom resources)"
          % (", ".join(OVERLAYS), len(crds), len(crds)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
