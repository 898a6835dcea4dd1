#!/usr/bin/env bash
# The demo: agent-operator doing its job against a simulated cluster, on this machine.
#
# Installs what is missing and builds (tools/setup.sh), starts kube-sim (a Kubernetes
# API server simulator) on a free loopback port, installs the CRDs and
# deploy/examples/, runs agent-operator against it, and shows what the operator made
# of the examples: the objects per root, the generated agent.yml and telegraf.conf,
# status conditions, metrics, and a live edit of a ServiceMonitor. Everything it
# starts is stopped on exit, whatever happens. Nothing touches a real cluster.
#
#   tools/demo.sh [--non-interactive] [--no-setup] [--bin-dir DIR] [--without-kubectl]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin_dir=""
interactive=1
setup=1
use_kubectl=1

usage() {
  cat <<'EOF'
Usage: tools/demo.sh [options]

Runs agent-operator against kube-sim, a simulated Kubernetes API server on 127.0.0.1,
with the examples of deploy/examples/, and prints what the operator does.

Options:
  --non-interactive   never pause between sections (also when stdin is not a terminal)
  --no-setup          do not install packages or build; use the binaries in --bin-dir
  --bin-dir DIR       where agent-operator and kube-sim are (default: build/bin)
  --without-kubectl   install the examples through kube-sim's API even when kubectl
                      is available (kubectl is never required)
  -h, --help          this text
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --non-interactive) interactive=0; shift ;;
    --no-setup) setup=0; shift ;;
    --bin-dir) bin_dir=$(cd "$2" && pwd); shift 2 ;;
    --bin-dir=*) bin_dir=$(cd "${1#*=}" && pwd); shift ;;
    --without-kubectl) use_kubectl=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "demo.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -t 0 ] || interactive=0
kubectl_bin=/usr/bin/kubectl
[ -x "$kubectl_bin" ] || use_kubectl=0

# Every AGENT_OPERATOR_* variable would change the operator's flags: the demo runs with
# its own, whatever the environment holds.
for v in $(compgen -e); do
  case "$v" in AGENT_OPERATOR_*|POD_NAMESPACE|POD_NAME) unset "$v" ;; esac
done

# ---- presentation --------------------------------------------------------------------

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  bold=$'\e[1m' dim=$'\e[2m' green=$'\e[32m' red=$'\e[31m' reset=$'\e[0m'
else
  bold="" dim="" green="" red="" reset=""
fi
sections=14
section_no=0
section() {
  ((++section_no))
  local title="$section_no/$sections  $1" rule="" i
  # A character count that does not depend on the locale: the title is ASCII.
  for ((i = ${#title}; i < 72; i++)); do rule+="─"; done
  printf '\n%s── %s %s%s\n' "$bold" "$title" "$rule" "$reset"
}
say() { printf '  %s\n' "$*"; }
cmd() { printf '  %s$ %s%s\n' "$dim" "$*" "$reset"; }
more() { printf '  %s    %s%s\n' "$dim" "$*" "$reset"; }  # a command's next line
indent() { sed '/./s/^/    /'; }   # what a command prints
indent2() { sed '/./s/^/  /'; }   # the demo's own tables
pause() {
  [ "$interactive" -eq 1 ] || return 0
  printf '\n  %s[Enter] to continue, Ctrl-C to stop%s ' "$dim" "$reset"
  read -r _ || true
}
fail() {
  printf '\n  %sdemo failed: %s%s\n' "$red" "$*" "$reset" >&2
  exit 1
}
# Times in microseconds, and "seconds since" into a variable. No command substitution
# from here on: bash 5.2 can run a Ctrl-C trap while parsing one and then fail with a
# syntax error instead of exiting cleanly.
now() { printf -v "$1" '%s' "${EPOCHREALTIME/[.,]/}"; }
seconds_since() {
  local d=$((${EPOCHREALTIME/[.,]/} - $2))
  printf -v "$1" '%d.%d' $((d / 1000000)) $((d / 100000 % 10))
}
# Sets the variable $1 to the first capture group of the regex $2 in file $3, or "".
first_match() {
  local line
  printf -v "$1" '%s' ""
  [ -f "$3" ] || return 0
  while IFS= read -r line; do
    if [[ $line =~ $2 ]]; then
      printf -v "$1" '%s' "${BASH_REMATCH[1]}"
      return 0
    fi
  done <"$3"
}

# ---- processes and clean-up ----------------------------------------------------------

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agent-operator-demo.XXXXXX")
sim_pid=""
op_pid=""
after_build="" op_start="" stop_start="" took=""  # set by now / seconds_since

# Stops one process we started: SIGTERM, up to 10 s, then SIGKILL.
stop_process() {
  local pid=$1 i
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [ "$status" -eq 130 ] || [ "$status" -eq 143 ]; then
    printf '\n  interrupted: stopping what the demo started\n' >&2
  elif [ "$status" -ne 0 ]; then
    for log in operator.log kube-sim.log; do
      if [ -s "$tmp/$log" ]; then
        printf '\n  last lines of %s:\n' "$log" >&2
        tail -n 15 "$tmp/$log" | sed 's/^/    /' >&2
      fi
    done
  fi
  stop_process "$op_pid"
  stop_process "$sim_pid"
  rm -rf "$tmp"
  exit "$status"
}
interrupted() { exit "$1"; }
trap cleanup EXIT
trap 'interrupted 130' INT
trap 'interrupted 143' TERM

# The small Kubernetes client the demo uses to read results (and to install the
# examples when kubectl is absent): Python 3 standard library and PyYAML only.
cat >"$tmp/kube.py" <<'PY'
import base64, gzip, json, os, re, sys, textwrap, time, urllib.error, urllib.request
import yaml

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only

def req(method, url, body=None, ctype="application/json"):
    data = None if body is None else json.dumps(body).encode()
    r = urllib.request.Request(url, data=data, method=method)
    r.add_header("Accept", "application/json")
    if data is not None:
        r.add_header("Content-Type", ctype)
    try:
        with OPENER.open(r, timeout=10) as resp:
            raw = resp.read()
            status = resp.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode(errors="replace")

def get(url):
    status, body = req("GET", url)
    return body if status == 200 else None

def items(url):
    body = get(url)
    return body.get("items", []) if body else []

def wrap(text, width):
    """Lines of at most `width`, broken after "; " where possible, else at spaces."""
    lines = [""]
    for part in text.split("; "):
        joined = lines[-1] + ("; " if lines[-1] else "") + part
        if len(joined) <= width or not lines[-1]:
            lines[-1] = joined
        else:
            lines[-1] += ";"
            lines.append(part)
    return [l for line in lines for l in (textwrap.wrap(line, width) or [""])]

def table(rows, indent="", width=108):
    """Aligned columns; the last one wraps (at "; " where it can) to fit `width`."""
    if not rows:
        return
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]) - 1)]
    left = len(indent) + sum(w + 2 for w in widths)
    for r in rows:
        last = wrap(str(r[-1]), max(30, width - left))
        cells = [str(c).ljust(w) for c, w in zip(r, widths)]
        print((indent + "  ".join(cells + [last[0]])).rstrip())
        for more in last[1:]:
            print(" " * left + more.strip())

