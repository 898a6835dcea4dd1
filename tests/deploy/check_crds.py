#!/usr/bin/python3
"""Checks of the project's CRDs in deploy/crds (run by ctest, label "deploy").

    check_crds.py SOURCE_DIR up-to-date       # committed CRDs == generator output
    check_crds.py SOURCE_DIR upstream-fields  # every upstream field path is accepted
    check_crds.py SOURCE_DIR structural       # names, scope, structural-schema rules

Needs /usr/bin/python3 with PyYAML (Debian: python3-yaml). Reads only the repository.
"""

import difflib
import json
import os
import subprocess
import sys
import tempfile

import yaml

EXPECTED_NAMES = {
    # kind: (group, version, plural, singular, categories, shortNames)
    "GrafanaAgent": ("monitoring.grafana.com", "v1alpha1", "grafanaagents", "grafanaagent",
                     ["agent-operator"], None),
    "MetricsInstance": ("monitoring.grafana.com", "v1alpha1", "metricsinstances",
                        "metricsinstance", ["agent-operator"], None),
    "LogsInstance": ("monitoring.grafana.com", "v1alpha1", "logsinstances", "logsinstance",
                     ["agent-operator"], None),
    "PodLogs": ("monitoring.grafana.com", "v1alpha1", "podlogs", "podlogs",
                ["agent-operator"], None),
    "Integration": ("monitoring.grafana.com", "v1alpha1", "integrations", "integration",
                    ["agent-operator"], None),
    "ServiceMonitor": ("monitoring.coreos.com", "v1", "servicemonitors", "servicemonitor",
                       ["prometheus-operator"], ["smon"]),
    "PodMonitor": ("monitoring.coreos.com", "v1", "podmonitors", "podmonitor",
                   ["prometheus-operator"], ["pmon"]),
    "Probe": ("monitoring.coreos.com", "v1", "probes", "probe",
              ["prometheus-operator"], ["prb"]),
}

# Subtrees holding Kubernetes-native types (or free-form config) that our CRDs keep
# as given instead of declaring every member. An upstream field path accepted only
# because an ancestor preserves unknown fields must sit under one of these; anywhere
# else it must be declared (typed), so a field dropped from tools/crdgen/api.py is
# caught even in the Prometheus Operator kinds, which preserve unknown fields
# everywhere.
OPAQUE_SUBTREES = {
    "GrafanaAgent": {
        ".spec.affinity", ".spec.containers[]", ".spec.containers[].env[]",
        ".spec.containers[].env[].valueFrom", ".spec.containers[].ports[]",
        ".spec.containers[].volumeMounts[]", ".spec.initContainers[]",
        ".spec.initContainers[].env[]", ".spec.initContainers[].env[].valueFrom",
        ".spec.initContainers[].ports[]", ".spec.initContainers[].volumeMounts[]",
        ".spec.resources", ".spec.securityContext", ".spec.storage.emptyDir",
        ".spec.storage.ephemeral", ".spec.storage.volumeClaimTemplate.spec",
        ".spec.storage.volumeClaimTemplate.status", ".spec.tolerations[]",
        ".spec.topologySpreadConstraints[]", ".spec.volumeMounts[]", ".spec.volumes[]",
    },
    "Integration": {".spec.config", ".spec.volumeMounts[]", ".spec.volumes[]"},
}

