#!/usr/bin/python3
"""Deterministic large-cluster data set for the scale benchmark.

Writes one JSON `kind: List` file per kind into OUT_DIR, which kube-sim preloads
(`--preload deploy/crds --preload OUT_DIR`): JSON files are parsed with Boost.JSON, so
preloading 100,000 objects takes seconds. At scale 1:

  10,000 Namespaces (1,000 of them telegraf-annotated), 5,000 ServiceMonitors,
  2,000 PodMonitors, 500 Probes, 50,000 Secrets, 20,000 ConfigMaps, 100 GrafanaAgent
  roots, each with 1-3 MetricsInstances selecting overlapping groups of monitors.

Every count is multiplied by --scale (at least 1 of each). The per-root shape does not
depend on the scale: there is one monitor group per root and each group holds 50
ServiceMonitors, 20 PodMonitors and 5 Probes, so a root renders about the same config
at any scale and --quick stays representative for per-root latencies.

Root r (GrafanaAgent `agent-RRR` in Namespace ns-RRRRR) has 1 + r % 3 MetricsInstances;
instance j selects the monitor groups (r + j) and (r + j + 1) in every namespace, so the
instances of a root overlap and neighbouring roots share groups: a monitor is rendered
by about four instances in two to three roots, as when several agents scrape the same
shared services. The ServiceMonitor ns-00000/sm-00000 (group 0, selected by root 0 and
its neighbours) is the latency marker: the driver sets one of its relabelings to a
sequence number and times how long until agent-000's config Secret shows it.

Objects are sized like real ones: Secrets carry ~2.7 KB of data (a token, a CA
certificate, a JSON config), ServiceMonitors 2-4 endpoints with relabelings and metric
relabelings, bearer-token Secrets and TLS CAs referenced from Secrets that exist.
"""
import argparse
import base64
import json
import os
import random
import sys
import time

SEED = 20240610
MONITORS_PER_GROUP = (50, 20, 5)  # ServiceMonitors, PodMonitors, Probes per group
TELEGRAF_ANNOTATION = "telegraf.influxdata.com/rubin-telegraf-operator"
MARKER_MONITOR = ("ns-00000", "sm-00000")


def counts(scale):
    def n(base):
        return max(1, int(round(base * scale)))

    c = {
        "namespaces": n(10000),
        "servicemonitors": n(5000),
        "podmonitors": n(2000),
        "probes": n(500),
        "secrets": n(50000),
        "configmaps": n(20000),
        "roots": n(100),
        "telegraf": n(1000),
    }
    c["namespaces"] = max(c["namespaces"], c["roots"], c["telegraf"])
    return c


def ns_name(i):
    return "ns-%05d" % i


