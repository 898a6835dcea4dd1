#!/usr/bin/python3
"""Checks of the installation manifests in deploy/ (run by ctest, label "deploy").

    check_manifests.py SOURCE_DIR manifests             # parse, Deployment security, RBAC
    check_manifests.py SOURCE_DIR kustomize             # `kubectl kustomize` of deploy/, every overlay
    check_manifests.py SOURCE_DIR dockerfile [BINARY]   # Dockerfile vs setup.sh, image.sh, the binary

Exit 77 (ctest SKIP) only when kubectl is absent for the kustomize check.
Needs /usr/bin/python3 with PyYAML (Debian: python3-yaml). Reads only the repository.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

import yaml

SKIP = 77
NAMESPACE = "agent-operator"

# The operator's stable command-line interface (issue 5); the Deployment may use no other.
STABLE_FLAGS = {
    "--kubeconfig", "--context", "--namespaces", "--controllers", "--workers",
    "--kube-api-qps", "--kube-api-burst", "--resync-period", "--leader-elect",
    "--leader-election-id", "--leader-election-namespace", "--health-probe-bind-address",
    "--metrics-bind-address", "--log-level", "--log-format",
}

# Every permission the operator needs, and nothing else: (apiGroup, resource) -> verbs,
# from tests/deploy/operator_requests.tsv, the list of the requests the operator's code
# makes (which tests/app/rbac_sim_test.cpp checks against what it does on a server).
def expected_grants(path):
    cluster, namespaced = {}, {}
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            verb, resource, scope, _made, _where = line.rstrip("\n").split("\t")
            group, _, res = resource.partition("/")
            table = cluster if scope == "cluster" else namespaced
            table.setdefault(("" if group == "core" else group, res), set()).add(verb)
    return cluster, namespaced


EXPECTED_CLUSTER, EXPECTED_NAMESPACED = expected_grants(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "operator_requests.tsv"))
ALLOWED_VERBS = {"get", "list", "watch", "create", "update", "patch", "delete"}


class Failures:
    def __init__(self):
        self.items = []

    def add(self, msg):
        self.items.append(msg)

    def check(self, cond, msg):
        if not cond:
            self.add(msg)
        return cond

    def report(self, what):
        for m in self.items:
            print("FAIL: " + m)
        if self.items:
            print("%s: %d problem(s)" % (what, len(self.items)))
            return 1
        print("%s: ok" % what)
        return 0


def load_yaml_docs(path, fails):
    try:
        with open(path, encoding="utf-8") as f:
            return [d for d in yaml.safe_load_all(f) if d is not None]
    except yaml.YAMLError as e:
        fails.add("%s: not valid YAML: %s" % (path, e))
        return []


KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def kustomization_file(directory):
    for name in KUSTOMIZATION_FILES:
        if os.path.isfile(os.path.join(directory, name)):
            return os.path.join(directory, name)
    return None


def local_render(directory, fails):
    """What kustomize renders for `directory`, for the subset of kustomize the base uses:
    a resources list of files and directories (themselves kustomizations), plus image tag
    rewriting. Overlays and components are left to `kubectl kustomize` (the kustomize
    check)."""
    path = kustomization_file(directory)
    kust = load_yaml_docs(path, fails) if path else []
    if not kust:
        fails.add("%s has no kustomization" % directory)
        return [], {}
    kust = kust[0]
    docs = []
    for res in kust.get("resources", []):
        target = os.path.normpath(os.path.join(directory, res))
        if os.path.isdir(target):
            docs += local_render(target, fails)[0]
            continue
        if not fails.check(os.path.isfile(target), "%s: resource %s is not a file" % (path, res)):
            continue
        docs += load_yaml_docs(target, fails)
    images = {i["name"]: i for i in kust.get("images", [])}
    for doc in docs:
        for c in pod_containers(doc):
            img = images.get(c.get("image", "").split(":")[0])
            if img:
                c["image"] = img.get("newName", img["name"]) + ":" + str(img["newTag"])
    return docs, kust


def pod_containers(doc):
    spec = doc.get("spec", {}).get("template", {}).get("spec", {}) if isinstance(doc, dict) else {}
    return spec.get("containers", []) + spec.get("initContainers", [])


def by_kind(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def flag_args(args):
    """['--a=b', '--c'] -> {'--a': 'b', '--c': None}"""
    out = {}
    for a in args:
        name, _, value = a.partition("=")
        out[name] = value if "=" in a else None
    return out


def port_number(container, port):
    if isinstance(port, int):
        return port
    for p in container.get("ports", []):
        if p.get("name") == port:
            return p.get("containerPort")
    return None


def check_deployment(docs, fails, replicas=1):
    deps = by_kind(docs, "Deployment")
    if not fails.check(len(deps) == 1, "want exactly one Deployment, found %d" % len(deps)):
        return None
    dep = deps[0]
    meta, spec = dep["metadata"], dep["spec"]
    fails.check(meta.get("namespace") == NAMESPACE, "Deployment namespace %r" % meta.get("namespace"))
    fails.check(spec.get("replicas") == replicas,
                "Deployment replicas %r, want %d" % (spec.get("replicas"), replicas))
    tmpl = spec["template"]
    fails.check(all(tmpl["metadata"].get("labels", {}).get(k) == v
                    for k, v in spec["selector"]["matchLabels"].items()),
                "Deployment selector does not match its pod labels")
    pod = tmpl["spec"]
    psc = pod.get("securityContext", {})
    fails.check(psc.get("runAsNonRoot") is True, "pod securityContext.runAsNonRoot must be true")
    fails.check(isinstance(psc.get("runAsUser"), int) and psc["runAsUser"] > 0,
                "pod securityContext.runAsUser must be a non-zero uid")
    fails.check(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault",
                "pod seccompProfile must be RuntimeDefault")
    fails.check(not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC"),
                "pod must not use host namespaces")
    sas = by_kind(docs, "ServiceAccount")
    fails.check(any(s["metadata"]["name"] == pod.get("serviceAccountName")
                    and s["metadata"].get("namespace") == NAMESPACE for s in sas),
                "serviceAccountName %r has no ServiceAccount in %s"
                % (pod.get("serviceAccountName"), NAMESPACE))
    containers = pod.get("containers", [])
    if not fails.check(len(containers) == 1, "want one container, found %d" % len(containers)):
        return dep
    c = containers[0]
    sc = c.get("securityContext", {})
    fails.check(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation must be false")
    fails.check(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem must be true")
    fails.check(sc.get("privileged") in (None, False), "container must not be privileged")
    fails.check("ALL" in sc.get("capabilities", {}).get("drop", []), "capabilities must drop ALL")
    fails.check(not sc.get("capabilities", {}).get("add"), "capabilities must add nothing")
    fails.check(sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True, "container runAsNonRoot")
    fails.check(sc.get("runAsUser", psc.get("runAsUser")) not in (None, 0), "container runAsUser")
    fails.check(sc.get("seccompProfile", psc.get("seccompProfile", {})).get("type") == "RuntimeDefault",
                "container seccompProfile must be RuntimeDefault")

    flags = flag_args(c.get("args", []) + c.get("command", [])[1:])
    for name in flags:
        fails.check(name in STABLE_FLAGS, "flag %s is not part of the operator's interface" % name)
    fails.check("--leader-elect" in flags and flags["--leader-elect"] in (None, "true"),
                "leader election must be on (--leader-elect)")
    fails.check(flags.get("--health-probe-bind-address") == ":8081",
                "--health-probe-bind-address=:8081 expected, got %r" % flags.get("--health-probe-bind-address"))
    fails.check(flags.get("--metrics-bind-address") == ":8080",
                "--metrics-bind-address=:8080 expected, got %r" % flags.get("--metrics-bind-address"))
    fails.check(flags.get("--log-format") in (None, "json", "text"), "--log-format must be json or text")
    ctrl = flags.get("--controllers")
    if ctrl is not None:
        fails.check(set(ctrl.split(",")) <= {"agent", "telegraf"}, "--controllers %r" % ctrl)

    env = {e["name"]: e for e in c.get("env", [])}
    for ref in re.findall(r"\$\(([A-Z_]+)\)", " ".join(c.get("args", []))):
        fails.check(ref in env, "argument uses $(%s) but the container has no such env" % ref)

    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = c.get(probe, {}).get("httpGet", {})
        fails.check(get.get("path") == path, "%s path %r, want %s" % (probe, get.get("path"), path))
        fails.check(port_number(c, get.get("port")) == 8081,
                    "%s must use the health port 8081" % probe)
    fails.check(any(p.get("containerPort") == 8080 for p in c.get("ports", [])),
                "container must expose the metrics port 8080")
    res = c.get("resources", {})
    for kind in ("requests", "limits"):
        for r in ("cpu", "memory"):
            fails.check(r in res.get(kind, {}), "resources.%s.%s missing" % (kind, r))
    fails.check(c.get("image", "").startswith("agent-operator"), "image %r" % c.get("image"))
    return dep


def check_service(docs, dep, fails):
    svcs = by_kind(docs, "Service")
    if not fails.check(len(svcs) == 1, "want one Service, found %d" % len(svcs)) or dep is None:
        return
    svc = svcs[0]
    fails.check(svc["metadata"].get("namespace") == NAMESPACE, "Service namespace")
    labels = dep["spec"]["template"]["metadata"].get("labels", {})
    sel = svc["spec"].get("selector", {})
    fails.check(sel and all(labels.get(k) == v for k, v in sel.items()),
                "Service selector %r does not select the operator pods" % sel)
    c = dep["spec"]["template"]["spec"]["containers"][0]
    ports = svc["spec"].get("ports", [])
    fails.check(any(port_number(c, p.get("targetPort", p.get("port"))) == 8080 for p in ports),
                "Service must forward to the metrics port 8080")


def rule_grants(rule):
    for group in rule.get("apiGroups", []):
        for res in rule.get("resources", []):
            yield group, res, set(rule.get("verbs", [])), rule.get("resourceNames")


def check_rbac(docs, dep, fails):
    roles = by_kind(docs, "ClusterRole") + by_kind(docs, "Role")
    granted_cluster, granted_ns = {}, {}
    lease_names = set()
    for role in roles:
        name = "%s %s" % (role["kind"], role["metadata"]["name"])
        if role["kind"] == "Role":
            fails.check(role["metadata"].get("namespace") == NAMESPACE,
                        "%s must live in %s" % (name, NAMESPACE))
        fails.check("aggregationRule" not in role, "%s: no aggregation" % name)
        for i, rule in enumerate(role.get("rules", [])):
            where = "%s rules[%d]" % (name, i)
            for key in ("apiGroups", "resources", "verbs", "resourceNames"):
                fails.check("*" not in rule.get(key, []), "%s: wildcard in %s" % (where, key))
            fails.check(not rule.get("nonResourceURLs"), "%s: nonResourceURLs not needed" % where)
            bad = set(rule.get("verbs", [])) - ALLOWED_VERBS
            fails.check(not bad, "%s: verbs %s beyond %s" % (where, sorted(bad), sorted(ALLOWED_VERBS)))
            for group, res, verbs, names in rule_grants(rule):
                target = granted_ns if role["kind"] == "Role" else granted_cluster
                target.setdefault((group, res), set()).update(verbs)
                if (group, res) == ("coordination.k8s.io", "leases") and names:
                    lease_names.update(names)
    for table, granted, scope in ((EXPECTED_CLUSTER, granted_cluster, "ClusterRole"),
                                  (EXPECTED_NAMESPACED, granted_ns, "Role")):
        for key in sorted(set(granted) | set(table)):
            want, have = table.get(key, set()), granted.get(key, set())
            what = "%s %s/%s" % (scope, key[0] or "core", key[1])
            fails.check(not (have - want), "%s grants %s beyond what the operator uses (%s)"
                        % (what, sorted(have - want), sorted(want)))
            fails.check(not (want - have), "%s lacks %s the operator needs" % (what, sorted(want - have)))
    secret_verbs = granted_cluster.get(("", "secrets"), set())
    fails.check(not secret_verbs & {"patch", "deletecollection"}, "Secrets: no patch/deletecollection")
    if dep is not None:
        flags = flag_args(dep["spec"]["template"]["spec"]["containers"][0].get("args", []))
        lease = flags.get("--leader-election-id")
        fails.check(lease is not None, "Deployment must name its Lease (--leader-election-id)")
        fails.check(lease_names == {lease}, "lease resourceNames %s must be exactly the "
                    "--leader-election-id %r" % (sorted(lease_names), lease))

    role_names = {(r["kind"], r["metadata"]["name"]) for r in roles}
    bindings = by_kind(docs, "ClusterRoleBinding") + by_kind(docs, "RoleBinding")
    bound = set()
    for b in bindings:
        ref = b["roleRef"]
        name = "%s %s" % (b["kind"], b["metadata"]["name"])
        fails.check((ref["kind"], ref["name"]) in role_names, "%s: roleRef %s/%s does not exist"
                    % (name, ref["kind"], ref["name"]))
        bound.add((ref["kind"], ref["name"]))
        for s in b.get("subjects", []):
            fails.check(s.get("kind") == "ServiceAccount" and s.get("name") == "agent-operator"
                        and s.get("namespace") == NAMESPACE,
                        "%s: subject %r is not the operator's ServiceAccount" % (name, s))
    for r in sorted(role_names - bound):
        fails.add("%s %s is bound to nothing" % r)


def cmake_version(src):
    with open(os.path.join(src, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(agent-operator\s+VERSION\s+([0-9.]+)", f.read())
    return m.group(1) if m else None


GRAFANA_CRDS = {"grafanaagents", "metricsinstances", "logsinstances", "podlogs", "integrations"}
PROMETHEUS_OPERATOR_CRDS = {"servicemonitors", "podmonitors", "probes"}
# Values of one organisation that once were defaults; no manifest may carry them.
SITE_SPECIFIC = ("lsst", "monitoring.lsst.codes", "square")


def crd_plurals(docs):
    return {d["spec"]["names"]["plural"] for d in by_kind(docs, "CustomResourceDefinition")}


def container_env(dep):
    return {e["name"]: e for e in dep["spec"]["template"]["spec"]["containers"][0].get("env", [])}


def check_base(docs, fails, what):
    """What the base (and `kubectl apply -k deploy/`) installs: nothing site-specific."""
    fails.check(crd_plurals(docs) == GRAFANA_CRDS, "%s installs CRDs %s, want exactly the "
                "operator's own %s (the Prometheus Operator's are a component)"
                % (what, sorted(crd_plurals(docs)), sorted(GRAFANA_CRDS)))
    dep = check_deployment(docs, fails, replicas=1)
    if dep is not None:
        c = dep["spec"]["template"]["spec"]["containers"][0]
        flags = flag_args(c.get("args", []))
        fails.check(flags.get("--controllers") in (None, "agent"),
                    "%s runs controllers %r; the base runs the Grafana Agent controller only"
                    % (what, flags.get("--controllers")))
        fails.check("AGENT_OPERATOR_CONTROLLERS" not in container_env(dep),
                    "%s sets AGENT_OPERATOR_CONTROLLERS; the base runs the default" % what)
        fails.check(not [f for f in flags if f.startswith("--telegraf-")],
                    "%s passes telegraf flags" % what)
    text = yaml.safe_dump_all([d for d in docs if d.get("kind") != "CustomResourceDefinition"])
    for word in SITE_SPECIFIC:
        fails.check(not re.search(r"\b%s\b" % re.escape(word), text),
                    "%s carries the site-specific value %r" % (what, word))
    fails.check(not by_kind(docs, "PodDisruptionBudget"),
                "%s has a PodDisruptionBudget; with one replica it would block node drains" % what)
    return dep


def check_manifests(src):
    fails = Failures()
    deploy = os.path.join(src, "deploy")
    # Every YAML file under deploy/ parses, and every manifest next to a kustomization is
    # listed in it (a file left out is a file nobody installs).
    for root, dirs, files in os.walk(deploy):
        dirs.sort()
        if os.path.relpath(root, deploy).split(os.sep)[0] == "examples":
            continue
        kust_path = kustomization_file(root)
        listed = set()
        if kust_path:
            kust = (load_yaml_docs(kust_path, fails) or [{}])[0]
            listed = set(kust.get("resources", []))
        for f in sorted(files):
            if not f.endswith((".yaml", ".yml")) or f in KUSTOMIZATION_FILES:
                continue
            path = os.path.join(root, f)
            for doc in load_yaml_docs(path, fails):
                fails.check(isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc,
                            "%s: document without apiVersion/kind" % path)
            fails.check(kust_path is None or f in listed, "deploy/%s is not listed in %s"
                        % (os.path.relpath(path, deploy), os.path.relpath(kust_path, deploy)))
    docs, kust = local_render(os.path.join(deploy, "base"), fails)
    seen = set()
    for d in docs:
        key = (d.get("kind"), d.get("metadata", {}).get("namespace"), d.get("metadata", {}).get("name"))
        fails.check(key not in seen, "duplicate object %s %s/%s" % key)
        seen.add(key)
        ns = d.get("metadata", {}).get("namespace")
        fails.check(ns in (None, NAMESPACE), "%s %s in unexpected namespace %r" % (key[0], key[2], ns))
    kinds = {d.get("kind") for d in docs}
    for k in ("CustomResourceDefinition", "Namespace", "ServiceAccount", "ClusterRole",
              "ClusterRoleBinding", "Role", "RoleBinding", "Deployment", "Service"):
        fails.check(k in kinds, "the base renders no %s" % k)
    fails.check(any(d["metadata"]["name"] == NAMESPACE for d in by_kind(docs, "Namespace")),
                "Namespace %s not created" % NAMESPACE)
    dep = check_base(docs, fails, "deploy/base")
    check_service(docs, dep, fails)
    check_rbac(docs, dep, fails)
    # `kubectl apply -k deploy/` is the base.
    top, _ = local_render(deploy, fails)
    fails.check(top == docs, "deploy/kustomization.yaml must render exactly deploy/base")
    all_crds, _ = local_render(os.path.join(deploy, "crds", "prometheus-operator"), fails)
    fails.check(crd_plurals(all_crds) == PROMETHEUS_OPERATOR_CRDS,
                "deploy/crds/prometheus-operator lists %s" % sorted(crd_plurals(all_crds)))
    version = cmake_version(src)
    tags = [str(i.get("newTag")) for i in (kust or {}).get("images", []) if i.get("name") == "agent-operator"]
    fails.check(tags == [version], "base image tag %s should be the project version %s"
                % (tags, version))
    return fails.report("deploy manifests")


def check_overlay_telegraf(docs, dep, fails, what, src):
    env = container_env(dep)
    fails.check(env.get("AGENT_OPERATOR_CONTROLLERS", {}).get("value") == "agent,telegraf",
                "%s must run both controllers (AGENT_OPERATOR_CONTROLLERS=agent,telegraf)" % what)
    config_maps = {d["metadata"]["name"]: d for d in by_kind(docs, "ConfigMap")}
    for name in ("AGENT_OPERATOR_TELEGRAF_INFLUXDB_URL", "AGENT_OPERATOR_TELEGRAF_INFLUXDB_ORG"):
        ref = env.get(name, {}).get("valueFrom", {}).get("configMapKeyRef")
        if not fails.check(ref is not None, "%s: %s must come from a ConfigMap" % (what, name)):
            continue
        cm = config_maps.get(ref["name"])
        fails.check(cm is not None and cm.get("data", {}).get(ref["key"]),
                    "%s: %s refers to %s/%s, which the overlay does not provide"
                    % (what, name, ref["name"], ref["key"]))
    for ref in (e.get("valueFrom", {}).get("configMapKeyRef") for e in env.values()):
        if ref and not ref.get("optional"):
            fails.check(ref["name"] in config_maps, "%s: ConfigMap %s is not in the overlay"
                        % (what, ref["name"]))


def check_overlay_ha(docs, dep, fails, what, src):
    pdbs = by_kind(docs, "PodDisruptionBudget")
    if not fails.check(len(pdbs) == 1, "%s: want one PodDisruptionBudget, found %d" % (what, len(pdbs))):
        return
    spec = pdbs[0]["spec"]
    fails.check(spec.get("minAvailable") == 1 and "maxUnavailable" not in spec,
                "%s: the PodDisruptionBudget must keep one replica (minAvailable: 1)" % what)
    labels = dep["spec"]["template"]["metadata"]["labels"]
    sel = spec.get("selector", {}).get("matchLabels", {})
    fails.check(sel and all(labels.get(k) == v for k, v in sel.items()),
                "%s: the PodDisruptionBudget selects %r, not the operator's pods" % (what, sel))
    fails.check(pdbs[0]["metadata"].get("namespace") == NAMESPACE, "%s: PDB namespace" % what)


def documented_metrics(src):
    """The metric names of the README's metric table (tests/app checks that table against
    what the binary exports, both ways)."""
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        table = f.read().split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
    names = set()
    for cell in re.findall(r"^\| (`.*?) \|", table, re.M):
        names.update(re.findall(r"`([a-z_:]+)(?:\{[^`]*\})?`", cell))
    return names


PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
                "unless", "bool", "offset", "le", "inf", "nan"}


def promql_metrics(expr):
    """Metric names in a PromQL expression: identifiers that are not functions (followed
    by '('), aggregation modifiers and their label lists, label matchers, ranges, strings
    or numbers."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)         # strings
    text = re.sub(r"\{[^}]*\}", " ", text)                   # label matchers
    text = re.sub(r"\[[^\]]*\]", " ", text)                   # ranges
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", text):
        word = m.group(0)
        if word.lower() in PROMQL_WORDS or text[m.end():].lstrip().startswith("("):
            continue
        names.add(word)
    return names