# Where the CRDs refuse more than upstream's: only values the agent (its Prometheus and
# Loki code) or the API server would refuse anyway, so no working object is turned away
# at admission. Each entry: path globs (fnmatch over "Kind .path"), the validation
# keyword, the value it must have (None: any), and why. A difference from upstream that
# no entry covers fails the upstream-fields check.
PROM_DURATION = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
GO_DURATION = r"^([-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+|0)?$"
LABEL_NAME_OR_EMPTY = r"^([a-zA-Z_][a-zA-Z0-9_]*)?$"
HTTP_URL = r"^[hH][tT][tT][pP][sS]?://[^\s/?#]+([/?#]\S*)?$"
PROXY_URL = r"^(([hH][tT][tT][pP][sS]?|[sS][oO][cC][kK][sS]5)://[^\s/?#]+([/?#]\S*)?)?$"
SUBDOMAIN_OR_EMPTY = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$"
TIGHTENED = [
    (["* *.scrapeInterval", "* *.scrapeTimeout", "* *.remoteTimeout", "* *.batchSendDeadline",
      "* *.minBackoff", "* *.maxBackoff", "* *.sendInterval"], "pattern", PROM_DURATION,
     "Prometheus reads these as its own durations and refuses anything else"),
    (["* *.walTruncateFrequency", "* *.minWALTime", "* *.maxWALTime", "* *.remoteFlushDeadline",
      "* *.batchWait", "* *.timeout", "* *.minPeriod", "* *.maxPeriod", "* *.syncPeriod",
      "* *.maxWaitTime", "* *.olderThan", "* *.maxIdleDuration"], "pattern", GO_DURATION,
     "the agent and Loki read these with Go's time.ParseDuration"),
    (["* *ExternalLabelName", "* *.enforcedNamespaceLabel"], "pattern", LABEL_NAME_OR_EMPTY,
     "a Prometheus label name, or empty to disable"),
    (["* *.targetLabel"], "pattern", r"^((([a-zA-Z_]|\$(\{\w+\}|\w+))+\w*)+)?$",
     "Prometheus refuses other relabel targets"),
    (["* *.url", "* *.tokenUrl"], "pattern", HTTP_URL,
     "remote write, Loki and OAuth2 token endpoints are http or https URLs with a host"),
    (["* *.proxyUrl"], "pattern", PROXY_URL, "Go's HTTP client proxies: http, https, socks5"),
    (["Probe .spec.prober.url"], "pattern", r"^([^\s/:@?#\[\]]+|\[[0-9a-fA-F:.]+\])(:[0-9]{1,5})?$",
     "the prober address becomes __address__, which Prometheus refuses with a scheme or path"),
    (["* *.path"], "pattern", r"^(/.*)?$", "an HTTP path starts with /"),
    (["* *.matchExpressions[].operator"], "enum", ["In", "NotIn", "Exists", "DoesNotExist"],
     "the only label selector operators; upstream silently drops a rule with another"),
    (["GrafanaAgent .spec.logLevel"], "pattern", r"^(debug|info|warn|error)?$", "the agent's log levels"),
    (["GrafanaAgent .spec.logFormat"], "pattern", r"^(logfmt|json)?$", "the agent's log formats"),
    (["GrafanaAgent .spec.serviceAccountName", "GrafanaAgent .spec.priorityClassName",
      "GrafanaAgent .spec.runtimeClassName"], "pattern", SUBDOMAIN_OR_EMPTY,
     "the API server refuses pods naming objects that cannot exist"),
    (["GrafanaAgent .spec.serviceAccountName", "GrafanaAgent .spec.priorityClassName",
      "GrafanaAgent .spec.runtimeClassName"], "maxLength", 253, "subdomain names"),
    (["GrafanaAgent .spec.portName"], "pattern", r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$",
     "a container port name (IANA service name)"),
    (["GrafanaAgent .spec.portName"], "maxLength", 15, "a container port name (IANA service name)"),
    (["Integration .spec.name"], "pattern", r"^[a-z][a-z0-9_]*$",
     "it becomes the configuration key <name>_configs"),
    (["PodLogs *.match.action"], "pattern", r"^(keep|drop)?$", "Loki's match actions"),
    (["PodLogs *.timestamp.actionOnFailure"], "pattern", r"^(fudge|skip)?$", "Loki's timestamp stage"),
    (["PodLogs *.metrics{}.type"], "pattern", r"^(?i)(counter|gauge|histogram)$", "Loki's metric types"),
    (["GrafanaAgent .spec.metrics.shards", "GrafanaAgent .spec.metrics.replicas"], "maximum", 1000,
     "a bound per root (README, What the operator validates)"),
    (["* *Limit", "* *.modulus"], "maximum", 9007199254740992,
     "the agent's configuration holds numbers as float64, exact up to 2^53"),
    (["* *Limit", "* *.modulus", "* *.queueConfig.*", "* *.batchSize", "* *.maxRetries",
      "PodLogs *.maxLines"], "minimum", 0, "negative counts and sizes"),
    (["* *.queueConfig.capacity", "* *.queueConfig.maxSamplesPerSend"], "maximum", 10000000,
     "bounds on remote write queue memory"),
    (["* *.queueConfig.minShards", "* *.queueConfig.maxShards"], "maximum", 10000,
     "bounds on remote write queue shards"),
    (["* *.batchSize"], "maximum", 67108864, "a bound on Loki batch memory"),
    (["PodLogs *.limit.rate", "PodLogs *.limit.burst"], "minimum", 1, "Loki's limit stage needs both above 0"),
    (["* *.remoteWrite", "* *.clients", "* *.endpoints", "* *.podMetricsEndpoints",
      "* *.pipelineStages", "* *elabelings", "* *elabelConfigs", "* *elabelingConfigs",
      "* *.sourceLabels"], "maxItems", None,
     "bounds on list lengths, which also bound the cost of the CEL rules below them"),
]

