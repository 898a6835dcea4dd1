#!/usr/bin/python3
"""`agent-operator render` on input that is not a set of Kubernetes objects.

Each case is one file given with -f: garbage, a bare scalar, a list of scalars, a
document that is not an object, an object without kind or apiVersion, a non-object item
of a List, UTF-16, invalid UTF-8, a NUL byte, an alias bomb, a stream over the size
limit. Each must exit 1 within the deadline with a message on stderr naming the file
(and the document or List item when there are several) and what is wrong, and print
nothing on stdout (none of them holds a root; roots that render are still printed). A kind no enabled controller reads is a warning and exit 0; a valid
hierarchy next to it still renders.

Usage: render_input_test.py BIN_DIR [unittest args]
"""
import os
import subprocess
import sys
import tempfile
import unittest

BIN_DIR = ""
DEADLINE = 20

ALIAS_BOMB = b"".join(
    b"a%d: &a%d [%s]\n" % (i, i, b",".join([b"lol" if i == 0 else b"*a%d" % (i - 1)] * 10))
    for i in range(9))

AGENT = b"""apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: main, namespace: agents}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: main}}}
"""

# (name, file content, phrases stderr must contain)
ERRORS = [
    ("garbage", b"this is: [not yaml\n", ["garbage.yaml: invalid YAML", "line 2"]),
    ("binary", bytes(range(1, 9)) + b"\x7f\x80\x81", ["binary.yaml: ", "control character"]),
    ("scalar", b"just a scalar\n",
     ["scalar.yaml: the document is a string, not a Kubernetes object"]),
    ("number", b"42\n", ["number.yaml: the document is a number, not a Kubernetes object"]),
    ("scalars", b"- a\n- b\n", ["scalars.yaml: the document is a list, not a Kubernetes object"]),
    ("second-document", b"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n[1, 2]\n",
     ["second-document.yaml (document 2): the document is a list"]),
    ("no-kind", b"apiVersion: v1\nmetadata: {name: x}\n",
     ["no-kind.yaml: the object has no kind"]),
    ("no-api-version", b"kind: ConfigMap\nmetadata: {name: x}\n",
     ["no-api-version.yaml: the object has no apiVersion"]),
    ("list-item", b"apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Namespace, "
     b"metadata: {name: a}}, true]\n",
     ["list-item.yaml (items[1]): the document is a boolean"]),
    ("utf16", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n".encode("utf-16"),
     ["utf16.yaml: the input is UTF-16 encoded"]),
    ("latin1", "apiVersion: v1\nkind: Namespace\nmetadata: {name: caf\u00e9}\n".encode("latin-1"),
     ["latin1.yaml: the input is not valid UTF-8 at line 3"]),
    ("nul", b"apiVersion: v1\nkind: Namespace\nmetadata: {name: x\x00}\n",
     ["nul.yaml: the input contains a NUL byte at line 3"]),
    ("alias-bomb", ALIAS_BOMB, ["alias-bomb.yaml: ", "aliases expand to more than"]),
    ("huge", b"a: " + b"x" * (9 << 20) + b"\n", ["huge.yaml: ", "at most 8388608 are accepted"]),
]


class RenderInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def render(self, name, content):
        path = os.path.join(self.tmp.name, name + ".yaml")
        with open(path, "wb") as f:
            f.write(content)
        return subprocess.run([os.path.join(BIN_DIR, "agent-operator"), "render", "-f", path],
                              capture_output=True, timeout=DEADLINE, cwd=self.tmp.name)

    def test_input_that_is_not_kubernetes_objects_fails_naming_file_and_document(self):
        for name, content, phrases in ERRORS:
            with self.subTest(name):
                r = self.render(name, content)
                err = r.stderr.decode("utf-8", "replace")
                self.assertEqual(r.returncode, 1, err)
                self.assertEqual(r.stdout, b"")
                self.assertTrue(err.startswith("error: "), err)
                for phrase in phrases:
                    self.assertIn(phrase, err)

    def test_a_kind_no_controller_reads_is_a_warning(self):
        r = self.render("mixed", b"""apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
metadata: {name: k}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: m, namespace: agents, labels: {agent: main}}
spec: {}
---
""" + AGENT)
        err = r.stderr.decode()
        self.assertEqual(r.returncode, 0, err)
        self.assertIn("warning: ", err)
        self.assertIn("mixed.yaml (document 1): Kustomization k (apiVersion "
                      "kustomize.config.k8s.io/v1beta1): not a kind the enabled controllers "
                      "read; ignored", err)
        self.assertNotIn("error", err)
        self.assertIn(b"kind: StatefulSet", r.stdout)


if __name__ == "__main__":
    BIN_DIR = sys.argv[1]
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:])