def size(n):
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"

def secret_value(base, ns, name, key):
    s = get(f"{base}/api/v1/namespaces/{ns}/secrets/{name}")
    if not s or key not in (s.get("data") or {}):
        return None
    raw = base64.b64decode(s["data"][key])
    if raw[:2] == b"\x1f\x8b":  # configurations over 100 KiB are stored gzipped
        raw = gzip.decompress(raw)
    return raw.decode()

# ---- installing without kubectl -----------------------------------------------------

def discover(base):
    found = {}
    for r in (get(base + "/api/v1") or {}).get("resources", []):
        if "/" not in r["name"]:
            found[("v1", r["kind"])] = (base + "/api/v1", r["name"], r["namespaced"])
    for g in (get(base + "/apis") or {}).get("groups", []):
        for v in g["versions"]:
            gv = v["groupVersion"]
            for r in (get(f"{base}/apis/{gv}") or {}).get("resources", []):
                if "/" not in r["name"]:
                    found[(gv, r["kind"])] = (f"{base}/apis/{gv}", r["name"], r["namespaced"])
    return found

def load(paths):
    docs = []
    for p in paths:
        files = [p]
        if os.path.isdir(p):  # like kubectl -f DIR: the directory's own files, in order
            files = [os.path.join(p, f) for f in sorted(os.listdir(p))
                     if f.endswith((".yaml", ".yml", ".json"))]
        for f in files:
            with open(f) as fh:
                docs += [d for d in yaml.safe_load_all(fh) if d]
    rank = {"CustomResourceDefinition": 0, "Namespace": 1}
    return sorted(docs, key=lambda d: rank.get(d["kind"], 2))  # stable

def apply(base, *paths):
    kinds = discover(base)
    for doc in load(paths):
        key = (doc["apiVersion"], doc["kind"])
        deadline = time.monotonic() + 10
        while key not in kinds and time.monotonic() < deadline:
            time.sleep(0.1)  # a CRD created just before: wait until it is served
            kinds = discover(base)
        if key not in kinds:
            sys.exit(f"error: no kind {doc['kind']} in {doc['apiVersion']} is served")
        prefix, plural, namespaced = kinds[key]
        meta = doc["metadata"]
        coll = prefix + (f"/namespaces/{meta.get('namespace', 'default')}" if namespaced else "")
        coll += "/" + plural
        group = doc["apiVersion"].rpartition("/")[0]
        what = doc["kind"].lower() + ("." + group if group else "") + "/" + meta["name"]
        status, body = req("POST", coll + "?fieldValidation=Strict", doc)
        if status == 409 and isinstance(body, dict) and body.get("reason") == "AlreadyExists":
            current = get(f"{coll}/{meta['name']}")
            rv = current["metadata"]["resourceVersion"]
            doc = dict(doc, metadata=dict(meta, resourceVersion=rv))
            status, body = req("PUT", f"{coll}/{meta['name']}?fieldValidation=Strict", doc)
            if status == 200:
                changed = body["metadata"]["resourceVersion"] != rv
                print(what, "configured" if changed else "unchanged")
                continue
        elif status in (200, 201):
            print(what, "created")
            continue
        message = body.get("message") if isinstance(body, dict) else body
        sys.exit(f"error: {what}: {message}")