# Cross-field rules (x-kubernetes-validations), by message, with why.
CEL_RULES = {
    "this relabel action needs a targetLabel": "Prometheus' relabel validation",
    "the hashmod action needs a modulus greater than 0": "Prometheus' relabel validation",
    "set either secret or configMap, not both": "one source per value (the Prometheus Operator refuses both)",
    "set both accessKey and secretKey, or neither": "Prometheus' sigv4 configuration",
    "minShards must not be above maxShards": "remote write queue configuration",
    "set bearerToken or bearerTokenFile, not both": "Prometheus' HTTP client configuration",
    "set at most one of basicAuth, oauth2, bearerToken/bearerTokenFile and sigv4":
        "Prometheus' HTTP client configuration",
    "set at most one of basicAuth, oauth2 and bearerToken/bearerTokenFile":
        "Prometheus' HTTP client configuration (Loki clients)",
    "shards × replicas must be at most 1000 metrics pods": "a bound per root",
    "set exactly one of label, source or value": "Loki's tenant stage",
    "a pipeline stage sets at most one stage kind; split it into separate list items":
        "Loki refuses a pipeline stage with several keys",
    "a Probe needs targets.staticConfig or targets.ingress": "a Probe without targets renders nothing",
}


def tightening_allowed(kind, path, key, value):
    import fnmatch
    where = "%s %s" % (kind, path)
    for globs, k, want, _ in TIGHTENED:
        if k != key or not any(fnmatch.fnmatchcase(where, g) for g in globs):
            continue
        if want is None or want == value:
            return True
    return False


RELABEL_ACTIONS = {
    "replace", "Replace", "keep", "Keep", "drop", "Drop", "hashmod", "HashMod", "labelmap",
    "LabelMap", "labeldrop", "LabelDrop", "labelkeep", "LabelKeep", "lowercase", "Lowercase",
    "uppercase", "Uppercase", "keepequal", "KeepEqual", "dropequal", "DropEqual",
}


class Failures:
    def __init__(self):
        self.items = []

    def add(self, msg):
        self.items.append(msg)

    def report(self, what):
        if self.items:
            for m in self.items[:200]:
                print("FAIL: " + m)
            if len(self.items) > 200:
                print("... and %d more" % (len(self.items) - 200))
            print("%s: %d problem(s)" % (what, len(self.items)))
            return 1
        print("%s: ok" % what)
        return 0