class Gen:
    def __init__(self, scale):
        self.c = counts(scale)
        self.rng = random.Random(SEED)
        self.groups = self.c["roots"]
        # A pool of random bytes to slice payloads from: cheap and deterministic.
        self.pool = self.rng.randbytes(1 << 16)

    def blob(self, i, size):
        off = (i * 7919) % (len(self.pool) - size)
        return self.pool[off:off + size]

    def b64(self, i, size):
        return base64.b64encode(self.blob(i, size)).decode()

    # ---- kinds ------------------------------------------------------------------------

    def namespaces(self):
        n, tel = self.c["namespaces"], self.c["telegraf"]
        step = max(1, n // tel)
        items = []
        for i in range(n):
            meta = {
                "name": ns_name(i),
                "labels": {
                    "kubernetes.io/metadata.name": ns_name(i),
                    "team": "team-%02d" % (i % 50),
                    "env": ("prod", "staging", "dev")[i % 3],
                },
            }
            if i % step == 0 and i // step < tel:
                eps = []
                for k in range(3 + i % 3):
                    eps.append('- ep%d: "http://svc-%d.%s.svc:%d/metrics"' %
                               (k, k, ns_name(i), 9100 + k))
                meta["annotations"] = {TELEGRAF_ANNOTATION: "\n".join(eps) + "\n"}
            items.append({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
        return items

    def secrets(self):
        n, nns = self.c["secrets"], self.c["namespaces"]
        items = []
        for i in range(n):
            pem = ("-----BEGIN CERTIFICATE-----\n" +
                   "\n".join(self.b64(i + k, 48) for k in range(16)) +
                   "\n-----END CERTIFICATE-----\n")
            cfg = json.dumps({"user": "svc-%d" % i, "endpoint": "https://api-%d.example.com" % i,
                              "opts": {"retries": i % 7, "key": self.b64(i, 300)}})
            items.append({
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "Opaque",
                "metadata": {
                    "name": "secret-%05d" % i,
                    "namespace": ns_name(i % nns),
                    "labels": {"app": "app-%d" % (i % 500), "tier": ("web", "db", "cache")[i % 3]},
                    "annotations": {"owner": "team-%02d" % (i % 50)},
                },
                "data": {
                    "token": base64.b64encode(self.b64(i, 96).encode()).decode(),
                    "ca.crt": base64.b64encode(pem.encode()).decode(),
                    "config.json": base64.b64encode(cfg.encode()).decode(),
                },
            })
        return items

    def configmaps(self):
        n, nns = self.c["configmaps"], self.c["namespaces"]
        items = []
        for i in range(n):
            conf = "".join("setting_%d = %s\n" % (k, self.b64(i + k, 12)) for k in range(24))
            items.append({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "cm-%05d" % i,
                    "namespace": ns_name((i * 3) % nns),
                    "labels": {"app": "app-%d" % (i % 500)},
                },
                "data": {"app.conf": conf, "level": ("debug", "info", "warn")[i % 3]},
            })
        return items

    def relabelings(self, i, n):
        out = []
        for k in range(n):
            out.append({
                "sourceLabels": ["__meta_kubernetes_pod_label_app", "__meta_kubernetes_pod_name"],
                "separator": ";",
                "regex": "(app-%d);(.*)" % (i % 97),
                "targetLabel": "label_%d" % k,
                "replacement": "value-%d-%d" % (i, k),
                "action": "replace",
            })
        return out

    def metric_relabelings(self, i):
        return [
            {"sourceLabels": ["__name__"], "regex": "go_gc_.*|process_.*_%d" % (i % 13),
             "action": "drop"},
            {"regex": "pod_template_hash", "action": "labeldrop"},
        ]

    def group_of(self, i, per_group):
        return (i // per_group) % self.groups

    def monitor_ns(self, i, salt):
        return ns_name((i * 37 + salt) % self.c["namespaces"])

    def servicemonitors(self):
        items = []
        for i in range(self.c["servicemonitors"]):
            ns = self.monitor_ns(i, 1) if i else MARKER_MONITOR[0]
            nsi = int(ns[3:])
            eps = []
            for k in range(2 + i % 3):
                ep = {
                    "port": "http-metrics-%d" % k,
                    "path": "/metrics",
                    "interval": "30s",
                    "scrapeTimeout": "10s",
                    "scheme": "https" if k == 0 else "http",
                    "honorLabels": k == 1,
                    "relabelings": self.relabelings(i, 3),
                    "metricRelabelings": self.metric_relabelings(i),
                }
                if k == 0:
                    ep["tlsConfig"] = {
                        "ca": {"secret": {"name": "secret-%05d" % nsi, "key": "ca.crt"}},
                        "serverName": "svc-%d.%s.svc" % (i, ns),
                    }
                    ep["bearerTokenSecret"] = {"name": "secret-%05d" % nsi, "key": "token"}
                eps.append(ep)
            items.append({
                "apiVersion": "monitoring.coreos.com/v1",
                "kind": "ServiceMonitor",
                "metadata": {
                    "name": "sm-%05d" % i,
                    "namespace": ns,
                    "labels": {"group": "g-%03d" % self.group_of(i, MONITORS_PER_GROUP[0]),
                               "app": "app-%d" % (i % 500)},
                },
                "spec": {
                    "jobLabel": "app.kubernetes.io/name",
                    "targetLabels": ["team", "tier"],
                    "podTargetLabels": ["version"],
                    "selector": {
                        "matchLabels": {"app": "app-%d" % (i % 500)},
                        "matchExpressions": [{"key": "tier", "operator": "In",
                                              "values": ["web", "db"]}],
                    },
                    "namespaceSelector": {"matchNames": [ns]},
                    "sampleLimit": 50000,
                    "endpoints": eps,
                },
            })
        return items

    def podmonitors(self):
        items = []
        for i in range(self.c["podmonitors"]):
            ns = self.monitor_ns(i, 2)
            eps = [{
                "port": "metrics-%d" % k,
                "path": "/metrics",
                "interval": "15s",
                "relabelings": self.relabelings(i + 100000, 2),
                "metricRelabelings": self.metric_relabelings(i),
            } for k in range(2)]
            items.append({
                "apiVersion": "monitoring.coreos.com/v1",
                "kind": "PodMonitor",
                "metadata": {
                    "name": "pm-%05d" % i,
                    "namespace": ns,
                    "labels": {"group": "g-%03d" % self.group_of(i, MONITORS_PER_GROUP[1]),
                               "app": "app-%d" % (i % 500)},
                },
                "spec": {
                    "jobLabel": "app",
                    "podTargetLabels": ["version", "team"],
                    "selector": {"matchLabels": {"app": "app-%d" % (i % 500)}},
                    "namespaceSelector": {"matchNames": [ns]},
                    "podMetricsEndpoints": eps,
                },
            })
        return items

    def probes(self):
        items = []
        for i in range(self.c["probes"]):
            ns = self.monitor_ns(i, 3)
            items.append({
                "apiVersion": "monitoring.coreos.com/v1",
                "kind": "Probe",
                "metadata": {
                    "name": "probe-%05d" % i,
                    "namespace": ns,
                    "labels": {"group": "g-%03d" % self.group_of(i, MONITORS_PER_GROUP[2])},
                },
                "spec": {
                    "jobName": "blackbox-%d" % i,
                    "interval": "60s",
                    "module": "http_2xx",
                    "prober": {"url": "blackbox-exporter.monitoring.svc:9115",
                               "path": "/probe", "scheme": "http"},
                    "targets": {"staticConfig": {
                        "static": ["https://site-%d-%d.example.com" % (i, k) for k in range(5)],
                        "labels": {"env": "prod", "probe": "p-%d" % i},
                        "relabelingConfigs": self.relabelings(i + 200000, 1),
                    }},
                },
            })
        return items

    def roots(self):
        agents, instances = [], []
        for r in range(self.c["roots"]):
            ns = ns_name(r)
            name = "agent-%03d" % r
            agents.append({
                "apiVersion": "monitoring.grafana.com/v1alpha1",
                "kind": "GrafanaAgent",
                "metadata": {"name": name, "namespace": ns, "labels": {"app": "grafana-agent"}},
                "spec": {
                    "serviceAccountName": "grafana-agent",
                    "logLevel": "info",
                    "metrics": {
                        "instanceSelector": {"matchLabels": {"agent": name}},
                        "externalLabels": {"cluster": "scale-bench", "root": name},
                        "scrapeInterval": "30s",
                        "shards": 1 + r % 2,
                        "replicas": 1,
                    },
                },
            })
            for j in range(1 + r % 3):
                groups = ["g-%03d" % ((r + j) % self.groups), "g-%03d" % ((r + j + 1) % self.groups)]
                sel = {"matchExpressions": [{"key": "group", "operator": "In", "values": groups}]}
                instances.append({
                    "apiVersion": "monitoring.grafana.com/v1alpha1",
                    "kind": "MetricsInstance",
                    "metadata": {"name": "%s-m%d" % (name, j), "namespace": ns,
                                 "labels": {"agent": name}},
                    "spec": {
                        "serviceMonitorSelector": sel,
                        "serviceMonitorNamespaceSelector": {},
                        "podMonitorSelector": sel,
                        "podMonitorNamespaceSelector": {},
                        "probeSelector": sel,
                        "probeNamespaceSelector": {},
                        "remoteWrite": [{
                            "url": "https://prometheus-%d.example.com/api/v1/write" % j,
                            "basicAuth": {
                                "username": {"name": "secret-%05d" % r, "key": "token"},
                                "password": {"name": "secret-%05d" % r, "key": "token"},
                            },
                        }],
                    },
                })
        return agents, instances


def write_list(path, items):
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f,
                  separators=(",", ":"))
    return os.path.getsize(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--scale", type=float, default=1.0)
    args = ap.parse_args()
    if args.scale <= 0:
        sys.exit("gen_data.py: --scale must be positive")
    os.makedirs(args.out_dir, exist_ok=True)
    t0 = time.monotonic()
    g = Gen(args.scale)
    agents, instances = g.roots()
    files = [
        ("00-namespaces.json", g.namespaces()),
        ("10-secrets.json", g.secrets()),
        ("11-configmaps.json", g.configmaps()),
        ("20-servicemonitors.json", g.servicemonitors()),
        ("21-podmonitors.json", g.podmonitors()),
        ("22-probes.json", g.probes()),
        ("30-grafanaagents.json", agents),
        ("31-metricsinstances.json", instances),
    ]
    summary = {"scale": args.scale, "counts": {}, "bytes": {}}
    total = 0
    for name, items in files:
        size = write_list(os.path.join(args.out_dir, name), items)
        kind = name[3:-5]
        summary["counts"][kind] = len(items)
        summary["bytes"][kind] = size
        total += len(items)
    summary["objects"] = total
    summary["roots"] = len(agents)
    summary["telegraf_namespaces"] = g.c["telegraf"]
    summary["marker"] = {"namespace": MARKER_MONITOR[0], "name": MARKER_MONITOR[1],
                         "root_namespace": ns_name(0), "root": "agent-000"}
    summary["seconds"] = round(time.monotonic() - t0, 2)
    with open(os.path.join(args.out_dir, "summary.txt"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