def patch(base, path, body):
    status, out = req("PATCH", base + path, json.loads(body), "application/merge-patch+json")
    if status != 200:
        sys.exit(f"error: PATCH {path}: {out.get('message') if isinstance(out, dict) else out}")

# ---- reading results ----------------------------------------------------------------

AGENT_API = "/apis/monitoring.grafana.com/v1alpha1"
TELEGRAF_SELECTOR = "labelSelector=app.kubernetes.io%2Fmanaged-by%3Drubin-telegraf-operator"

def agent(base, ns, name):
    return get(f"{base}{AGENT_API}/namespaces/{ns}/grafanaagents/{name}")

def conditions(obj):
    return {c["type"]: c for c in ((obj or {}).get("status") or {}).get("conditions", [])}

def wait_reconciled(base, ns, name, telegraf_namespaces, since, timeout):
    """Until the agent reports Reconciled=True for its generation and telegraf has
    written its ConfigMap into every expected namespace."""
    wanted = [n for n in telegraf_namespaces.split(",") if n]
    deadline = time.monotonic() + float(timeout)
    while True:
        a = agent(base, ns, name)
        c = conditions(a)
        r = c.get("Reconciled", {})
        done = (r.get("status") == "True" and
                r.get("observedGeneration") == a["metadata"].get("generation"))
        have = {cm["metadata"]["namespace"] for cm in items(f"{base}/api/v1/configmaps?{TELEGRAF_SELECTOR}")}
        if done and all(n in have for n in wanted):
            break
        if time.monotonic() > deadline:
            state = ", ".join(f"{t}={v.get('status')} ({v.get('reason')}: {v.get('message')})"
                              for t, v in c.items()) or "no status yet"
            sys.exit(f"error: GrafanaAgent {ns}/{name} not reconciled after {timeout} s: {state}; "
                     f"telegraf ConfigMaps in: {', '.join(sorted(have)) or 'none'}")
        time.sleep(0.1)
    took = time.time() - int(since) / 1e6
    ready = c.get("Ready", {}).get("status", "Unknown")
    print(f"GrafanaAgent {ns}/{name}: Reconciled=True Ready={ready} "
          f"backend={(a.get('status') or {}).get('backend', '?')}  "
          f"({took:.1f} s after the operator started)")
    if wanted:
        print(f"telegraf: ConfigMap and Deployment rubin-telegraf in {', '.join(wanted)}")

def integration_names(base, ns, secret):
    text = secret_value(base, ns, secret, "agent.yml") or ""
    section = (yaml.safe_load(text) or {}).get("integrations") or {}
    return ", ".join(k[:-len("_configs")] for k in section if k.endswith("_configs")) or "none"

def describe_alloy_object(o):
    meta = o["metadata"]
    labels = meta.get("labels") or {}
    kind = o["kind"]
    if kind == "Secret":
        return f"Alloy config: {len(o.get('data') or {})} .alloy files"
    if kind == "Service":
        return "headless, cluster peers, port 12345"
    if kind == "StatefulSet":
        return (f"metrics, group {labels.get('operator.agent.grafana.com/replica-group', '?')}: "
                f"cluster of {o['spec'].get('replicas', 1)} members")
    workload = labels.get("operator.agent.grafana.com/type", "")
    return {"logs": "logs, one Alloy pod per node",
            "integrations-ds": "integrations as Alloy exporters, every node",
            "integrations-deploy": "integrations as Alloy exporters, 1 replica"}.get(workload, "")

def describe_agent_object(base, a, kind, o):
    name, meta = a["metadata"]["name"], o["metadata"]
    ns, n = meta["namespace"], meta["name"]
    labels = meta.get("labels") or {}
    if labels.get("operator.agent.grafana.com/backend") == "alloy":
        return describe_alloy_object(o)
    if kind == "Secret":
        if n == f"{name}-secrets":
            return f"the Secret keys the configs reference ({len(o.get('data') or {})})"
        text = secret_value(base, ns, n, "agent.yml") or ""
        what = {f"{name}-config": "metrics", f"{name}-logs-config": "logs"}.get(n)
        if what is None:
            return "agent.yml, integrations: " + integration_names(base, ns, n)
        return f"agent.yml, {what}: {len(text.splitlines())} lines"
    if kind == "Service":
        ports = ", ".join(f"{p['port']} {p.get('name', '')}" for p in o["spec"].get("ports", []))
        return f"headless, port {ports}"
    if kind == "StatefulSet":
        shards = a["spec"].get("metrics", {}).get("shards", 1)
        return (f"metrics shard {labels.get('operator.agent.grafana.com/shard', '?')} of {shards}, "
                f"{o['spec'].get('replicas', 1)} replicas")
    if kind == "DaemonSet":
        if labels.get("operator.agent.grafana.com/type") == "logs":
            return "logs, one pod per node"
        return "integrations, every node: " + integration_names(base, ns, f"{n}-config")
    if kind == "Deployment":
        return (f"integrations, {o['spec'].get('replicas', 1)} replica: "
                + integration_names(base, ns, f"{n}-config"))
    return ""

