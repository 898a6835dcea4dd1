#!/usr/bin/python3
"""The agent-operator binary as a user runs it, against kube-sim.

Covers: /healthz, /readyz and /metrics on a running process; a stalled watch replaced
and /readyz failing while caches have no working watch; that no secret value reaches
logs or metrics; graceful shutdown on SIGTERM; exit 1 on a broken kubeconfig; leader election between two replicas
(one leader, a ready standby, takeover when the leader stops); usage errors; and that the
README documents every flag of `--help`.

Usage: operator_process_test.py BIN_DIR SOURCE_DIR [unittest args]
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

BIN_DIR = SOURCE_DIR = ""
DEADLINE = 60  # seconds; only reached when something is broken

SECRET_VALUE = "tops3cret-value-7f3a"

HIERARCHY = """
apiVersion: v1
kind: Namespace
metadata: {name: monitoring}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: monitoring}
spec:
  metrics:
    instanceSelector: {matchLabels: {agent: agent}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: primary, namespace: monitoring, labels: {agent: agent}}
spec:
  remoteWrite:
    - url: https://prometheus.example.com/api/v1/write
      basicAuth:
        username: {name: rw-auth, key: username}
        password: {name: rw-auth, key: password}
---
apiVersion: v1
kind: Secret
metadata: {name: rw-auth, namespace: monitoring}
stringData: {username: writer, password: %s}
""" % SECRET_VALUE


def wait_for(what, condition, deadline=DEADLINE):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return None, ""


class KubeSim:
    def __init__(self, tmp):
        self.kubeconfig = os.path.join(tmp, "kubeconfig")
        self.proc = subprocess.Popen(
            [os.path.join(BIN_DIR, "kube-sim"), "--listen", "127.0.0.1:0", "--kubeconfig-out",
             self.kubeconfig, "--preload", os.path.join(SOURCE_DIR, "deploy", "crds"),
             "--bookmark-interval", "200ms"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.match(r"kube-sim listening on (\S+)", line)
        if not m:
            raise AssertionError("kube-sim did not start: %r" % line)
        self.url = m.group(1)

    def apply(self, yaml_text):
        import yaml  # python3-yaml, installed by tools/setup.sh
        for doc in yaml.safe_load_all(yaml_text):
            if doc is None:
                continue
            group_version = doc["apiVersion"]
            plural = {"Namespace": "namespaces", "Secret": "secrets",
                      "GrafanaAgent": "grafanaagents", "MetricsInstance": "metricsinstances"}[doc["kind"]]
            base = "/api/v1" if group_version == "v1" else "/apis/" + group_version
            ns = doc["metadata"].get("namespace")
            path = base + ("/namespaces/%s" % ns if ns else "") + "/" + plural
            if doc["kind"] == "Secret" and "stringData" in doc:
                import base64
                doc["data"] = {k: base64.b64encode(v.encode()).decode()
                               for k, v in doc.pop("stringData").items()}
            req = urllib.request.Request(self.url + path, data=json.dumps(doc).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
            urllib.request.urlopen(req, timeout=10).read()

    def merge_patch(self, path, patch):
        req = urllib.request.Request(self.url + path, data=json.dumps(patch).encode(), method="PATCH",
                                     headers={"Content-Type": "application/merge-patch+json"})
        urllib.request.urlopen(req, timeout=10).read()

    def get(self, path):
        status, body = http_get(self.url + path)
        return json.loads(body) if status == 200 else None

    def faults(self, settings):
        req = urllib.request.Request(self.url + "/admin/faults", data=json.dumps(settings).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        urllib.request.urlopen(req, timeout=10).read()

    def stats(self):
        return self.get("/admin/stats")

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


class Operator:
    def __init__(self, kubeconfig, log_path, *extra):
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [os.path.join(BIN_DIR, "agent-operator"), "--kubeconfig", kubeconfig,
             "--health-probe-bind-address=127.0.0.1:0", "--metrics-bind-address=127.0.0.1:0",
             "--controllers=agent", *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.health = "http://127.0.0.1:%s" % self._port("serving health probes")
        self.metrics = "http://127.0.0.1:%s" % self._port("serving metrics")

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def _port(self, message):
        def find():
            m = re.search(r'msg="%s" port=(\d+)' % message, self.text())
            return m.group(1) if m else None
        return wait_for("'%s' in the operator log" % message, find)

    def metric(self, name):
        _, body = http_get(self.metrics + "/metrics")
        m = re.search(r"^%s(?:\{[^}]*\})? (\S+)$" % re.escape(name), body, re.M)
        return float(m.group(1)) if m else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=DEADLINE)
        finally:
            self.log.close()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


class OperatorProcessTest(unittest.TestCase):
    def setUp(self):
        for name in ("kube-sim", "agent-operator"):
            if not os.access(os.path.join(BIN_DIR, name), os.X_OK):
                self.fail("%s/%s is missing: build it first (tools/test.sh does)" % (BIN_DIR, name))
        self.tmp = tempfile.TemporaryDirectory()
        self.sim = KubeSim(self.tmp.name)
        self.addCleanup(self.sim.stop)
        self.addCleanup(self.tmp.cleanup)

    def operator(self, name, *extra):
        op = Operator(self.sim.kubeconfig, os.path.join(self.tmp.name, name + ".log"), *extra)
        self.addCleanup(op.kill)
        return op

    def test_health_ready_metrics_and_graceful_shutdown(self):
        self.sim.apply(HIERARCHY)
        op = self.operator("op")
        self.assertEqual(http_get(op.health + "/healthz"), (200, "ok\n"))
        status, body = wait_for("/readyz 200", lambda: (lambda r: r if r[0] == 200 else None)(
            http_get(op.health + "/readyz")))
        self.assertIn("[+]informers ok", body)
        wait_for("the config Secret", lambda: self.sim.get(
            "/api/v1/namespaces/monitoring/secrets/agent-config"))
        wait_for("a successful reconcile", lambda: (op.metric(
            'controller_runtime_reconcile_total{controller="grafana-agent",result="success"}') or 0) >= 1)
        _, metrics = http_get(op.metrics + "/metrics")
        for series in ("agent_operator_build_info", "workqueue_depth", "rest_client_requests_total",
                       "controller_runtime_reconcile_time_seconds_bucket"):
            self.assertIn(series, metrics)
        agent = self.sim.get("/apis/monitoring.grafana.com/v1alpha1/namespaces/monitoring/grafanaagents/agent")
        conditions = {c["type"]: c for c in agent["status"]["conditions"]}
        self.assertEqual(conditions["Reconciled"]["status"], "True")
        self.assertEqual(op.stop(), 0, "SIGTERM must end the process with status 0")
        log = op.text()
        self.assertIn('msg="shutting down" signal=SIGTERM', log)
        for where, text in (("metrics", metrics), ("log", log), ("status", json.dumps(agent["status"]))):
            self.assertNotIn(SECRET_VALUE, text, "a secret value leaked into the " + where)

    def test_standby_is_ready_and_takes_over(self):
        self.sim.apply(HIERARCHY)
        election = ("--leader-elect", "--leader-election-namespace=default",
                    "--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s",
                    "--leader-election-retry-period=500ms")
        first = self.operator("first", *election)
        wait_for("a leader", lambda: first.metric("leader_election_master_status") == 1)
        second = self.operator("second", *election)
        wait_for("the standby ready", lambda: http_get(second.health + "/readyz")[0] == 200)
        self.assertEqual(second.metric("leader_election_master_status"), 0)
        self.assertEqual(first.stop(), 0)
        wait_for("the standby to lead", lambda: second.metric("leader_election_master_status") == 1)
        lease = self.sim.get("/apis/coordination.k8s.io/v1/namespaces/default/leases/agent-operator")
        self.assertIn(lease["spec"]["holderIdentity"], second.text())
        # The new leader reconciles: a changed hierarchy reaches the config.
        self.sim.merge_patch(
            "/apis/monitoring.grafana.com/v1alpha1/namespaces/monitoring/metricsinstances/primary",
            {"spec": {"remoteWrite": [{"url": "https://other.example.com/push"}]}})

        def config_has_new_url():
            import base64
            secret = self.sim.get("/api/v1/namespaces/monitoring/secrets/agent-config")
            return secret and b"other.example.com" in base64.b64decode(secret["data"]["agent.yml"])
        wait_for("the new leader to write the changed config", config_has_new_url)

    def test_stalled_watch_is_replaced_and_readyz_reports_disconnection(self):
        self.sim.apply(HIERARCHY)
        # kube-sim sends a bookmark every 200 ms; a watch silent for 5 of them is stalled.
        op = self.operator("op", "--watch-bookmark-interval=200ms", "--watch-stall-multiple=5",
                           "--readiness-disconnected-threshold=2s")
        wait_for("/readyz 200", lambda: http_get(op.health + "/readyz")[0] == 200)
        wait_for("the config Secret", lambda: self.sim.get(
            "/api/v1/namespaces/monitoring/secrets/agent-config"))
        mi = "/apis/monitoring.grafana.com/v1alpha1/namespaces/monitoring/metricsinstances/primary"

        def config_has(url):
            import base64
            secret = self.sim.get("/api/v1/namespaces/monitoring/secrets/agent-config")
            return secret and url.encode() in base64.b64decode(secret["data"]["agent.yml"])

        # Every watch stream goes silent after its next event (it stays open).
        self.sim.faults({"stall_watch_after": 1})
        self.sim.merge_patch(mi, {"spec": {"remoteWrite": [{"url": "https://before.example.com/push"}]}})
        wait_for("the change before the stall", lambda: config_has("https://before.example.com/push"))
        wait_for("the MetricsInstance watch to stall",
                 lambda: self.sim.stats()["faults"].get("stall_watch_after", 0) >= 1)
        started = time.monotonic()
        self.sim.merge_patch(mi, {"spec": {"remoteWrite": [{"url": "https://during.example.com/push"}]}})
        self.sim.faults({"reset": True})
        wait_for("the change made during the stall", lambda: config_has("https://during.example.com/push"))
        print("stall timeout 1 s: change applied %.2f s after it was made" % (time.monotonic() - started),
              file=sys.stderr)
        self.assertIn("watch stalled: nothing received, not even a bookmark; replacing it", op.text())
        stalls = [float(v) for v in re.findall(
            r'^informer_watch_stalls_total\{kind="MetricsInstance.monitoring.grafana.com",[^}]*\} (\S+)$',
            http_get(op.metrics + "/metrics")[1], re.M)]
        self.assertGreaterEqual(sum(stalls), 1)
        self.assertIsNotNone(op.metric("informer_last_event_age_seconds"))
        self.assertEqual(http_get(op.health + "/readyz")[0], 200)

        # Every watch ends and the API server fails every request: after the threshold
        # /readyz names the caches cut off; once the server answers again it recovers.
        self.sim.faults({"http_503": 1.0, "retry_after_seconds": 0, "expire_watches": True})
        # Every cache crosses the threshold, each at its own moment.
        status, body = wait_for("/readyz 503 naming the MetricsInstance cache", lambda: (
            lambda r: r if r[0] == 503 and "MetricsInstance (disconnected for " in r[1] else None)(
            http_get(op.health + "/readyz")))
        self.assertIn("[-]watches: no working watch for more than 2 s:", body)
        self.sim.faults({"reset": True})
        wait_for("/readyz 200 again", lambda: http_get(op.health + "/readyz")[0] == 200)
        self.assertEqual(op.stop(), 0)

    def test_unreachable_api_server_is_alive_but_not_ready(self):
        import socket
        with socket.socket() as s:  # a port nothing listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        kubeconfig = os.path.join(self.tmp.name, "unreachable")
        with open(kubeconfig, "w") as f:
            f.write("apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                    "clusters: [{name: x, cluster: {server: 'http://127.0.0.1:%d'}}]\n"
                    "contexts: [{name: x, context: {cluster: x, user: x}}]\n"
                    "users: [{name: x, user: {}}]\n" % port)
        op = Operator(kubeconfig, os.path.join(self.tmp.name, "unreachable.log"))
        self.addCleanup(op.kill)
        self.assertEqual(http_get(op.health + "/healthz"), (200, "ok\n"))
        status, body = http_get(op.health + "/readyz")
        self.assertEqual(status, 503)
        self.assertIn("[-]api-server: connecting to the API server", body)
        wait_for("a logged retry", lambda: "API discovery failed; retrying" in op.text())
        self.assertEqual(op.stop(), 0)

    def test_readme_lists_exactly_the_exported_metrics(self):
        """Every metric family the running operator exports (both controllers, leader
        election) is in the README's metric table with its type, and every one listed there
        is exported."""
        self.sim.apply(HIERARCHY)
        op = self.operator("metrics", "--controllers=agent,telegraf",
                           "--telegraf-influxdb-url=https://influxdb.example.com",
                           "--telegraf-influxdb-org=example", "--leader-elect",
                           "--leader-election-namespace=default")
        wait_for("a successful reconcile", lambda: (op.metric(
            'controller_runtime_reconcile_total{controller="grafana-agent",result="success"}') or 0) >= 1)
        # kube-sim runs no pods: the GrafanaAgent is reconciled but not Ready.
        wait_for("the root counted as not ready", lambda: op.metric(
            'agent_operator_roots{controller="grafana-agent",ready="False"}') == 1)
        wait_for("the root counted on the static backend", lambda: op.metric(
            'agent_operator_agent_roots{backend="static"}') == 1)
        self.assertEqual(op.metric('agent_operator_agent_roots{backend="alloy"}'), 0)
        _, body = http_get(op.metrics + "/metrics")
        exported = dict(re.findall(r"^# TYPE (\S+) (\S+)$", body, re.M))
        with open(os.path.join(SOURCE_DIR, "README.md")) as f:
            readme = f.read()
        table = readme.split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
        documented = {}
        for row in re.findall(r"^\| (`.*?) \| (\w+) \|", table, re.M):
            for name in re.findall(r"`([a-z_:]+)(?:\{[^`]*\})?`", row[0]):
                documented[name] = row[1]
        self.assertGreater(len(documented), 30)
        self.assertEqual(sorted(set(exported) - set(documented)), [],
                         "exported, missing from the README's metric table")
        self.assertEqual(sorted(set(documented) - set(exported)), [],
                         "in the README's metric table, not exported")
        self.assertEqual({n: t for n, t in documented.items() if exported[n] != t}, {},
                         "types in the README differ from the exported ones")
        self.assertRegex(body, r'agent_operator_build_info\{version="[^"]+",revision="[^"]+"\} 1')
        self.assertEqual(op.stop(), 0)

    def test_metrics_over_https_with_a_token_file(self):
        import ssl
        tokens = os.path.join(self.tmp.name, "metrics-tokens")
        with open(tokens, "w") as f:
            f.write("# scrapers\nfirst-token\n")
        op = self.operator("secure", "--metrics-secure", "--metrics-auth=token-file",
                           "--metrics-token-file", tokens)
        url = op.metrics.replace("http://", "https://") + "/metrics"
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # the self-signed certificate made at start-up

        def scrape(token=None):
            headers = {"Authorization": "Bearer " + token} if token else {}
            req = urllib.request.Request(url, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=10, context=context) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()

        self.assertEqual(scrape()[0], 401)
        self.assertEqual(scrape("wrong-token")[0], 401)
        status, body = scrape("first-token")
        self.assertEqual(status, 200)
        self.assertIn("process_start_time_seconds", body)
        self.assertEqual(http_get(op.metrics + "/metrics")[0], None, "plain HTTP must not answer")
        # A rotated token file is read again: the old token stops working.
        with open(tokens, "w") as f:
            f.write("second-token\n")
        os.utime(tokens, (time.time() + 5, time.time() + 5))
        self.assertEqual(scrape("first-token")[0], 401)
        self.assertEqual(scrape("second-token")[0], 200)
        self.assertIn("scheme=https auth=token-file", op.text())
        self.assertNotIn("second-token", op.text())
        self.assertEqual(op.stop(), 0)

    def test_broken_kubeconfig_exits_1_naming_the_field(self):
        import base64
        ca_file = os.path.join(self.tmp.name, "ca.crt")
        with open(ca_file, "w") as f:
            f.write("not a certificate\n")
        not_pem = base64.b64encode(b"not a certificate\n").decode()
        cases = (
            ("server: 'ftp://127.0.0.1:21'",
             'clusters[0].cluster.server: server URL \\"ftp://127.0.0.1:21\\": scheme must be http or https'),
            ("server: 'not a url'",
             'clusters[0].cluster.server: server URL \\"not a url\\" is not an absolute URL'),
            ("server: 'https://127.0.0.1:1', certificate-authority-data: " + not_pem,
             "clusters[0].cluster.certificate-authority-data: no PEM certificate found"),
            ("server: 'https://127.0.0.1:1', certificate-authority: " + ca_file,
             "clusters[0].cluster.certificate-authority: %s: no PEM certificate found" % ca_file),
        )
        for cluster, needle in cases:
            kubeconfig = os.path.join(self.tmp.name, "broken")
            with open(kubeconfig, "w") as f:
                f.write("apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                        "clusters: [{name: x, cluster: {%s}}]\n"
                        "contexts: [{name: x, context: {cluster: x, user: x}}]\n"
                        "users: [{name: x, user: {}}]\n" % cluster)
            r = subprocess.run([os.path.join(BIN_DIR, "agent-operator"), "--kubeconfig", kubeconfig,
                                "--health-probe-bind-address=127.0.0.1:0",
                                "--metrics-bind-address=127.0.0.1:0"],
                               capture_output=True, text=True, timeout=DEADLINE)
            self.assertEqual(r.returncode, 1, cluster + "\n" + r.stderr)
            self.assertIn('msg="cannot start"', r.stderr)
            self.assertIn(needle, r.stderr)

    def test_usage_errors_exit_2_with_a_message(self):
        for args, needle in ((["--workers=zero"], "--workers: expected an integer"),
                             (["--no-such-flag"], "unknown flag --no-such-flag"),
                             (["--kubelet-service=kubelet"], "expected namespace/name"),
                             (["--metrics-auth=token-file", "--metrics-token-file=x"],
                              "needs --metrics-secure"),
                             (["--controllers=agent,telegraf"],
                              "--telegraf-influxdb-url is required")):
            r = subprocess.run([os.path.join(BIN_DIR, "agent-operator"), *args],
                               capture_output=True, text=True, timeout=DEADLINE)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(needle, r.stderr)


class ReadmeTest(unittest.TestCase):
    def test_every_flag_is_documented(self):
        out = subprocess.run([os.path.join(BIN_DIR, "agent-operator"), "--help"],
                             capture_output=True, text=True, timeout=DEADLINE, check=True).stdout
        flags = re.findall(r"^  --([a-z0-9-]+)", out, re.M)
        envs = re.findall(r"env (AGENT_OPERATOR_[A-Z0-9_]+)", out)
        self.assertGreater(len(flags), 30)
        with open(os.path.join(SOURCE_DIR, "README.md")) as f:
            readme = f.read()
        missing = [f for f in flags if "`--%s`" % f not in readme]
        self.assertEqual(missing, [], "flags missing from README.md")
        missing_env = [e for e in envs if e not in readme]
        self.assertEqual(missing_env, [], "environment variables missing from README.md")


if __name__ == "__main__":
    BIN_DIR, SOURCE_DIR = sys.argv[1], sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
