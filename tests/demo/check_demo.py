#!/usr/bin/python3
"""Checks of the demo a newcomer runs first, and of the examples it installs.

  check_demo.py run SOURCE_DIR BIN_DIR                  tools/demo.sh end to end
  check_demo.py run_without_kubectl SOURCE_DIR BIN_DIR  the same, installing through
                                                        kube-sim's API instead of kubectl
  check_demo.py examples_render SOURCE_DIR BIN_DIR      `agent-operator render` of
                                                        deploy/examples/ reports nothing

`run` starts the demo in its own session with its own TMPDIR and checks its key lines
(each section, Reconciled=True, a scrape job from the examples in agent.yml,
[[inputs.prometheus]] in telegraf.conf, the diff of the live edit, exit status 0 of the
operator), that it wrote nothing to stderr, and that afterwards no process it started
is left and its temporary directory is gone.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile

import yaml

HEADINGS = [
    "Build",
    "Start kube-sim",
    "Install the CRDs and deploy/examples/",
    "Start agent-operator",
    "Wait until the GrafanaAgent is reconciled",
    "Objects created per root",
    "agent.yml of GrafanaAgent monitoring/grafana-agent",
    "Alloy configuration of GrafanaAgent monitoring/alloy-demo",
    "telegraf.conf for namespace payments",
    "Status conditions of GrafanaAgent monitoring/grafana-agent",
    "A few lines of /metrics",
    "Live edit: ServiceMonitor shop/web",
    "Switch GrafanaAgent monitoring/grafana-agent to Alloy and back",
    "Shut down",
]

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def sections(out):
    """Heading title -> the lines below it."""
    found, current = {}, None
    for line in out.splitlines():
        m = re.match(r"^── \d+/\d+  (.*?) ─+$", line)
        if m:
            current = m.group(1)
            found[current] = []
        elif current is not None:
            found[current].append(line)
    return found


def has(lines, pattern):
    return any(re.search(pattern, line) for line in lines)


def session_processes(sid):
    """PIDs (with their command) of live processes in session `sid`."""
    left = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            left.append((int(entry), cmd))
    return left


def running(pid, name):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return name.encode() in f.read()
    except OSError:
        return False


def run_demo(source, bin_dir, extra):
    tmpdir = tempfile.mkdtemp(prefix="demo-test-")
    env = dict(os.environ, TMPDIR=tmpdir)
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        ["/bin/bash", os.path.join(source, "tools/demo.sh"), "--non-interactive", "--no-setup",
         "--bin-dir", bin_dir] + extra,
        cwd=source, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        failures.append("the demo did not finish within 240 s")
    print(out)
    if err:
        print("---- stderr ----\n" + err)

    check(proc.returncode == 0, f"tools/demo.sh exited with status {proc.returncode}")
    check(err.strip() == "", "the demo wrote to stderr (see above)")
    s = sections(out)
    for h in HEADINGS:
        check(h in s, f"no section heading '{h}'")
    g = lambda h: s.get(h, [])

    check(has(g("Start kube-sim"), r"kube-sim listening on http://127\.0\.0\.1:\d+ \(pid \d+\)"),
          "kube-sim's URL and pid are not shown")
    install = g("Install the CRDs and deploy/examples/")
    for obj in ["customresourcedefinition.apiextensions.k8s.io/grafanaagents.monitoring.grafana.com",
                "customresourcedefinition.apiextensions.k8s.io/applications.argoproj.io",
                "grafanaagent.monitoring.grafana.com/grafana-agent",
                "servicemonitor.monitoring.coreos.com/web", "probe.monitoring.coreos.com/public-endpoints",
                "podlogs.monitoring.grafana.com/shop", "application.argoproj.io/payments"]:
        check(has(install, re.escape(obj) + " created"), f"{obj} was not created")
    check(has(g("Start agent-operator"), r"metrics +http://127\.0\.0\.1:\d+/metrics"),
          "the operator's metrics port is not shown")

    wait = g("Wait until the GrafanaAgent is reconciled")
    check(has(wait, r"GrafanaAgent monitoring/grafana-agent: Reconciled=True Ready=False"),
          "no 'Reconciled=True' line for monitoring/grafana-agent")
    check(has(wait, r"GrafanaAgent monitoring/grafana-agent: Reconciled=True .*backend=static"),
          "monitoring/grafana-agent is not shown on the static backend")
    check(has(wait, r"GrafanaAgent monitoring/alloy-demo: Reconciled=True .*backend=alloy"),
          "no 'Reconciled=True backend=alloy' line for monitoring/alloy-demo")
    check(has(wait, r"kube-sim runs no pods"), "the demo does not explain why Ready is False")
    check(has(wait, r"/healthz 200 OK, /readyz 200 OK"), "health endpoints not shown as OK")

    objects = g("Objects created per root")
    check(has(objects, r"StatefulSet +grafana-agent-shard-1 +metrics shard 1 of 2, 2 replicas"),
          "the second shard's StatefulSet (2 replicas) is not listed")
    check(has(objects, r"DaemonSet +grafana-agent-integrations-ds +.*node_exporter"),
          "the node_exporter integration DaemonSet is not listed")
    check(has(objects, r"Deployment +grafana-agent-integrations-deploy +.*redis_exporter"),
          "the redis_exporter integration Deployment is not listed")
    check(has(objects, r"GrafanaAgent monitoring/alloy-demo \(backend alloy\)"),
          "the Alloy root is not listed with its backend")
    check(has(objects, r"StatefulSet +alloy-demo-alloy +metrics, group 0: cluster of 2 members"),
          "the Alloy root's StatefulSet (2 members) is not listed")
    check(has(objects, r"DaemonSet +alloy-demo-alloy-logs +logs, one Alloy pod per node"),
          "the Alloy root's logs DaemonSet is not listed")
    check(has(objects, r"telegraf in namespace payments, from Application/argocd/payments"),
          "telegraf objects from the ArgoCD Application are not listed")
    check(has(objects, r"telegraf in namespace shop, from Namespace/shop"),
          "telegraf objects from the annotated Namespace are not listed")

    agent_yml = g("agent.yml of GrafanaAgent monitoring/grafana-agent")
    for job in ["serviceMonitor/shop/web/0", "podMonitor/payments/ledger/0",
                "probe/payments/public-endpoints"]:
        check(has(agent_yml, r"job_name: " + re.escape(job) + "$"), f"agent.yml lacks job {job}")
    check(not has(agent_yml, r"example-api-token-replace-me"),
          "the basic-auth password appears in the printed agent.yml")

    alloy = g("Alloy configuration of GrafanaAgent monitoring/alloy-demo")
    check(has(alloy, r'^\s+prometheus\.scrape "scrape_serviceMonitor_shop_web_0_[0-9a-f]{8}" \{$'),
          "the Alloy scrape component of ServiceMonitor shop/web is not shown")
    check(has(alloy, r"^\s+main\.alloy +\d+$"), "the Alloy config's file list is not shown")
    check(not has(alloy, r"example-api-token-replace-me"),
          "the basic-auth password appears in the printed Alloy configuration")

    telegraf = g("telegraf.conf for namespace payments")
    check(has(telegraf, r"^\s+\[\[inputs\.prometheus\]\]$"), "telegraf.conf lacks [[inputs.prometheus]]")
    check(has(telegraf, r'bucket = "payments"'), "telegraf.conf lacks the payments bucket")

    status = g("Status conditions of GrafanaAgent monitoring/grafana-agent")
    check(has(status, r"^\s+Reconciled +True +Reconciled "), "no Reconciled=True condition row")
    check(has(status, r"^\s+Ready +False +WorkloadsNotReady "), "no Ready=False condition row")
    check(has(status, r"status\.problems: none$"), "the examples produce status.problems")
    check(has(status, r"Warning Events: none$"), "the examples produce Warning Events")

    metrics = g("A few lines of /metrics")
    check(has(metrics, r'controller_runtime_reconcile_total\{controller="grafana-agent",result="success"\} +[1-9]'),
          "no successful grafana-agent reconcile in /metrics")
    check(has(metrics, r'workqueue_depth\{name="grafana-agent"\}'), "no workqueue_depth in /metrics")
    check(has(metrics, r"rest_client_requests_total\{"), "no rest_client_requests_total in /metrics")

    edit = g("Live edit: ServiceMonitor shop/web")
    check(has(edit, r"^\s+--- agent\.yml before$") and has(edit, r"^\s+\+\+\+ agent\.yml after$"),
          "no before/after diff of agent.yml")
    check(has(edit, r"^\s+-\s+scrape_interval: 30s$"), "the diff does not remove 'scrape_interval: 30s'")
    check(has(edit, r"^\s+\+\s+scrape_interval: 15s$"), "the diff does not add 'scrape_interval: 15s'")
    check(has(edit, r"^\s+\+\s+regex: go_\.\*$"), "the diff does not add the go_.* drop rule")

    switch = g("Switch GrafanaAgent monitoring/grafana-agent to Alloy and back")
    check(has(switch, r"Backend +False +Switching +static → alloy: 0 of \d+ alloy workload\(s\) "
                      r"ready;") and has(switch, r"static objects are kept until all are ready"),
          "the switch to Alloy is not shown waiting for the Alloy workloads")
    check(has(switch, r"StatefulSet grafana-agent +static +no"),
          "the static StatefulSet is not shown kept during the switch")
    check(has(switch, r"Backend +True +Alloy "), "the switch to Alloy does not complete")
    check(has(switch, r"Backend +False +Switching +alloy → static: "),
          "the switch back is not shown")
    check(has(switch, r"Backend +True +Static "), "the switch back does not complete")
    check(has(switch, r"Normal SwitchCompleted: alloy → static: "),
          "no SwitchCompleted Event for the switch back")

    stop = g("Shut down")
    check(has(stop, r"agent-operator exited with status 0 "), "the operator's exit status 0 is not shown")
    check(has(stop, r"holder after shutdown: \(none\)"), "the Lease was not released")
    check(has(stop, r"demo finished in [\d.]+ s after the build; nothing left running"),
          "no closing line")

    # Nothing left behind.
    left = session_processes(proc.pid)
    for pid, cmd in left:
        failures.append(f"process {pid} still running after the demo: {cmd}")
        os.kill(pid, signal.SIGKILL)
    for name, pattern in [("kube-sim", r"kube-sim listening on \S+ \(pid (\d+)\)"),
                          ("agent-operator", r"^  pid (\d+); logs")]:
        m = re.search(pattern, out, re.M)
        check(m is not None, f"the demo does not show the pid of {name}")
        if m and running(int(m.group(1)), name):
            failures.append(f"{name} (pid {m.group(1)}) still running after the demo")
            os.kill(int(m.group(1)), signal.SIGKILL)
    leftovers = os.listdir(tmpdir)
    check(not leftovers, f"the demo left files in TMPDIR: {leftovers}")
    if not leftovers:
        os.rmdir(tmpdir)


def examples_render(source, bin_dir):
    r = subprocess.run([os.path.join(bin_dir, "agent-operator"), "render", "-f",
                        os.path.join(source, "deploy/examples"), "--controllers=agent,telegraf",
                        "--telegraf-influxdb-url=https://influxdb.example.com",
                        "--telegraf-influxdb-org=demo"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"render exited with status {r.returncode}: {r.stderr}")
    # RBAC objects and the demo's Application CRD sit next to the custom resources: render
    # says it ignores them.
    problems = [l for l in r.stderr.splitlines()
                if l and not l.startswith("note: ignored ")
                and not l.endswith("not a kind the enabled controllers read; ignored")]
    check(not problems, "render reports problems in deploy/examples:\n  " + "\n  ".join(problems))
    try:
        printed = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"])
                   for d in yaml.safe_load_all(r.stdout) if d}
    except yaml.YAMLError as e:
        failures.append(f"render printed invalid YAML: {e}")
        return
    for kind, ns, name in [("Secret", "monitoring", "grafana-agent-config"),
                           ("Secret", "monitoring", "grafana-agent-logs-config"),
                           ("StatefulSet", "monitoring", "grafana-agent"),
                           ("StatefulSet", "monitoring", "grafana-agent-shard-1"),
                           ("DaemonSet", "monitoring", "grafana-agent-logs"),
                           ("Deployment", "monitoring", "grafana-agent-integrations-deploy"),
                           ("DaemonSet", "monitoring", "grafana-agent-integrations-ds"),
                           ("ConfigMap", "shop", "rubin-telegraf"),
                           ("Deployment", "payments", "rubin-telegraf")]:
        check((kind, ns, name) in printed, f"render prints no {kind} {ns}/{name}")


def main():
    mode, source, bin_dir = sys.argv[1:4]
    if mode == "run":
        run_demo(source, bin_dir, [])
    elif mode == "run_without_kubectl":
        run_demo(source, bin_dir, ["--without-kubectl"])
    elif mode == "examples_render":
        examples_render(source, bin_dir)
    else:
        sys.exit(f"unknown mode {mode}")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