def base_metric(name):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


# Alerts the operator's PrometheusRule must have, and what they are about.
EXPECTED_ALERTS = {
    "AgentOperatorDown", "AgentOperatorReconcileErrors", "AgentOperatorWorkQueueBacklog",
    "AgentOperatorReconcileStuck", "AgentOperatorCachesDisconnected", "AgentOperatorNoLeader",
    "AgentOperatorRootsNotReady",
}


def check_overlay_monitoring(docs, dep, fails, what, src):
    exported = documented_metrics(src) | {"up"}  # `up` is Prometheus's own
    svc = by_kind(docs, "Service")[0]
    job = svc["metadata"]["name"]
    sms = by_kind(docs, "ServiceMonitor")
    if fails.check(len(sms) == 1, "%s: want one ServiceMonitor, found %d" % (what, len(sms))):
        sm = sms[0]["spec"]
        sel = sm.get("selector", {}).get("matchLabels", {})
        labels = svc["metadata"].get("labels", {})
        fails.check(sel and all(labels.get(k) == v for k, v in sel.items()),
                    "%s: the ServiceMonitor selects %r, not the metrics Service" % (what, sel))
        fails.check(NAMESPACE in sm.get("namespaceSelector", {}).get("matchNames", []),
                    "%s: the ServiceMonitor must look in %s" % (what, NAMESPACE))
        ports = {p.get("name") for p in svc["spec"]["ports"]}
        for ep in sm.get("endpoints", []):
            fails.check(ep.get("port") in ports, "%s: ServiceMonitor port %r is not a Service port %s"
                        % (what, ep.get("port"), sorted(ports)))
    rules = [r for pr in by_kind(docs, "PrometheusRule") for g in pr["spec"]["groups"] for r in g["rules"]]
    alerts = {r.get("alert"): r for r in rules}
    fails.check(set(alerts) == EXPECTED_ALERTS, "%s: alerts %s, want %s"
                % (what, sorted(a for a in alerts if a), sorted(EXPECTED_ALERTS)))
    for name, rule in sorted(alerts.items(), key=lambda kv: str(kv[0])):
        expr = str(rule.get("expr", ""))
        fails.check('job="%s"' % job in expr, "%s: alert %s must select job=\"%s\"" % (what, name, job))
        fails.check(rule.get("for"), "%s: alert %s has no `for`" % (what, name))
        fails.check(rule.get("labels", {}).get("severity") in ("warning", "critical"),
                    "%s: alert %s severity" % (what, name))
        for key in ("summary", "description"):
            fails.check(rule.get("annotations", {}).get(key), "%s: alert %s lacks %s" % (what, name, key))
        for metric in sorted(promql_metrics(expr)):
            fails.check(base_metric(metric) in exported or metric in exported,
                        "%s: alert %s uses %s, which agent-operator does not export"
                        % (what, name, metric))
    dashboards = [d for d in by_kind(docs, "ConfigMap")
                  if d["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]
    if not fails.check(len(dashboards) == 1, "%s: want one dashboard ConfigMap" % what):
        return
    import json
    for key, text in dashboards[0].get("data", {}).items():
        try:
            dash = json.loads(text)
        except ValueError as e:
            fails.add("%s: dashboard %s is not JSON: %s" % (what, key, e))
            continue
        exprs = [t["expr"] for p in dash.get("panels", []) for t in p.get("targets", [])]
        fails.check(len(exprs) >= 10, "%s: dashboard %s has %d queries" % (what, key, len(exprs)))
        for expr in exprs:
            fails.check('job="%s"' % job in expr, "%s: dashboard query %r must select the job"
                        % (what, expr))
            for metric in sorted(promql_metrics(expr)):
                fails.check(base_metric(metric) in exported or metric in exported,
                            "%s: dashboard query uses %s, which agent-operator does not export"
                            % (what, metric))


# Every overlay in deploy/overlays/ and what it must render on top of the base.
OVERLAYS = {
    "prometheus-operator-crds": {"crds": GRAFANA_CRDS | PROMETHEUS_OPERATOR_CRDS},
    "telegraf": {"check": check_overlay_telegraf},
    "ha": {"replicas": 2, "check": check_overlay_ha},
    "monitoring": {"check": check_overlay_monitoring},
}


def kustomize(kubectl, directory, fails):
    proc = subprocess.run([kubectl, "kustomize", directory], capture_output=True, text=True)
    if proc.returncode != 0:
        fails.add("kubectl kustomize %s failed (%d): %s" % (directory, proc.returncode, proc.stderr.strip()))
        return None
    try:
        return [d for d in yaml.safe_load_all(proc.stdout) if d]
    except yaml.YAMLError as e:
        fails.add("kubectl kustomize %s: output is not YAML: %s" % (directory, e))
        return None


def check_kustomize(src):
    kubectl = shutil.which("kubectl") or ("/usr/bin/kubectl" if os.path.exists("/usr/bin/kubectl") else None)
    if not kubectl:
        print("SKIP: kubectl not found; install kubectl to check that `kubectl kustomize` renders "
              "deploy/ and every overlay")
        return SKIP
    fails = Failures()
    deploy = os.path.join(src, "deploy")

    def key(d):
        return (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])

    local, _ = local_render(os.path.join(deploy, "base"), fails)
    for what in ("deploy", "deploy/base"):
        rendered = kustomize(kubectl, os.path.join(src, what), fails)
        if rendered is None:
            continue
        fails.check(sorted(map(key, rendered)) == sorted(map(key, local)),
                    "kustomize renders %s for %s, the files list %s"
                    % (sorted(map(key, rendered)), what, sorted(map(key, local))))
        # The same checks on what kustomize produced, not only on the source files.
        dep = check_base(rendered, fails, what)
        check_service(rendered, dep, fails)
        check_rbac(rendered, dep, fails)
        print("kubectl kustomize %s: %d objects" % (what, len(rendered)))

    overlays = sorted(d for d in os.listdir(os.path.join(deploy, "overlays"))
                      if kustomization_file(os.path.join(deploy, "overlays", d)))
    fails.check(overlays == sorted(OVERLAYS), "deploy/overlays has %s; the test knows %s (add "
                "the new overlay's expectations to OVERLAYS)" % (overlays, sorted(OVERLAYS)))
    used_components = set()
    for name in overlays:
        what = "deploy/overlays/" + name
        want = OVERLAYS.get(name, {})
        with open(kustomization_file(os.path.join(deploy, "overlays", name)), encoding="utf-8") as f:
            kust = yaml.safe_load(f)
        fails.check("../../base" in kust.get("resources", []), "%s must build on ../../base" % what)
        used_components.update(os.path.basename(c) for c in kust.get("components", []))
        rendered = kustomize(kubectl, os.path.join(deploy, "overlays", name), fails)
        if rendered is None:
            continue
        fails.check(crd_plurals(rendered) == want.get("crds", GRAFANA_CRDS),
                    "%s installs CRDs %s" % (what, sorted(crd_plurals(rendered))))
        dep = check_deployment(rendered, fails, replicas=want.get("replicas", 1))
        check_service(rendered, dep, fails)
        check_rbac(rendered, dep, fails)
        if dep is not None and "check" in want:
            want["check"](rendered, dep, fails, what, src)
        if dep is not None and name != "telegraf":
            fails.check("AGENT_OPERATOR_CONTROLLERS" not in container_env(dep),
                        "%s turns on controllers beyond the base's" % what)
        print("kubectl kustomize %s: %d objects" % (what, len(rendered)))
    components = sorted(os.listdir(os.path.join(deploy, "components")))
    fails.check(set(components) <= used_components,
                "components no overlay uses (so none is tested): %s"
                % sorted(set(components) - used_components))
    return fails.report("kubectl kustomize")


# --- Dockerfile -------------------------------------------------------------------------

def setup_packages(src):
    with open(os.path.join(src, "tools", "setup.sh"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^packages=\((.*?)^\)", text, re.S | re.M)
    if not m:
        return None
    body = "\n".join(line.split("#")[0] for line in m.group(1).splitlines())
    return set(shlex.split(body))


def dockerfile_stages(src):
    """[(from-line, [RUN/COPY/... lines joined])] with continuation lines merged."""
    with open(os.path.join(src, "deploy", "Dockerfile"), encoding="utf-8") as f:
        raw = f.read()
    lines, cur = [], ""
    for line in raw.splitlines():
        if line.lstrip().startswith("#") and not cur:
            continue
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        if cur.strip():
            lines.append(cur.strip())
        cur = ""
    args, stages = {}, []
    for line in lines:
        word = line.split(None, 1)[0].upper()
        rest = line.split(None, 1)[1] if " " in line else ""
        if word == "ARG" and not stages and "=" in rest:
            k, v = rest.split("=", 1)
            args[k.strip()] = v.strip()
        elif word == "FROM":
            image = rest.split()[0]
            image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), image)
            stages.append({"image": image, "from": rest, "lines": []})
        elif stages:
            stages[-1]["lines"].append(line)
    return stages


def apt_packages(stage):
    pkgs = set()
    for line in stage["lines"]:
        if line.upper().startswith("RUN") and "apt-get install" in line:
            seg = line.split("apt-get install", 1)[1].split("&&")[0]
            pkgs.update(w for w in seg.split() if not w.startswith("-"))
    return pkgs


# Packages of the Debian base image that every binary may use without installing them.
BASE_PACKAGES = {"libc6", "libstdc++6", "libgcc-s1"}
# Sanitizer runtimes appear only in the asan preset, never in the release image.
SANITIZER_PACKAGES = {"libasan8", "libubsan1", "liblsan0", "libtsan2"}


def check_dockerfile(src, binary):
    fails = Failures()
    stages = dockerfile_stages(src)
    if not fails.check(len(stages) == 2, "Dockerfile must have two stages (build, scratch)"):
        return fails.report("Dockerfile")
    build, final = stages
    fails.check(build["image"] == "debian:bookworm-slim",
                "build stage base %r, want debian:bookworm-slim" % build["image"])
    fails.check(final["image"] == "scratch", "final stage base %r, want scratch (the root "
                "filesystem comes from tools/image.sh --rootfs)" % final["image"])
    setup = setup_packages(src)
    build_pkgs = apt_packages(build)
    if fails.check(setup is not None, "cannot find packages=( ... ) in tools/setup.sh"):
        for p in sorted(build_pkgs - setup - IMAGE_PACKAGES):
            fails.add("Dockerfile build stage installs %s, which neither tools/setup.sh nor "
                      "tools/image.sh needs" % p)
        needed = {p for p in setup if p.endswith("-dev") or p in ("g++", "cmake", "ninja-build", "pkg-config")}
        for p in sorted(needed - build_pkgs):
            fails.add("tools/setup.sh installs build dependency %s; the Dockerfile build stage does not" % p)
    for p in sorted(IMAGE_PACKAGES - build_pkgs):
        fails.add("tools/image.sh --rootfs needs %s; the Dockerfile build stage does not install it" % p)
    build_text = "\n".join(build["lines"])
    fails.check("cmake --preset release" in build_text, "build stage must configure with the release preset")
    fails.check("--preset release" in build_text.split("cmake --build", 1)[-1],
                "build stage must build with the release preset")
    fails.check("-DAOP_REVISION=${REVISION}" in build_text,
                "build stage must pass the REVISION argument to CMake (no .git in the context)")
    fails.check("tools/image.sh --rootfs /rootfs --binary build/release/bin/agent-operator" in build_text,
                "build stage must assemble /rootfs with tools/image.sh --rootfs from the release binary")
    with open(os.path.join(src, "CMakePresets.json"), encoding="utf-8") as f:
        presets = f.read()
    fails.check('"${sourceDir}/build/release"' in presets, "release preset no longer builds in build/release")
    copies = [l for l in final["lines"] if l.upper().startswith("COPY")]
    fails.check(copies == ["COPY --from=build /rootfs/ /"],
                "final stage must copy only the assembled /rootfs, got %s" % copies)
    fails.check(not [l for l in final["lines"] if l.upper().startswith("RUN")],
                "final stage cannot RUN anything (it has no shell)")
    users = [l for l in final["lines"] if l.upper().startswith("USER")]
    fails.check(users and re.fullmatch(r"USER\s+[1-9][0-9]*(:[1-9][0-9]*)?", users[-1]) is not None,
                "final stage must switch to a numeric non-root USER, got %s" % users)
    entry = [l for l in final["lines"] if l.upper().startswith("ENTRYPOINT")]
    fails.check(entry and entry[-1].split(None, 1)[1].startswith("["),
                "ENTRYPOINT must be exec form (no shell at run time)")
    version_args = [l for l in final["lines"] if l.startswith("ARG VERSION=")]
    fails.check(version_args == ["ARG VERSION=%s" % cmake_version(src)],
                "final stage ARG VERSION %s should be the project version %s"
                % (version_args, cmake_version(src)))

    # The binary's libraries must come from packages the build stage installs (image.sh
    # copies them from there).
    if binary:
        if not fails.check(os.path.isfile(binary), "%s not built; build target agent-operator" % binary):
            return fails.report("Dockerfile")
        for tool in ("ldd", "dpkg"):
            fails.check(shutil.which(tool), "%s not found (Debian: libc-bin / dpkg)" % tool)
        if fails.items:
            return fails.report("Dockerfile")
        out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
        libs = re.findall(r"=>\s+(/\S+)", out)
        installed = dependencies(build_pkgs)
        for lib in libs:
            owner = package_of(lib)
            if not fails.check(owner, "%s (linked by agent-operator) belongs to no Debian package" % lib):
                continue
            if owner in BASE_PACKAGES or owner in SANITIZER_PACKAGES:
                continue
            fails.check(owner in installed, "agent-operator links %s from package %s, which the "
                        "Dockerfile build stage does not install" % (lib, owner))
        print("agent-operator links %d shared libraries" % len(libs))
    return fails.report("Dockerfile")


# What tools/image.sh --rootfs reads besides the binary: strip/readelf and the CA bundle.
IMAGE_PACKAGES = {"binutils", "ca-certificates"}


def package_of(path):
    real = os.path.realpath(path)
    for candidate in (path, real, "/usr" + path if not path.startswith("/usr") else path[4:]):
        q = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if q.returncode == 0:
            return q.stdout.split(":", 1)[0]
    return None


def dependencies(packages):
    """The packages and everything they depend on, as installed on this machine."""
    seen, todo = set(), list(packages)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        q = subprocess.run(["dpkg-query", "-W", "-f=${Depends},${Pre-Depends}", p],
                           capture_output=True, text=True)
        for dep in re.split(r"[,|]", q.stdout):
            name = dep.strip().split(" ")[0].split(":")[0]
            if name:
                todo.append(name)
    return seen


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    src, what = os.path.abspath(argv[0]), argv[1]
    if what == "manifests":
        return check_manifests(src)
    if what == "kustomize":
        return check_kustomize(src)
    if what == "dockerfile":
        return check_dockerfile(src, argv[2] if len(argv) > 2 else None)
    print("unknown check %r" % what)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