def objects(base):
    kinds = [("Secret", "/api/v1", "secrets"), ("Service", "/api/v1", "services"),
             ("StatefulSet", "/apis/apps/v1", "statefulsets"),
             ("DaemonSet", "/apis/apps/v1", "daemonsets"),
             ("Deployment", "/apis/apps/v1", "deployments")]
    for a in items(f"{base}{AGENT_API}/grafanaagents"):
        ns, name = a["metadata"]["namespace"], a["metadata"]["name"]
        st = a.get("status") or {}
        def n(field, kind):
            count = st.get(field, 0)
            return f"{count} {kind}{'' if count == 1 or kind.endswith('s') else 's'}"
        print(f"GrafanaAgent {ns}/{name} (backend {st.get('backend', '?')})")
        print(f"  selects  {n('metricsInstances', 'MetricsInstance')}: "
              f"{n('serviceMonitors', 'ServiceMonitor')}, {n('podMonitors', 'PodMonitor')}, "
              f"{n('probes', 'Probe')}")
        print(f"           {n('logsInstances', 'LogsInstance')}: {n('podLogs', 'PodLogs')}")
        print(f"           {n('integrations', 'Integration')}")
        owned = []
        for kind, prefix, plural in kinds:
            for o in items(f"{base}{prefix}/namespaces/{ns}/{plural}"):
                refs = o["metadata"].get("ownerReferences") or []
                if any(r.get("kind") == "GrafanaAgent" and r.get("name") == name for r in refs):
                    owned.append((int(o["metadata"]["resourceVersion"]), kind, o))
        rows = [("KIND", "NAME", "WHAT")]
        for _, kind, o in sorted(owned, key=lambda t: t[0]):
            rows.append((kind, o["metadata"]["name"], describe_agent_object(base, a, kind, o)))
        print("  created, in the order applied:")
        table(rows, "    ")
    by_ns = {}
    for kind, prefix, plural in [("ConfigMap", "/api/v1", "configmaps"),
                                 ("Secret", "/api/v1", "secrets"),
                                 ("Deployment", "/apis/apps/v1", "deployments")]:
        for o in items(f"{base}{prefix}/{plural}?{TELEGRAF_SELECTOR}"):
            by_ns.setdefault(o["metadata"]["namespace"], []).append((kind, o))
    for ns in sorted(by_ns):
        sources = ""
        rows = [("KIND", "NAME", "WHAT")]
        for kind, o in by_ns[ns]:
            ann = o["metadata"].get("annotations") or {}
            sources = ann.get("telegraf.influxdata.com/rubin-telegraf-sources", sources)
            if kind == "ConfigMap":
                conf = (o.get("data") or {}).get("telegraf.conf", "")
                bucket = re.search(r'bucket = "([^"]*)"', conf)
                what = (f"telegraf.conf, {conf.count('[[inputs.prometheus]]')} endpoints, "
                        f"bucket {bucket.group(1) if bucket else '?'}")
            elif kind == "Deployment":
                c = o["spec"]["template"]["spec"]["containers"][0]
                what = f"{o['spec'].get('replicas', 1)} replica, {c['image']}"
            else:
                what = "InfluxDB token"
            rows.append((kind, o["metadata"]["name"], what))
        print()
        print(f"telegraf in namespace {ns}, from {sources.replace(chr(10), ', ')}")
        table(rows, "    ")

def data(base, kind, ns, name, key):
    if kind == "secret":
        value = secret_value(base, ns, name, key)
    else:
        cm = get(f"{base}/api/v1/namespaces/{ns}/configmaps/{name}")
        value = ((cm or {}).get("data") or {}).get(key)
    if value is None:
        sys.exit(f"error: no {key} in {kind} {ns}/{name}")
    sys.stdout.write(value)

def alloy_files(base, ns, secret, show):
    """The .alloy files of an Alloy config Secret, then the one whose name starts with
    `show`."""
    o = get(f"{base}/api/v1/namespaces/{ns}/secrets/{secret}") or {}
    files = {k: base64.b64decode(v).decode() for k, v in (o.get("data") or {}).items()}
    if not files:
        sys.exit(f"error: no .alloy files in Secret {ns}/{secret}")
    table([("FILE", "LINES")] + [(k, str(len(v.splitlines()))) for k, v in sorted(files.items())])
    for k in sorted(files):
        if k.startswith(show):
            print()
            print(f"{k}:")
            print()
            sys.stdout.write(files[k])
            return
    sys.exit(f"error: no file {show}* in Secret {ns}/{secret}")

