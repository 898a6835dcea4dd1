#!/usr/bin/python3
"""Fidelity: the official Kubernetes Python client (Debian python3-kubernetes) against
kube-sim over TLS with a bearer token: list, create, get, patch, delete of built-in and
custom resources, and watch.Watch().stream across forced 410s.

    python_client_test.py <path to kube-sim> <fixtures dir>
"""
import json
import os
import queue
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

try:
    import yaml
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException
except ImportError as e:  # a missing dependency is a failure with the fix in the message
    print(f"FAIL: the official Python client is not importable ({e}); "
          "install it with: sudo apt-get install python3-kubernetes python3-yaml "
          "(tools/setup.sh does this)", file=sys.stderr)
    sys.exit(1)

SIM = sys.argv[1] if len(sys.argv) > 1 else "build/bin/kube-sim"
FIXTURES = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "fixtures")
TOKEN = "python-fidelity"
DEADLINE = 20.0  # seconds to wait for any expected event


class KubeSim:
    def __init__(self):
        self.dir = tempfile.TemporaryDirectory()
        self.kubeconfig = os.path.join(self.dir.name, "kubeconfig")
        self.proc = subprocess.Popen(
            [SIM, "--tls", "--token", TOKEN, "--kubeconfig-out", self.kubeconfig],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("kube-sim listening on "):
            raise RuntimeError("kube-sim did not start: " + line + self.proc.stderr.read())
        self.url = line.split()[-1]
        with open(self.kubeconfig) as f:
            ca = yaml.safe_load(f)["clusters"][0]["cluster"]["certificate-authority-data"]
        import base64
        self.ssl = ssl.create_default_context(cadata=base64.b64decode(ca).decode())

    def admin(self, path, body=None):
        req = urllib.request.Request(self.url + path, method="POST" if body is not None else "GET",
                                     data=None if body is None else json.dumps(body).encode())
        with urllib.request.urlopen(req, context=self.ssl, timeout=10) as r:
            return json.loads(r.read())

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()
        self.proc.stderr.close()
        self.dir.cleanup()


def configmap(name, labels=None):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
                              data={"k": "v"})


class StreamReader:
    """Runs a watch.Watch().stream generator in a thread and hands events over."""

    def __init__(self, w, func, *args, **kwargs):
        self.events = queue.Queue()
        self.error = None

        def run():
            try:
                for ev in w.stream(func, *args, **kwargs):
                    self.events.put((ev["type"], ev["object"].metadata.name))
            except Exception as e:  # reported to the test thread
                self.error = e
            finally:
                self.events.put(None)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def next(self):
        item = self.events.get(timeout=DEADLINE)
        if item is None:
            raise AssertionError(f"the stream ended: {self.error!r}")
        return item

    def wait_end(self):
        self.thread.join(timeout=DEADLINE)
        return self.error


