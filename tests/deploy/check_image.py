#!/usr/bin/python3
"""The container image that tools/image.sh builds, run as a cluster would run it.

    check_image.py SOURCE_DIR AGENT_OPERATOR KUBE_SIM

Builds the image from AGENT_OPERATOR (twice: the digest must not change), reads the OCI
layout (labels and annotations, numeric non-root user, entrypoint, the layer's files),
unpacks it with umoci and runs it with runc as the Deployment does (read-only root
filesystem, no capabilities, user 65532): `--version` must print the labelled version and
revision, and the operator must become ready against kube-sim over TLS and stop with
status 0 on SIGTERM. deploy/Dockerfile must describe the same image (user, entrypoint,
labels, contents from the same script).

Needs root (runc creates namespaces and cgroups) and the Debian packages umoci and runc
(tools/setup.sh installs them).
"""

import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest
import urllib.error
import urllib.request

import yaml

SRC = AGENT_OPERATOR = KUBE_SIM = ""
DEADLINE = 60  # seconds; only reached when something is broken
UID = 65532
ENTRYPOINT = "/usr/local/bin/agent-operator"
SOURCE = "https://example.invalid/agent-operator"
LABELS = ("org.opencontainers.image.version", "org.opencontainers.image.revision",
          "org.opencontainers.image.source", "org.opencontainers.image.created",
          "org.opencontainers.image.title")


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


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def blob(layout, digest):
    algo, hexdigest = digest.split(":", 1)
    with open(os.path.join(layout, "blobs", algo, hexdigest), "rb") as f:
        data = f.read()
    assert hashlib.sha256(data).hexdigest() == hexdigest, "blob %s is corrupt" % digest
    return data