def jobs(path):
    with open(path) as fh:
        cfg = yaml.safe_load(fh) or {}
    metrics = cfg.get("metrics") or {}
    default = (metrics.get("global") or {}).get("scrape_interval", "1m")
    rows = [("INSTANCE", "JOB", "EVERY")]
    for inst in metrics.get("configs") or []:
        for job in inst.get("scrape_configs") or []:
            rows.append((inst["name"], job["job_name"], job.get("scrape_interval", default)))
    table(rows)

def show_conditions(base, ns, name):
    a = agent(base, ns, name)
    st = a.get("status") or {}
    rows = [("TYPE", "STATUS", "REASON", "MESSAGE")]
    for c in st.get("conditions", []):
        rows.append((c["type"], c["status"], c.get("reason", ""), c.get("message", "")))
    table(rows)
    print()
    print(f"observedGeneration {st.get('observedGeneration')} "
          f"(metadata.generation {a['metadata'].get('generation')})")
    problems = st.get("problems") or []
    print("status.problems: " + ("none" if not problems else
          "; ".join(f"{p['kind']} {p['namespace']}/{p['name']}: {p['message']}" for p in problems)))
    events = [e for e in items(f"{base}/api/v1/events") if e.get("type") == "Warning"]
    print("Warning Events: " + ("none" if not events else "; ".join(
        f"{e['involvedObject'].get('kind')} {e['involvedObject'].get('namespace', '')}/"
        f"{e['involvedObject'].get('name')} {e.get('reason')}: {e.get('message')}" for e in events)))

def metrics(url):
    with OPENER.open(url, timeout=10) as resp:
        text = resp.read().decode()
    keep = [r'^controller_runtime_reconcile_total\{.*result="(success|error)"',
            r'^controller_runtime_reconcile_errors_total',
            r'^workqueue_depth', r'^workqueue_adds_total',
            r'^rest_client_requests_total', r'^leader_election_master_status',
            r'^agent_operator_telegraf_(managed_namespaces|endpoints)']
    rows = []
    series = 0
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series += 1
        if any(re.search(k, line) for k in keep):
            name, _, value = line.rpartition(" ")
            rows.append((name, value))
    order = {k: i for i, k in enumerate(keep)}
    rows.sort(key=lambda r: min(i for k, i in order.items() if re.search(k, r[0] + " ")))
    table(rows)
    print(f"\n({series} series in all)")

def probe(base):
    answers = []
    for path in ("/healthz", "/readyz"):
        try:
            with OPENER.open(base + path, timeout=5) as resp:
                answers.append(f"{path} {resp.status} {resp.reason}")
        except urllib.error.HTTPError as e:
            answers.append(f"{path} {e.code} {e.reason}")
    print(", ".join(answers))

def wait_change(base, ns, name, key, before_path, ms_path, timeout):
    with open(before_path) as fh:
        before = fh.read()
    start = time.monotonic()
    while time.monotonic() - start < float(timeout):
        value = secret_value(base, ns, name, key)
        if value is not None and value != before:
            sys.stdout.write(value)
            with open(ms_path, "w") as fh:
                fh.write(f"{(time.monotonic() - start) * 1000:.0f}\n")
            return
        time.sleep(0.05)
    sys.exit(f"error: Secret {ns}/{name} did not change within {timeout} s")

WORKLOADS = [("StatefulSet", "statefulsets"), ("DaemonSet", "daemonsets"),
             ("Deployment", "deployments")]

def root_workloads(base, ns, name):
    """(kind, plural, object, backend) of every workload the root owns."""
    out = []
    for kind, plural in WORKLOADS:
        for o in items(f"{base}/apis/apps/v1/namespaces/{ns}/{plural}"):
            refs = o["metadata"].get("ownerReferences") or []
            if any(r.get("kind") == "GrafanaAgent" and r.get("name") == name for r in refs):
                labels = o["metadata"].get("labels") or {}
                backend = labels.get("operator.agent.grafana.com/backend", "static")
                out.append((kind, plural, o, backend))
    return out

def is_ready(kind, o):
    st = o.get("status") or {}
    if st.get("observedGeneration", -1) < o["metadata"].get("generation", 0):
        return False
    if kind == "DaemonSet":
        return st.get("numberReady", 0) >= st.get("desiredNumberScheduled", 0)
    return st.get("readyReplicas", 0) >= (o.get("spec") or {}).get("replicas", 1)

def switch_wait(base, ns, name, reason, timeout):
    """Until the Backend condition has `reason`; then it and the root's workloads."""
    deadline = time.monotonic() + float(timeout)
    while True:
        c = conditions(agent(base, ns, name)).get("Backend", {})
        if c.get("reason") == reason:
            break
        if time.monotonic() > deadline:
            sys.exit(f"error: GrafanaAgent {ns}/{name}: Backend is not {reason} after {timeout} s: "
                     f"{c.get('status')} {c.get('reason')}: {c.get('message')}")
        time.sleep(0.1)
    table([("CONDITION", "STATUS", "REASON", "MESSAGE"),
           ("Backend", c["status"], c["reason"], c.get("message", ""))])
    rows = [("WORKLOAD", "BACKEND", "READY")]
    for kind, _, o, backend in root_workloads(base, ns, name):
        rows.append((f"{kind} {o['metadata']['name']}", backend,
                     "yes" if is_ready(kind, o) else "no"))
    print()
    table(rows)

