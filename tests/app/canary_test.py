#!/usr/bin/python3
"""No credential leaves a Secret: the canary test.

Plants a distinct canary value in every Secret the operator reads (the referenced keys of
a Grafana Agent hierarchy, the telegraf InfluxDB token), in kube-sim's bearer token (the
operator's own credential), and in telegraf annotations (URL user-info, query and fragment
tokens); runs both controllers against kube-sim over TLS through success, failure (a
missing Secret key, additional scrape configs that are not YAML, annotations refused for
their credentials, invalid YAML) and API fault rounds (500/503/429, watch closes,
conflicts) while a Secret rotates; then asserts that no canary appears in the operator's
log (at debug level), in /metrics, in any Event, in the status of any object, or anywhere
in any object the test did not create, Secrets excepted.

Usage: canary_test.py BIN_DIR SOURCE_DIR [unittest args]
"""
import base64
import json
import os
import re
import secrets
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

import operator_process_test as harness  # the operator process and waiting, shared
from operator_process_test import wait_for

BIN_DIR = SOURCE_DIR = ""
TELEGRAF_ANNOTATION = "telegraf.influxdata.com/rubin-telegraf-operator"


class Cluster:
    """kube-sim over TLS with a bearer token, and a small REST client for it."""

    def __init__(self, tmp, token):
        self.token = token
        self.kubeconfig = os.path.join(tmp, "kubeconfig")
        self.proc = subprocess.Popen(
            [os.path.join(BIN_DIR, "kube-sim"), "--tls", "--token", token,
             "--kubeconfig-out", self.kubeconfig,
             "--preload", os.path.join(SOURCE_DIR, "deploy", "crds"),
             "--preload", os.path.join(SOURCE_DIR, "deploy", "examples", "demo-only")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.match(r"kube-sim listening on (\S+)", line)
        if not m:
            raise AssertionError("kube-sim did not start: %r" % line)
        self.url = m.group(1)
        import yaml  # python3-yaml, installed by tools/setup.sh
        with open(self.kubeconfig) as f:
            ca = yaml.safe_load(f)["clusters"][0]["cluster"]["certificate-authority-data"]
        self.tls = ssl.create_default_context(cadata=base64.b64decode(ca).decode())
        self.resources = self._discover()

    def request(self, method, path, body=None, content_type="application/json"):
        req = urllib.request.Request(
            self.url + path, method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": "Bearer " + self.token, "Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, timeout=10, context=self.tls) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def get(self, path):
        status, body = self.request("GET", path)
        return body if status == 200 else None

    def admin(self, path, body=None):
        return self.request("POST" if body is not None else "GET", "/admin/" + path, body)[1]

    def _discover(self):
        """kind -> (base path, plural, namespaced), for every listable resource."""
        out = {}
        bases = ["/api/v1"]
        for group in self.get("/apis")["groups"]:
            bases += ["/apis/" + v["groupVersion"] for v in group["versions"]]
        for base in bases:
            for r in self.get(base)["resources"]:
                if "/" not in r["name"] and "list" in r.get("verbs", []):
                    out.setdefault(r["kind"], (base, r["name"], r["namespaced"]))
        return out

    def path(self, obj):
        base, plural, namespaced = self.resources[obj["kind"]]
        ns = obj["metadata"].get("namespace")
        return base + ("/namespaces/%s" % ns if namespaced else "") + "/" + plural

    def create(self, obj):
        if obj["kind"] == "Secret" and "stringData" in obj:
            obj["data"] = {k: base64.b64encode(v.encode()).decode()
                           for k, v in obj.pop("stringData").items()}
        status, body = self.request("POST", self.path(obj), obj)
        if status != 201:
            raise AssertionError("cannot create %s %s: %s" % (obj["kind"], obj["metadata"]["name"], body))
        return body

    def merge_patch(self, path, patch):
        status, body = self.request("PATCH", path, patch, "application/merge-patch+json")
        if status != 200:
            raise AssertionError("cannot patch %s: %s" % (path, body))

    def everything(self):
        """Every object of every resource, from the API."""
        objects = []
        for kind, (base, plural, _) in sorted(self.resources.items()):
            listed = self.get(base + "/" + plural)
            for item in (listed or {}).get("items", []):
                item.setdefault("kind", kind)
                objects.append(item)
        return objects

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


def condition(obj, type_):
    for c in (obj or {}).get("status", {}).get("conditions", []):
        if c["type"] == type_:
            return c
    return None


class CanaryTest(unittest.TestCase):
    def setUp(self):
        for name in ("kube-sim", "agent-operator"):
            if not os.access(os.path.join(BIN_DIR, name), os.X_OK):
                self.fail("%s/%s is missing: build it first (tools/test.sh does)" % (BIN_DIR, name))
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.canaries = {}

    def canary(self, name):
        if name not in self.canaries:
            self.canaries[name] = "canary%s%s" % (name.lower().replace("_", ""), secrets.token_hex(6))
        return self.canaries[name]

    def agent(self, name):
        return self.cluster.get(
            "/apis/monitoring.grafana.com/v1alpha1/namespaces/monitoring/grafanaagents/" + name)

    def events(self, reason):
        listed = self.cluster.get("/api/v1/events") or {"items": []}
        return [e for e in listed["items"] if e.get("reason") == reason]

    def test_no_canary_outside_secrets(self):
        import yaml
        self.cluster = Cluster(self.tmp.name, self.canary("SIM_TOKEN"))
        self.addCleanup(self.cluster.stop)
        with open(os.path.join(SOURCE_DIR, "tests", "app", "fixtures", "canary.yaml")) as f:
            text = re.sub(r"@(CANARY_[A-Z0-9_]+)@", lambda m: self.canary(m.group(1)[7:]), f.read())
        created = set()
        for doc in yaml.safe_load_all(text):
            created.add(self.cluster.create(doc)["metadata"]["uid"])

        op = harness.Operator(
            self.cluster.kubeconfig, os.path.join(self.tmp.name, "operator.log"), "--log-level=debug",
            "--controllers=agent,telegraf", "--telegraf-token-secret=ops/influx:token",
            "--telegraf-influxdb-url=https://influxdb.example.com", "--telegraf-influxdb-org=example",
            "--telegraf-application-namespaces=argocd")
        self.addCleanup(op.kill)

        # Success and failure paths, before any API fault.
        wait_for("the healthy GrafanaAgent Reconciled=True", lambda: (
            condition(self.agent("agent"), "Reconciled") or {}).get("status") == "True")
        wait_for("AssetResolutionFailed on missing-key", lambda: (
            condition(self.agent("missing-key"), "Reconciled") or {}).get("reason") == "AssetResolutionFailed")
        # Malformed additional scrape configs are left out and reported on the instance.
        wait_for("the bad-scrape additional scrape configs reported", lambda: any(
            p.get("field") == "spec.additionalScrapeConfigs"
            for p in (self.agent("bad-scrape").get("status") or {}).get("problems", [])))
        wait_for("the telegraf ConfigMap of team-t1",
                 lambda: self.cluster.get("/api/v1/namespaces/team-t1/configmaps/rubin-telegraf"))
        wait_for("the copied InfluxDB token",
                 lambda: self.cluster.get("/api/v1/namespaces/team-t1/secrets/rubin-telegraf-token"))
        wait_for("InvalidAnnotation Events on team-t2, team-t3, team-t4 and the Application",
                 lambda: {e["involvedObject"]["name"] for e in self.events("InvalidAnnotation")}
                 >= {"team-t2", "team-t3", "team-t4", "shop"})
        refused = {e["involvedObject"]["name"]: e["message"] for e in self.events("InvalidAnnotation")}
        self.assertIn("the URL contains a password", refused["team-t2"])
        self.assertIn('query parameter "token" looks like a credential', refused["team-t3"])
        self.assertIn("REDACTED", refused["team-t2"])

        # Fault rounds while a Secret rotates: every request may fail, watches end after
        # a few events, updates conflict. Then the faults stop and the hierarchy converges
        # on the rotated value.
        self.cluster.admin("faults", {"http_500": 0.15, "http_503": 0.15, "http_429": 0.1,
                                      "retry_after_seconds": 0, "close_watch_after": 3,
                                      "conflict_next_update": ["*", "*", "*"]})
        def patch_through_faults(path, patch):
            wait_for("PATCH " + path + " through the faults", lambda: self.cluster.request(
                "PATCH", path, patch, "application/merge-patch+json")[0] == 200)

        rotated = self.canary("RW_PASS_ROTATED")
        patch_through_faults("/api/v1/namespaces/monitoring/secrets/rw-auth",
                             {"data": {"pass": base64.b64encode(rotated.encode()).decode()}})
        # More changes for both controllers, so that they keep meeting faults.
        for i in range(10):
            patch_through_faults("/apis/monitoring.coreos.com/v1/namespaces/team-a/servicemonitors/sm",
                                 {"metadata": {"labels": {"round": str(i)}}})
            patch_through_faults("/api/v1/namespaces/team-t1", {"metadata": {"annotations": {
                TELEGRAF_ANNOTATION: "- app: http://app.team-t1.svc:8080/metrics\n"
                                     "- extra%d: http://extra.team-t1.svc:%d/metrics\n" % (i, 9000 + i)}}})
        wait_for("faults to hit the operator", lambda: sum(
            self.cluster.admin("stats")["faults"].get(k, 0) for k in ("http_500", "http_503", "http_429")) >= 10)
        self.cluster.admin("faults", {"reset": True})

        def rotated_everywhere():
            assets = self.cluster.get("/api/v1/namespaces/monitoring/secrets/agent-secrets") or {}
            values = [base64.b64decode(v).decode(errors="replace")
                      for v in assets.get("data", {}).values()]
            return rotated in values and (condition(self.agent("agent"), "Reconciled") or {}).get("status") == "True"
        wait_for("the rotated password in the assets Secret", rotated_everywhere)
        metrics = harness.http_get(op.metrics + "/metrics")[1]
        self.assertEqual(op.stop(), 0)
        log = op.text()

        # The canaries reached what they should: the generated Secrets.
        self.assertGreater(len(self.canaries), 30)
        decoded = "".join(base64.b64decode(v).decode(errors="replace")
                          for o in self.cluster.everything()
                          if o["kind"] == "Secret" and o["metadata"]["uid"] not in created
                          for v in o.get("data", {}).values())
        for copied in ("RW_PASS_ROTATED", "OAUTH_SECRET", "AWS_SK", "SM_PASS", "PM_PASS",
                       "PROBE_TOKEN", "LOKI_PASS", "EXTRA_SCRAPE", "INFLUX_TOKEN"):
            self.assertIn(self.canaries[copied], decoded, copied + " was not copied where it belongs")

        # ... and nowhere else.
        places = {"the operator log": log, "/metrics": metrics}
        for obj in self.cluster.everything():
            where = "%s %s/%s" % (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            if obj["metadata"]["uid"] in created:
                places["the status of " + where] = json.dumps(obj.get("status", {}))
            elif obj["kind"] != "Secret":
                places[where] = json.dumps(obj)
        self.assertTrue(any(k.startswith("Event ") for k in places), "no Event was written")
        self.assertTrue(any(k.startswith("ConfigMap team-t1") for k in places))
        leaks = ["%s in %s" % (name, where) for where, text in places.items()
                 for name, value in self.canaries.items() if value in text]
        self.assertEqual(leaks, [])
        # The log did mention the refused URLs, redacted.
        self.assertIn("REDACTED@app.team-t2.svc", log)


if __name__ == "__main__":
    BIN_DIR, SOURCE_DIR = sys.argv[1], sys.argv[2]
    harness.BIN_DIR, harness.SOURCE_DIR = BIN_DIR, SOURCE_DIR
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