class PythonClientFidelity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sim = KubeSim()
        config.load_kube_config(config_file=cls.sim.kubeconfig)
        cls.core = client.CoreV1Api()
        cls.ext = client.ApiextensionsV1Api()
        cls.custom = client.CustomObjectsApi()

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()

    def setUp(self):
        self.sim.admin("/admin/faults", {"reset": True})

    def test_list_create_get_patch_delete(self):
        ns = self.core.list_namespace()
        self.assertIn("default", [n.metadata.name for n in ns.items])
        created = self.core.create_namespaced_config_map("default", configmap("py-a", {"app": "py"}))
        self.assertTrue(created.metadata.uid)
        self.core.create_namespaced_config_map("default", configmap("py-b", {"app": "other"}))
        listed = self.core.list_namespaced_config_map("default", label_selector="app=py")
        self.assertEqual([c.metadata.name for c in listed.items], ["py-a"])
        self.assertTrue(listed.metadata.resource_version)
        with self.assertRaises(ApiException) as ctx:
            self.core.create_namespaced_config_map("default", configmap("py-a"))
        self.assertEqual(ctx.exception.status, 409)
        self.assertEqual(json.loads(ctx.exception.body)["reason"], "AlreadyExists")
        patched = self.core.patch_namespaced_config_map("py-a", "default", {"data": {"k": "w"}})
        self.assertEqual(patched.data["k"], "w")
        stale = created
        stale.data = {"k": "stale"}
        with self.assertRaises(ApiException) as ctx:
            self.core.replace_namespaced_config_map("py-a", "default", stale)
        self.assertEqual(ctx.exception.status, 409)
        self.core.delete_namespaced_config_map("py-a", "default")
        with self.assertRaises(ApiException) as ctx:
            self.core.read_namespaced_config_map("py-a", "default")
        self.assertEqual(ctx.exception.status, 404)
        # Pagination with the client's own continue handling.
        for i in range(7):
            self.core.create_namespaced_config_map("default", configmap(f"page-{i}", {"page": "yes"}))
        first = self.core.list_namespaced_config_map("default", label_selector="page", limit=3)
        self.assertEqual(len(first.items), 3)
        self.assertTrue(first.metadata._continue)
        rest = self.core.list_namespaced_config_map("default", label_selector="page", limit=10,
                                                    _continue=first.metadata._continue)
        self.assertEqual(len(rest.items), 4)

    def test_custom_resources(self):
        with open(os.path.join(FIXTURES, "widgets-crd.yaml")) as f:
            crd = yaml.safe_load(f)
        self.ext.create_custom_resource_definition(crd)
        got = self.ext.read_custom_resource_definition("widgets.fidelity.example.com")
        conditions = {c.type: c.status for c in got.status.conditions}
        self.assertEqual(conditions.get("Established"), "True")
        with open(os.path.join(FIXTURES, "widgets.yaml")) as f:
            for w in yaml.safe_load_all(f):
                self.custom.create_namespaced_custom_object("fidelity.example.com", "v1", "default", "widgets", w)
        front = self.custom.list_namespaced_custom_object("fidelity.example.com", "v1", "default", "widgets",
                                                          label_selector="tier=front")
        self.assertEqual(front["kind"], "WidgetList")
        self.assertEqual([w["metadata"]["name"] for w in front["items"]], ["front"])
        patched = self.custom.patch_namespaced_custom_object("fidelity.example.com", "v1", "default",
                                                             "widgets", "front", {"spec": {"size": 4}})
        self.assertEqual(patched["spec"]["size"], 4)
        self.assertEqual(patched["metadata"]["generation"], 2)
        with self.assertRaises(ApiException) as ctx:
            self.custom.patch_namespaced_custom_object("fidelity.example.com", "v1", "default", "widgets",
                                                       "front", {"spec": {"size": "big"}})
        self.assertEqual(ctx.exception.status, 422)
        self.assertIn("spec.size", json.loads(ctx.exception.body)["message"])

    def test_watch_stream_across_a_forced_410(self):
        rv = self.core.list_namespaced_config_map("default").metadata.resource_version
        w = watch.Watch()
        reader = StreamReader(w, self.core.list_namespaced_config_map, "default", resource_version=rv)
        self.core.create_namespaced_config_map("default", configmap("w-a"))
        self.assertEqual(reader.next(), ("ADDED", "w-a"))
        started = self.sim.admin("/admin/stats")["watches_started"]
        # kube-sim ends every open watch with an ERROR 410 event; the client resumes once
        # from the last resourceVersion it saw and keeps streaming.
        self.sim.admin("/admin/faults", {"expire_watches": True})
        self.core.create_namespaced_config_map("default", configmap("w-b"))
        self.assertEqual(reader.next(), ("ADDED", "w-b"))
        stats = self.sim.admin("/admin/stats")
        self.assertEqual(stats["faults"]["expire_watches"], 1)
        self.assertEqual(stats["watches_started"], started + 1)
        w.stop()
        self.core.create_namespaced_config_map("default", configmap("w-c"))  # lets the loop see stop()
        reader.wait_end()

    def test_two_410s_in_a_row_reach_the_caller(self):
        rv = self.core.list_namespaced_config_map("default").metadata.resource_version
        self.sim.admin("/admin/faults", {"gone_in_stream_next_watch": 2})
        reader = StreamReader(watch.Watch(), self.core.list_namespaced_config_map, "default",
                              resource_version=rv)
        err = reader.wait_end()
        self.assertIsInstance(err, ApiException)
        self.assertEqual(err.status, 410)
        self.assertEqual(self.sim.admin("/admin/stats")["faults"]["gone_in_stream_next_watch"], 2)

    def test_410_on_the_request_then_relist(self):
        rv = self.core.list_namespaced_config_map("default").metadata.resource_version
        self.sim.admin("/admin/faults", {"gone_next_watch": 1})
        reader = StreamReader(watch.Watch(), self.core.list_namespaced_config_map, "default",
                              resource_version=rv)
        err = reader.wait_end()
        self.assertIsInstance(err, ApiException)
        self.assertEqual(err.status, 410)
        # What the client's documentation says to do: list again and watch from there.
        fresh = self.core.list_namespaced_config_map("default")
        w = watch.Watch()
        reader = StreamReader(w, self.core.list_namespaced_config_map, "default",
                              resource_version=fresh.metadata.resource_version)
        self.core.create_namespaced_config_map("default", configmap("after-410"))
        self.assertEqual(reader.next(), ("ADDED", "after-410"))
        w.stop()
        self.core.delete_namespaced_config_map("after-410", "default")
        reader.wait_end()


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