def run_pods(base, ns, name, backend):
    """The status the workload controllers write once the pods of the root's workloads on
    `backend` run and are ready (kube-sim runs no pods)."""
    for kind, plural, o, b in root_workloads(base, ns, name):
        if b != backend:
            continue
        n = 1 if kind == "DaemonSet" else (o.get("spec") or {}).get("replicas", 1)
        st = {"observedGeneration": o["metadata"].get("generation", 1)}
        if kind == "DaemonSet":
            st.update(desiredNumberScheduled=n, numberReady=n, updatedNumberScheduled=n)
        else:
            st.update(replicas=n, readyReplicas=n, updatedReplicas=n)
        patch(base, f"/apis/apps/v1/namespaces/{ns}/{plural}/{o['metadata']['name']}/status",
              json.dumps({"status": st}))
        print(f"{kind} {o['metadata']['name']}: {n}/{n} ready")

def switch_events(base, ns, name):
    for e in items(f"{base}/api/v1/namespaces/{ns}/events"):
        inv = e["involvedObject"]
        if (inv.get("kind") == "GrafanaAgent" and inv.get("name") == name and
                e.get("reason", "").startswith("Switch")):
            print(f"{e['type']} {e['reason']}: {e['message']}")

def lease(base, ns, name, line):
    l = get(f"{base}/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}")
    holder = ((l or {}).get("spec") or {}).get("holderIdentity") or "(none)"
    print(line.format(holder=holder, lease=f"{ns}/{name}"))

if __name__ == "__main__":
    try:
        globals()[sys.argv[1].replace("-", "_")](*sys.argv[2:])
    except KeyboardInterrupt:  # Ctrl-C: the demo's trap stops everything
        sys.exit(130)
PY
# Its error messages are shown, not a traceback of an interrupted interpreter start.
kube() {
  /usr/bin/python3 "$tmp/kube.py" "$@" 2>"$tmp/kube.err" || {
    local status=$?
    cat "$tmp/kube.err" >&2
    return "$status"
  }
}


printf '%sagent-operator demo%s: kube-sim, a simulated Kubernetes API server, on 127.0.0.1;\n' "$bold" "$reset"
printf 'the operator and the examples of deploy/examples/. No real cluster is touched.\n'

# ---- 1. build --------------------------------------------------------------------------

section "Build"
if [ "$setup" -eq 1 ]; then
  say "building agent-operator and kube-sim (the first build takes several minutes)"
  build_args=(--preset dev --target agent-operator --target kube-sim)
  [ -t 1 ] || build_args+=(--build-log "$tmp/build.log")
  "$root/tools/setup.sh" "${build_args[@]}" || fail "the build failed"
fi
[ -n "$bin_dir" ] || bin_dir="$root/build/bin"
for b in agent-operator kube-sim; do
  [ -x "$bin_dir/$b" ] || fail "$bin_dir/$b is missing (build it, or run without --no-setup)"
done
"$bin_dir/agent-operator" --version >"$tmp/version"
read -r version <"$tmp/version"
say "$version and kube-sim in ${bin_dir#"$root"/}"
cd "$root"
now after_build

# ---- 2. kube-sim -----------------------------------------------------------------------

section "Start kube-sim"
kubeconfig="$tmp/kubeconfig"
"$bin_dir/kube-sim" --listen 127.0.0.1:0 --kubeconfig-out "$kubeconfig" \
  >"$tmp/kube-sim.out" 2>"$tmp/kube-sim.log" &
sim_pid=$!
say "\$TMP is $tmp (the kubeconfig, logs; removed at the end)"
cmd "kube-sim --listen 127.0.0.1:0 --kubeconfig-out \$TMP/kubeconfig"
server=""
for ((i = 0; i < 600; i++)); do
  first_match server '^kube-sim listening on (http[^ ]*)$' "$tmp/kube-sim.out"
  [ -n "$server" ] && break
  kill -0 "$sim_pid" 2>/dev/null || fail "kube-sim exited during start-up"
  sleep 0.05
done
[ -n "$server" ] || fail "kube-sim did not start within 30 s"
say "kube-sim listening on $server (pid $sim_pid)"
say "kube-sim has no kubelet: Pods are stored but never run"
if [ "$interactive" -eq 1 ] && [ "$use_kubectl" -eq 1 ]; then
  say "while the demo pauses, look around from another terminal:"
  say "  kubectl --kubeconfig $tmp/kubeconfig get grafanaagents,statefulsets -A"
fi

# ---- 3. install --------------------------------------------------------------------------

section "Install the CRDs and deploy/examples/"
if [ "$use_kubectl" -eq 1 ]; then
  k() { "$kubectl_bin" --kubeconfig "$kubeconfig" --cache-dir "$tmp/kubectl-cache" "$@"; }
  cmd "kubectl apply -R -f deploy/crds -f deploy/examples/demo-only"
  k apply -R -f deploy/crds -f deploy/examples/demo-only 2>&1 | indent
  k wait --for condition=established --timeout=30s crd --all >/dev/null
  cmd "kubectl apply -f deploy/examples -f tools/demo/alloy-root.yaml"
  k apply -f deploy/examples -f tools/demo/alloy-root.yaml 2>&1 | indent