def yaml_files(top):
    """The *.yaml files below `top`, as paths relative to it (the Prometheus Operator's
    CRDs are in a subdirectory)."""
    out = []
    for root, _, files in os.walk(top):
        out += [os.path.relpath(os.path.join(root, f), top) for f in files if f.endswith(".yaml")]
    return sorted(out)


def load_crds(crd_dir):
    """kind -> (file name, CRD document)."""
    crds = {}
    for name in yaml_files(crd_dir):
        with open(os.path.join(crd_dir, name), encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    crds[doc["spec"]["names"]["kind"]] = (name, doc)
    return crds


def root_schema(crd):
    versions = crd["spec"]["versions"]
    return versions[0]["schema"]["openAPIV3Schema"]


# --- up-to-date -----------------------------------------------------------------------

def check_up_to_date(src):
    fails = Failures()
    committed = os.path.join(src, "deploy", "crds")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, os.path.join(src, "tools", "crdgen", "crdgen.py"),
                               "--out", tmp], capture_output=True, text=True)
        if proc.returncode != 0:
            fails.add("crdgen.py failed (%d): %s" % (proc.returncode, proc.stderr.strip()))
            return fails.report("CRDs up to date")
        generated = yaml_files(tmp)
        existing = yaml_files(committed)
        for name in sorted(set(generated) - set(existing)):
            fails.add("deploy/crds/%s is missing (run tools/crdgen/crdgen.py)" % name)
        for name in sorted(set(existing) - set(generated)):
            fails.add("deploy/crds/%s is not produced by the generator (stale?)" % name)
        for name in sorted(set(generated) & set(existing)):
            with open(os.path.join(tmp, name), encoding="utf-8") as f:
                want = f.read()
            with open(os.path.join(committed, name), encoding="utf-8") as f:
                have = f.read()
            if want != have:
                diff = "".join(list(difflib.unified_diff(
                    have.splitlines(True), want.splitlines(True),
                    "deploy/crds/" + name + " (committed)", name + " (generated)"))[:40])
                fails.add("deploy/crds/%s differs from tools/crdgen output; run "
                          "/usr/bin/python3 tools/crdgen/crdgen.py and commit:\n%s" % (name, diff))
    return fails.report("CRDs up to date")


# --- upstream-fields ------------------------------------------------------------------

def split_path(path):
    """'.spec.a[].b{}' -> ['spec', 'a', '[]', 'b', '{}']"""
    if path == ".":
        return []
    out = []
    i = 0
    while i < len(path):
        if path.startswith("[]", i):
            out.append("[]")
            i += 2
        elif path.startswith("{}", i):
            out.append("{}")
            i += 2
        elif path[i] == ".":
            j = i + 1
            while j < len(path) and path[j] not in ".[{":
                j += 1
            out.append(path[i + 1:j])
            i = j
        else:
            raise ValueError("bad path " + path)
    return out


def resolve(schema, segments):
    """Follows segments through our schema.

    Returns ("node", schema) when the path is declared, ("preserved", ancestor path)
    when an ancestor keeps unknown fields, or ("missing", reason)."""
    node = schema
    walked = ""
    for seg in segments:
        if seg == "[]":
            if node.get("type") != "array" or not isinstance(node.get("items"), dict):
                if node.get("x-kubernetes-preserve-unknown-fields") and "type" not in node:
                    return ("preserved", walked or ".")
                return ("missing", "%s is not a list here" % (walked or "."))
            node = node["items"]
            walked += "[]"
        elif seg == "{}":
            if isinstance(node.get("additionalProperties"), dict):
                node = node["additionalProperties"]
                walked += "{}"
            elif node.get("x-kubernetes-preserve-unknown-fields"):
                return ("preserved", walked or ".")
            else:
                return ("missing", "%s does not accept arbitrary keys" % (walked or "."))
        else:
            props = node.get("properties", {})
            if seg in props:
                node = props[seg]
                walked += "." + seg
            elif node.get("x-kubernetes-preserve-unknown-fields"):
                return ("preserved", walked or ".")
            else:
                return ("missing", "field %r is not declared under %s and would be pruned"
                        % (seg, walked or "."))
    return ("node", node)