def build_image(output, tag):
    r = subprocess.run([os.path.join(SRC, "tools", "image.sh"), "--binary", AGENT_OPERATOR,
                        "--output", output, "--tag", tag, "--source", SOURCE, "--no-setup"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError("tools/image.sh failed (%d): %s%s" % (r.returncode, r.stdout, r.stderr))
    with open(os.path.join(output, "index.json")) as f:
        index = json.load(f)
    refs = {m.get("annotations", {}).get("org.opencontainers.image.ref.name"): m
            for m in index["manifests"]}
    assert tag in refs, "index.json has no tag %s: %s" % (tag, index)
    manifest_digest = refs[tag]["digest"]
    manifest = json.loads(blob(output, manifest_digest))
    config = json.loads(blob(output, manifest["config"]["digest"]))
    return manifest_digest, manifest, config


def binary_version(binary):
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=DEADLINE,
                         check=True).stdout.strip()
    m = re.fullmatch(r"agent-operator (\S+) \(revision (\S+)\)", out)
    assert m, "unexpected --version output %r" % out
    return out, m.group(1), m.group(2)


class ImageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = [t for t in ("umoci", "runc") if not shutil.which(t)]
        if missing:
            raise AssertionError("%s not found: install the Debian packages %s (tools/setup.sh "
                                 "does)" % (", ".join(missing), " ".join(missing)))
        if os.geteuid() != 0:
            raise AssertionError("runc needs root to create the container's namespaces and "
                                 "cgroups: run this test as root")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.layout = os.path.join(cls.tmp.name, "oci")
        cls.digest, cls.manifest, cls.config = build_image(cls.layout, "test")
        cls.version_line, cls.version, cls.revision = binary_version(AGENT_OPERATOR)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_labels_user_and_entrypoint(self):
        cfg = self.config["config"]
        labels, annotations = cfg.get("Labels", {}), self.manifest.get("annotations", {})
        for key in LABELS:
            self.assertIn(key, labels)
            self.assertEqual(labels[key], annotations.get(key), key)
        with open(os.path.join(SRC, "CMakeLists.txt")) as f:
            cmake_version = re.search(r"project\(agent-operator\s+VERSION\s+([0-9.]+)", f.read()).group(1)
        self.assertEqual(labels["org.opencontainers.image.version"], cmake_version)
        self.assertEqual(labels["org.opencontainers.image.revision"], self.revision)
        git = subprocess.run(["git", "-C", SRC, "rev-parse", "HEAD"], capture_output=True, text=True)
        if git.returncode == 0:
            # The binary was built from this checkout (a commit may have happened since;
            # then the binary is stale, not the image).
            self.assertRegex(self.revision, r"^[0-9a-f]{40}$")
        self.assertEqual(labels["org.opencontainers.image.source"], SOURCE)
        self.assertRegex(labels["org.opencontainers.image.created"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(self.config["created"], labels["org.opencontainers.image.created"])
        self.assertEqual(cfg["User"], "%d:%d" % (UID, UID))
        self.assertEqual(cfg["Entrypoint"], [ENTRYPOINT])
        self.assertNotIn("Cmd", cfg)
        self.assertEqual(sorted(cfg.get("ExposedPorts", {})), ["8080/tcp", "8081/tcp"])
        self.assertEqual(self.config["os"], "linux")
        # The Deployment runs as the image's user.
        with open(os.path.join(SRC, "deploy", "base", "deployment.yaml")) as f:
            dep = yaml.safe_load(f)
        pod = dep["spec"]["template"]["spec"]
        self.assertEqual(pod["securityContext"]["runAsUser"], UID)
        self.assertEqual(pod["securityContext"]["runAsGroup"], UID)

    def test_the_same_binary_gives_the_same_digest(self):
        digest, _, _ = build_image(os.path.join(self.tmp.name, "again"), "test")
        self.assertEqual(digest, self.digest)

    def test_layer_holds_the_binary_its_libraries_and_certificates_only(self):
        self.assertEqual(len(self.manifest["layers"]), 1)
        data = gzip.decompress(blob(self.layout, self.manifest["layers"][0]["digest"]))
        self.assertEqual("sha256:" + hashlib.sha256(data).hexdigest(),
                         self.config["rootfs"]["diff_ids"][0])
        import io
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            members = {m.name.lstrip("./").rstrip("/"): m for m in tar.getmembers()}
            passwd = tar.extractfile(members["etc/passwd"]).read().decode()
        names = set(members) - {""}
        self.assertIn("usr/local/bin/agent-operator", names)
        self.assertTrue(members["usr/local/bin/agent-operator"].mode & 0o111)
        self.assertIn("etc/ssl/certs/ca-certificates.crt", names)
        self.assertIn("nonroot:x:%d:%d:" % (UID, UID), passwd)
        for name, m in members.items():
            self.assertEqual((m.uid, m.gid), (0, 0), "%s is not owned by root" % name)
            self.assertFalse(m.mode & 0o002 and not m.issym() and name != "tmp",
                             "%s is world-writable" % name)
        # No shell, no package manager, no coreutils: the binary and what it loads.
        for absent in ("bin/sh", "usr/bin/sh", "usr/bin/bash", "usr/bin/apt", "usr/bin/dpkg"):
            self.assertNotIn(absent, names)
        executables = sorted(n for n, m in members.items()
                             if m.isfile() and m.mode & 0o111 and ".so" not in n)
        self.assertEqual(executables, ["usr/local/bin/agent-operator"])
        ldd = subprocess.run(["ldd", AGENT_OPERATOR], capture_output=True, text=True, check=True).stdout
        for lib in re.findall(r"=>\s+/\S*?/([^/\s]+)\s", ldd):
            self.assertTrue(any(n.endswith("/" + lib) for n in names), "%s is not in the image" % lib)

    # -- running it -----------------------------------------------------------------------

    def bundle(self, name, args, mounts=()):
        """An OCI runtime bundle of the image, set up as deploy/base/deployment.yaml runs the
        container, but in the host's network namespace so that it reaches kube-sim on
        loopback."""
        path = os.path.join(self.tmp.name, name)
        subprocess.run(["umoci", "unpack", "--image", self.layout + ":test", path],
                       check=True, capture_output=True, timeout=DEADLINE)
        with open(os.path.join(path, "config.json")) as f:
            spec = json.load(f)
        proc = spec["process"]
        self.assertEqual((proc["user"]["uid"], proc["user"]["gid"]), (UID, UID))
        self.assertEqual(proc["args"][0], ENTRYPOINT)
        proc["args"] = [ENTRYPOINT] + list(args)
        proc["terminal"] = False
        proc["noNewPrivileges"] = True
        proc["capabilities"] = {k: [] for k in ("bounding", "effective", "inheritable",
                                                 "permitted", "ambient")}
        spec["root"]["readonly"] = True
        spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"]
                                       if n["type"] != "network"]
        spec["mounts"].append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
                               "options": ["nosuid", "nodev", "size=16m"]})
        for source, destination in mounts:
            spec["mounts"].append({"destination": destination, "type": "bind", "source": source,
                                   "options": ["rbind", "ro"]})
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump(spec, f)
        return path

    def test_version_inside_the_container(self):
        path = self.bundle("version", ["--version"])
        cid = "aop-image-version-%d" % os.getpid()
        self.addCleanup(subprocess.run, ["runc", "delete", "--force", cid], capture_output=True)
        r = subprocess.run(["runc", "run", "--bundle", path, cid], capture_output=True, text=True,
                           timeout=DEADLINE)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), self.version_line)
        self.assertEqual(self.version_line, "agent-operator %s (revision %s)" % (
            self.config["config"]["Labels"]["org.opencontainers.image.version"],
            self.config["config"]["Labels"]["org.opencontainers.image.revision"]))

    def test_starts_against_kube_sim_and_becomes_ready(self):
        kubeconfig = os.path.join(self.tmp.name, "kubeconfig")
        sim = subprocess.Popen([KUBE_SIM, "--listen", "127.0.0.1:0", "--tls", "--token", "t0ken",
                                "--kubeconfig-out", kubeconfig,
                                "--preload", os.path.join(SRC, "deploy", "crds")],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.addCleanup(sim.stdout.close)
        self.addCleanup(sim.wait)
        self.addCleanup(sim.kill)
        line = sim.stdout.readline()
        self.assertRegex(line, r"^kube-sim listening on https://")
        os.chmod(kubeconfig, 0o644)  # readable by the image's user
        health, metrics = free_port(), free_port()
        path = self.bundle("run", [
            "--kubeconfig=/etc/agent-operator/kubeconfig", "--controllers=agent",
            "--health-probe-bind-address=127.0.0.1:%d" % health,
            "--metrics-bind-address=127.0.0.1:%d" % metrics],
            mounts=[(kubeconfig, "/etc/agent-operator/kubeconfig")])
        cid = "aop-image-run-%d" % os.getpid()
        log_path = os.path.join(self.tmp.name, "run.log")
        log = open(log_path, "w")
        self.addCleanup(log.close)
        runc = subprocess.Popen(["runc", "run", "--bundle", path, cid], stdout=log,
                                stderr=subprocess.STDOUT)
        self.addCleanup(subprocess.run, ["runc", "delete", "--force", cid], capture_output=True)

        def log_text():
            with open(log_path) as f:
                return f.read()

        def ready():
            if runc.poll() is not None:
                raise AssertionError("the container exited (%s): %s" % (runc.returncode, log_text()))
            return http_get("http://127.0.0.1:%d/readyz" % health)[0] == 200
        wait_for("/readyz 200 from the container", ready)
        state = json.loads(subprocess.run(["runc", "state", cid], capture_output=True, text=True,
                                          check=True).stdout)
        with open("/proc/%d/status" % state["pid"]) as f:
            uids = re.search(r"^Uid:\s+(.*)$", f.read(), re.M).group(1).split()
        self.assertEqual(set(uids), {str(UID)}, "the operator must run as %d" % UID)
        _, body = http_get("http://127.0.0.1:%d/metrics" % metrics)
        self.assertIn('agent_operator_build_info{version="%s",revision="%s"} 1'
                      % (self.version, self.revision), body)
        runc.send_signal(signal.SIGTERM)  # runc forwards it to the container's process
        self.assertEqual(runc.wait(timeout=DEADLINE), 0, log_text())
        self.assertIn('msg="agent-operator stopped" status=0', log_text())

    def test_dockerfile_builds_the_same_image(self):
        with open(os.path.join(SRC, "deploy", "Dockerfile")) as f:
            text = f.read()
        final = text[text.rindex("\nFROM "):]
        self.assertRegex(final, r"\nFROM scratch\b")
        self.assertIn("tools/image.sh --rootfs", text)
        self.assertRegex(final, r"\nUSER %d:%d\n" % (UID, UID))
        self.assertIn('ENTRYPOINT ["%s"]' % ENTRYPOINT, final)
        self.assertIn("EXPOSE 8080 8081", final)
        labels = dict(re.findall(r'(org\.opencontainers\.image\.[a-z]+)="([^"]*)"', final))
        image_labels = self.config["config"]["Labels"]
        self.assertEqual(sorted(labels), sorted(image_labels))
        for key in ("org.opencontainers.image.title", "org.opencontainers.image.description"):
            self.assertEqual(labels[key], image_labels[key])


if __name__ == "__main__":
    SRC, AGENT_OPERATOR, KUBE_SIM = sys.argv[1:4]
    unittest.main(argv=[sys.argv[0]] + sys.argv[4:], verbosity=2)