else
  say "kubectl is not used: the demo creates the objects through kube-sim's API, as"
  say "kubectl apply -R -f deploy/crds -f deploy/examples/demo-only; kubectl apply -f deploy/examples"
  say "-f tools/demo/alloy-root.yaml would:"
  kube apply "$server" deploy/crds deploy/crds/prometheus-operator deploy/examples/demo-only | indent
  kube apply "$server" deploy/examples tools/demo/alloy-root.yaml | indent
fi
say "tools/demo/alloy-root.yaml adds a second GrafanaAgent, alloy-demo, annotated"
say "operator.agent.grafana.com/backend: alloy: the same hierarchy, deployed with Grafana Alloy"
say "deploy/examples/demo-only/ holds a stand-in for ArgoCD's Application CRD:"
say "never apply it to a cluster that runs ArgoCD"

# ---- 4. operator -------------------------------------------------------------------------

section "Start agent-operator"
# The telegraf controller is opt-in and needs the InfluxDB its agents write to; kube-sim
# runs no pods, so nothing ever connects to this one.
telegraf_args=(--controllers agent,telegraf --telegraf-influxdb-url https://influxdb.example.com
               --telegraf-influxdb-org demo)
op_args=(--kubeconfig "$kubeconfig" --leader-elect
         --health-probe-bind-address 127.0.0.1:0 --metrics-bind-address 127.0.0.1:0
         "${telegraf_args[@]}")
cmd "agent-operator --kubeconfig \$TMP/kubeconfig --leader-elect \\"
more "--health-probe-bind-address 127.0.0.1:0 --metrics-bind-address 127.0.0.1:0 \\"
more "${telegraf_args[*]}"
now op_start
"$bin_dir/agent-operator" "${op_args[@]}" >"$tmp/operator.log" 2>&1 &
op_pid=$!
health_port="" metrics_port=""
for ((i = 0; i < 600; i++)); do
  first_match health_port 'msg="serving health probes" port=([0-9]+)' "$tmp/operator.log"
  first_match metrics_port 'msg="serving metrics" port=([0-9]+)' "$tmp/operator.log"
  [ -n "$health_port" ] && [ -n "$metrics_port" ] && break
  kill -0 "$op_pid" 2>/dev/null || fail "agent-operator exited during start-up"
  sleep 0.05
done
[ -n "$metrics_port" ] || fail "agent-operator did not report its ports within 30 s"
say "pid $op_pid; logs (logfmt) go to \$TMP/operator.log"
say "health probes  http://127.0.0.1:$health_port/healthz, /readyz"
say "metrics        http://127.0.0.1:$metrics_port/metrics"

# ---- 5. wait -----------------------------------------------------------------------------

section "Wait until the GrafanaAgent is reconciled"
kube wait-reconciled "$server" monitoring grafana-agent shop,payments "$op_start" 60 | indent2
kube wait-reconciled "$server" monitoring alloy-demo "" "$op_start" 60 | indent2
kube lease "$server" default agent-operator "leader: {holder}, holder of Lease {lease}" | indent2
kube probe "http://127.0.0.1:$health_port" | indent2
echo
say "Ready stays False here: kube-sim runs no pods, so no StatefulSet, DaemonSet or"
say "Deployment ever reports ready replicas. On a real cluster it turns True once they do."

# ---- 6. objects --------------------------------------------------------------------------

section "Objects created per root"
kube objects "$server" | indent2
pause

# ---- 7. agent.yml ------------------------------------------------------------------------

section "agent.yml of GrafanaAgent monitoring/grafana-agent"
kube data "$server" secret monitoring grafana-agent-config agent.yml >"$tmp/agent-before.yml"
say "from Secret monitoring/grafana-agent-config, key agent.yml: the scrape jobs,"
echo
kube jobs "$tmp/agent-before.yml" | indent
echo
say "and the whole file (\$(SHARD) and \$(STATEFULSET_ORDINAL_NUMBER) are filled in"
say "per pod by the config reloader):"
echo
indent <"$tmp/agent-before.yml"
pause

# ---- 7b. the Alloy root ---------------------------------------------------------------------

section "Alloy configuration of GrafanaAgent monitoring/alloy-demo"
say "the same ServiceMonitors, translated: Secret monitoring/alloy-demo-alloy-config holds"
say "one .alloy file per scrape job (discovery.relabel -> prometheus.scrape ->"
say "prometheus.remote_write), projected into /etc/alloy of every Alloy pod:"
echo
kube alloy-files "$server" monitoring alloy-demo-alloy-config scrape_serviceMonitor_shop_web_0_ | indent
pause

# ---- 8. telegraf.conf ----------------------------------------------------------------------

section "telegraf.conf for namespace payments"
say "from ConfigMap payments/rubin-telegraf, generated from the annotation on the ArgoCD"
say "Application argocd/payments (deploy/examples/70-argocd-application.yaml):"
echo
kube data "$server" configmap payments rubin-telegraf telegraf.conf | indent
pause