def our_type(node):
    if node.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    return node.get("type", "any")


def type_accepts(ours, theirs):
    if ours == "any" or ours == theirs:
        return True
    if ours == "int-or-string" and theirs in ("integer", "string"):
        return True
    if ours == "number" and theirs == "integer":
        return True
    return False


def validation_problems(node, theirs, kind="", path=""):
    """Ways our node rejects values the upstream node accepts (or stores them differently),
    except the tightenings listed in TIGHTENED."""
    out = []
    allowed = lambda key: tightening_allowed(kind, path, key, node.get(key))  # noqa: E731
    if "enum" in node and not allowed("enum"):
        if "enum" not in theirs:
            out.append("enum %s where upstream has none" % node["enum"])
        else:
            missing = [v for v in theirs["enum"] if v not in node["enum"]]
            if missing:
                out.append("enum lacks upstream values %s" % missing)
    for key in ("pattern", "format", "x-kubernetes-list-type", "x-kubernetes-list-map-keys"):
        if key in node and node[key] != theirs.get(key) and not allowed(key):
            out.append("%s %r differs from upstream %r" % (key, node[key], theirs.get(key)))
    for key in ("minLength", "minimum", "minItems", "minProperties"):
        if key in node and node[key] > theirs.get(key, float("-inf")) and not allowed(key):
            out.append("%s %r stricter than upstream %r" % (key, node[key], theirs.get(key)))
    for key in ("maxLength", "maximum", "maxItems", "maxProperties"):
        if key in node and node[key] < theirs.get(key, float("inf")) and not allowed(key):
            out.append("%s %r stricter than upstream %r" % (key, node[key], theirs.get(key)))
    for key in ("exclusiveMinimum", "exclusiveMaximum"):
        if node.get(key) and not theirs.get(key):
            out.append("%s where upstream has none" % key)
    extra_required = sorted(set(node.get("required", [])) - set(theirs.get("required", [])))
    if extra_required:
        out.append("requires %s which upstream does not" % extra_required)
    if "default" in theirs and node.get("default") != theirs["default"]:
        out.append("default %r, upstream defaults to %r" % (node.get("default"), theirs["default"]))
    if "default" in node and "default" not in theirs:
        out.append("default %r where upstream has none" % node["default"])
    return out