# ---- 9. status -----------------------------------------------------------------------------

section "Status conditions of GrafanaAgent monitoring/grafana-agent"
kube show-conditions "$server" monitoring grafana-agent | indent2

# ---- 10. metrics ---------------------------------------------------------------------------

section "A few lines of /metrics"
kube metrics "http://127.0.0.1:$metrics_port/metrics" | indent2
pause

# ---- 11. live edit -------------------------------------------------------------------------

section "Live edit: ServiceMonitor shop/web"
say "scrape every 15s instead of 30s, and drop the go_* series:"
patch='{"spec":{"endpoints":[{"port":"http","path":"/metrics","interval":"15s","metricRelabelings":[{"sourceLabels":["__name__"],"regex":"go_.*","action":"drop"}]}]}}'
if [ "$use_kubectl" -eq 1 ]; then
  cmd "kubectl -n shop patch servicemonitor web --type merge -p '$patch'"
  k -n shop patch servicemonitor web --type merge -p "$patch" 2>&1 | indent
else
  cmd "PATCH /apis/monitoring.coreos.com/v1/namespaces/shop/servicemonitors/web  $patch"
  kube patch "$server" /apis/monitoring.coreos.com/v1/namespaces/shop/servicemonitors/web "$patch"
fi
kube wait-change "$server" monitoring grafana-agent-config agent.yml "$tmp/agent-before.yml" \
  "$tmp/change-ms" 30 >"$tmp/agent-after.yml"
read -r change_ms <"$tmp/change-ms"
say "Secret monitoring/grafana-agent-config rewritten $change_ms ms after the edit:"
echo
diff -u --label "agent.yml before" --label "agent.yml after" \
  "$tmp/agent-before.yml" "$tmp/agent-after.yml" | indent || true
echo
say "the config reloader in each agent pod picks the new file up; no pod restarts."

# ---- 12. switch ----------------------------------------------------------------------------

section "Switch GrafanaAgent monitoring/grafana-agent to Alloy and back"
set_backend() {
  local body="{\"metadata\":{\"annotations\":{\"operator.agent.grafana.com/backend\":\"$1\"}}}"
  if [ "$use_kubectl" -eq 1 ]; then
    cmd "kubectl -n monitoring annotate grafanaagent grafana-agent operator.agent.grafana.com/backend=$1 --overwrite"
    k -n monitoring annotate grafanaagent grafana-agent "operator.agent.grafana.com/backend=$1" \
      --overwrite 2>&1 | indent
  else
    cmd "PATCH $AGENT_PATH  $body"
    kube patch "$server" "$AGENT_PATH" "$body"
  fi
}
AGENT_PATH=/apis/monitoring.grafana.com/v1alpha1/namespaces/monitoring/grafanaagents/grafana-agent
set_backend alloy
say "the Alloy objects are created next to the static ones, which keep scraping until"
say "every Alloy workload is ready:"
echo
kube switch-wait "$server" monitoring grafana-agent Switching 30 | indent2
echo
say "kube-sim runs no pods; the demo writes the status the workload controllers would once"
say "the Alloy pods are ready:"
kube run-pods "$server" monitoring grafana-agent alloy | indent
echo
say "then the static workloads, Service and config Secrets are deleted, in that order:"
echo
kube switch-wait "$server" monitoring grafana-agent Alloy 30 | indent2
echo
say "and back to static (safe midway too), the same way round:"
set_backend static
kube switch-wait "$server" monitoring grafana-agent Switching 30 | indent2
kube run-pods "$server" monitoring grafana-agent static | indent
kube switch-wait "$server" monitoring grafana-agent Static 30 | indent2
echo
say "the Events of the two switches:"
kube switch-events "$server" monitoring grafana-agent | indent
pause

# ---- 13. stop ------------------------------------------------------------------------------

section "Shut down"
now stop_start
kill -TERM "$op_pid"
op_status=0
wait "$op_pid" || op_status=$?
op_pid=""
[ "$op_status" -eq 0 ] || fail "agent-operator exited with status $op_status"
seconds_since took "$stop_start"
say "agent-operator exited with status 0 ($took s after SIGTERM):"
grep -E 'msg="(shutting down|released the leader election lease|agent-operator stopped)"' \
  "$tmp/operator.log" | sed 's/^ts=[^ ]* //' | indent
kube lease "$server" default agent-operator "Lease {lease} holder after shutdown: {holder}" | indent2
stop_process "$sim_pid"
say "kube-sim stopped (pid $sim_pid)"
sim_pid=""
echo
seconds_since took "$after_build"
say "${green}demo finished in $took s after the build; nothing left running.${reset}"
say "Next: ${bin_dir#"$root"/}/agent-operator render -f deploy/examples ${telegraf_args[*]}"
say "        prints every object above from the same files, without a cluster"
say "      kubectl apply -k deploy/ && kubectl apply -f deploy/examples/"
say "        installs the operator and the examples in a real cluster"