def check_upstream_fields(src):
    fails = Failures()
    crds = load_crds(os.path.join(src, "deploy", "crds"))
    fixture = os.path.join(src, "tests", "deploy", "fixtures", "upstream-crd-fields.tsv")
    counts = {"node": 0, "preserved": 0}
    with open(fixture, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    for kind, path, theirs_type, theirs_json in rows:
        if kind not in crds:
            fails.add("%s: no CRD for this kind in deploy/crds" % kind)
            continue
        theirs = json.loads(theirs_json)
        status, found = resolve(root_schema(crds[kind][1]), split_path(path))
        if status == "missing":
            fails.add("%s %s: %s" % (kind, path, found))
            continue
        counts[status] += 1
        if status == "preserved":
            if found not in OPAQUE_SUBTREES.get(kind, ()):
                fails.add("%s %s: only kept because %s preserves unknown fields; declare it "
                          "in tools/crdgen/api.py" % (kind, path, found))
            continue
        if not type_accepts(our_type(found), theirs_type):
            fails.add("%s %s: type %s, upstream %s" % (kind, path, our_type(found), theirs_type))
        for problem in validation_problems(found, theirs, kind, path):
            fails.add("%s %s: %s" % (kind, path, problem))
    if len(rows) < 2000:
        fails.add("fixture has only %d rows; expected the full upstream field list" % len(rows))
    print("%d upstream paths: %d declared, %d kept by a preserve-unknown-fields ancestor"
          % (len(rows), counts["node"], counts["preserved"]))
    return fails.report("upstream fields accepted")


# --- structural -----------------------------------------------------------------------

def check_schema_node(node, path, fails, kind, in_anyof=False):
    """Rules of structural schemas (Kubernetes 'Specifying a structural schema')."""
    where = "%s %s" % (kind, path or ".")
    if not isinstance(node, dict):
        fails.add("%s: schema node is not a mapping" % where)
        return
    typed = "type" in node
    int_or_string = node.get("x-kubernetes-int-or-string")
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if not typed and not in_anyof and not int_or_string and not preserve:
        fails.add("%s: no type (structural schemas need one)" % where)
    if int_or_string:
        if typed:
            fails.add("%s: int-or-string with a type" % where)
        if node.get("anyOf") != [{"type": "integer"}, {"type": "string"}]:
            fails.add("%s: int-or-string needs anyOf [integer, string]" % where)
    elif "anyOf" in node or "allOf" in node or "oneOf" in node:
        fails.add("%s: anyOf/allOf/oneOf are only used for int-or-string here" % where)
    if "properties" in node and "additionalProperties" in node:
        fails.add("%s: properties and additionalProperties together" % where)
    if node.get("type") == "array" and not isinstance(node.get("items"), dict):
        fails.add("%s: array without items" % where)
    if ("properties" in node or "additionalProperties" in node) and node.get("type") != "object":
        fails.add("%s: properties on a non-object" % where)
    if preserve and typed and node["type"] != "object":
        fails.add("%s: x-kubernetes-preserve-unknown-fields on a %s" % (where, node["type"]))
    for req in node.get("required", []):
        if req not in node.get("properties", {}):
            fails.add("%s: required %r is not a declared property" % (where, req))
    if "enum" in node and "default" in node and node["default"] not in node["enum"]:
        fails.add("%s: default %r not in enum" % (where, node["default"]))
    if node.get("x-kubernetes-list-type") == "map":
        item = node.get("items", {})
        for key in node.get("x-kubernetes-list-map-keys", []):
            prop = item.get("properties", {}).get(key)
            if prop is None or (key not in item.get("required", []) and "default" not in prop):
                fails.add("%s: list-map key %r must be a required or defaulted property"
                          % (where, key))
    for name, child in node.get("properties", {}).items():
        check_schema_node(child, path + "." + name, fails, kind)
    if isinstance(node.get("items"), dict):
        check_schema_node(node["items"], path + "[]", fails, kind)
    if isinstance(node.get("additionalProperties"), dict):
        check_schema_node(node["additionalProperties"], path + "{}", fails, kind)
    for sub in node.get("anyOf", []):
        check_schema_node(sub, path + "(anyOf)", fails, kind, in_anyof=True)
    for rule in node.get("x-kubernetes-validations", []):
        if not isinstance(rule.get("rule"), str) or not isinstance(rule.get("message"), str):
            fails.add("%s: a validation rule needs rule and message strings" % where)
        elif rule["message"] not in CEL_RULES:
            fails.add("%s: CEL rule %r is not listed (with its reason) in CEL_RULES"
                      % (where, rule["message"]))


def find_relabel_actions(node, path, out):
    props = node.get("properties", {})
    if "action" in props and "sourceLabels" in props:
        out.append((path, props["action"]))
    for name, child in props.items():
        find_relabel_actions(child, path + "." + name, out)
    if isinstance(node.get("items"), dict):
        find_relabel_actions(node["items"], path + "[]", out)
    if isinstance(node.get("additionalProperties"), dict):
        find_relabel_actions(node["additionalProperties"], path + "{}", out)


def check_structural(src):
    fails = Failures()
    crd_dir = os.path.join(src, "deploy", "crds")
    crds = load_crds(crd_dir)
    for kind in sorted(set(EXPECTED_NAMES) - set(crds)):
        fails.add("%s: missing from deploy/crds" % kind)
    for kind in sorted(set(crds) - set(EXPECTED_NAMES)):
        fails.add("%s: unexpected CRD" % kind)
    for kind, (fname, crd) in sorted(crds.items()):
        if kind not in EXPECTED_NAMES:
            continue
        group, version, plural, singular, categories, short = EXPECTED_NAMES[kind]
        where = "%s (%s)" % (kind, fname)
        if crd.get("apiVersion") != "apiextensions.k8s.io/v1":
            fails.add("%s: apiVersion %r" % (where, crd.get("apiVersion")))
        spec = crd["spec"]
        names = spec["names"]
        if crd["metadata"]["name"] != plural + "." + group:
            fails.add("%s: metadata.name %r" % (where, crd["metadata"]["name"]))
        want_name = "%s_%s.yaml" % (group, plural)
        if group == "monitoring.coreos.com":  # read-only kinds: a kustomization of their own
            want_name = os.path.join("prometheus-operator", want_name)
        if fname != want_name:
            fails.add("%s: file name should be %s" % (where, want_name))
        for key, want in (("group", group), ("scope", "Namespaced")):
            if spec.get(key) != want:
                fails.add("%s: spec.%s %r, want %r" % (where, key, spec.get(key), want))
        for key, want in (("plural", plural), ("singular", singular), ("kind", kind),
                          ("listKind", kind + "List"), ("categories", categories),
                          ("shortNames", short)):
            if names.get(key) != want:
                fails.add("%s: names.%s %r, want %r" % (where, key, names.get(key), want))
        versions = spec.get("versions", [])
        if [v.get("name") for v in versions] != [version]:
            fails.add("%s: versions %r, want exactly %s" % (where, [v.get("name") for v in versions], version))
            continue
        v = versions[0]
        if not (v.get("served") and v.get("storage")):
            fails.add("%s: version must be served and stored" % where)
        root = v["schema"]["openAPIV3Schema"]
        check_schema_node(root, "", fails, kind)
        meta = root.get("properties", {}).get("metadata", {})
        if set(meta) - {"type"}:
            fails.add("%s: metadata schema may only say type: object" % where)
        if kind == "GrafanaAgent":
            if v.get("subresources", {}).get("status") != {}:
                fails.add("%s: needs the status subresource" % where)
            status = root.get("properties", {}).get("status")
            if not status:
                fails.add("%s: no status schema" % where)
            else:
                cond = status.get("properties", {}).get("conditions", {}).get("items", {})
                for field in ("type", "status", "reason", "message", "observedGeneration",
                              "lastTransitionTime"):
                    if field not in cond.get("properties", {}):
                        fails.add("%s: status.conditions[] lacks %s" % (where, field))
            cols = {c["name"]: c for c in v.get("additionalPrinterColumns", [])}
            for col in ("Ready", "Reconciled", "Age"):
                if col not in cols:
                    fails.add("%s: printer column %s missing" % (where, col))
            if cols.get("Ready", {}).get("jsonPath") != '.status.conditions[?(@.type=="Ready")].status':
                fails.add("%s: Ready column should show the Ready condition status" % where)
        elif "status" in v.get("subresources", {}):
            fails.add("%s: only GrafanaAgent has a status subresource" % where)
        actions = []
        find_relabel_actions(root, "", actions)
        if kind not in ("LogsInstance", "Integration") and not actions:
            fails.add("%s: no RelabelConfig found" % where)
        for path, action in actions:
            if action.get("default") != "replace" or set(action.get("enum", [])) != RELABEL_ACTIONS:
                fails.add("%s %s.action: enum must be upstream's lower/CamelCase list with "
                          "default replace" % (kind, path))
    return fails.report("CRDs structural")


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    src, what = argv
    checks = {"up-to-date": check_up_to_date, "upstream-fields": check_upstream_fields,
              "structural": check_structural}
    if what not in checks:
        print("unknown check %r; one of %s" % (what, ", ".join(checks)))
        return 2
    return checks[what](os.path.abspath(src))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
