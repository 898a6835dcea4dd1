// One GrafanaAgent root shaped like the roots of the scale benchmark (bench/scale/
// gen_data.py): 3 MetricsInstances, each selecting two monitor groups in every
// namespace; a group holds 50 ServiceMonitors (2–4 endpoints with relabelings, metric
// relabelings, TLS CA and bearer token from Secrets), 20 PodMonitors (2 endpoints) and
// 5 Probes. About 1,200 scrape configs, a ~3.5 MB agent.yml (gzip-compressed in its
// Secret). Objects carry uids and resourceVersions like the API server's.
#pragma once

#include <string>

#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/memory_cluster.hpp"

namespace aop::bench {

class ScaleRoot {
 public:
  static constexpr int kInstances = 3;
  static constexpr int kGroups = kInstances + 1;  // instance j selects groups j and j + 1
  static constexpr int kServiceMonitors = 50;     // per group
  static constexpr int kPodMonitors = 20;
  static constexpr int kProbes = 5;
  static constexpr int kNamespaces = 200;

  ScaleRoot() {
    add(agent_json());
    for (int j = 0; j < kInstances; ++j) add(instance(j));
    for (int n = 0; n < kNamespaces; ++n) add(secret(n));
    for (int g = 0; g < kGroups; ++g) {
      for (int i = 0; i < kServiceMonitors; ++i) add(service_monitor(g * kServiceMonitors + i, 0));
      for (int i = 0; i < kPodMonitors; ++i) add(pod_monitor(g * kPodMonitors + i));
      for (int i = 0; i < kProbes; ++i) add(probe(g * kProbes + i));
    }
  }

  agent::MemoryCluster& cluster() { return cluster_; }
  // Another GrafanaAgent in the same namespace selecting the same instances (so the same
  // members), with external labels of its own: as several agents scraping the same
  // services. Returns it as stored.
  k8s::ObjectPtr add_root(int n) {
    boost::json::object a = agent_json();
    const std::string name = "agent-" + std::to_string(1000 + n);
    a["metadata"].as_object()["name"] = name;
    a["spec"].as_object()["metrics"].as_object()["externalLabels"] =
        boost::json::object{{"cluster", "scale-bench"}, {"root", name}};
    add(std::move(a));
    for (const auto& r : cluster_.compact(agent::Kind::grafana_agent)) {
      if (r->name() == name) return r;
    }
    return nullptr;
  }
  agent::GrafanaAgent agent() const {
    return agent::decode_grafana_agent(boost::json::value(agent_json())).value();
  }
  // The root as stored (the pipeline's input).
  k8s::ObjectPtr root() const { return cluster_.compact(agent::Kind::grafana_agent).at(0); }
  // A churn edit: ServiceMonitor `i` with a changed relabeling and the next version.
  void edit_service_monitor(int i) { add(service_monitor(i, ++edits_)); }
  static int service_monitors() { return kGroups * kServiceMonitors; }

 private:
  void add(boost::json::object o) {
    auto& md = o["metadata"].as_object();
    const std::string id = std::string(o["kind"].as_string()) + "/" +
                           std::string(md["namespace"].as_string()) + "/" +
                           std::string(md["name"].as_string());
    md["uid"] = "uid-" + id;
    md["resourceVersion"] = std::to_string(++rv_);
    (void)cluster_.add(boost::json::value(std::move(o)));
  }

  static std::string ns_name(int n) { return "ns-" + std::to_string(n); }
  static std::string monitor_ns(int i, int salt) { return ns_name((i * 37 + salt) % kNamespaces); }
  static std::string group(int g) { return "g-" + std::to_string(g); }

  static boost::json::object agent_json() {
    return boost::json::parse(R"({
      "apiVersion": "monitoring.grafana.com/v1alpha1", "kind": "GrafanaAgent",
      "metadata": {"name": "agent-000", "namespace": "ns-0", "uid": "agent-uid",
                   "labels": {"app": "grafana-agent"}},
      "spec": {"serviceAccountName": "grafana-agent", "logLevel": "info",
               "metrics": {"instanceSelector": {"matchLabels": {"agent": "agent-000"}},
                           "externalLabels": {"cluster": "scale-bench", "root": "agent-000"},
                           "scrapeInterval": "30s", "shards": 2, "replicas": 1}}})")
        .as_object();
  }

  static boost::json::object instance(int j) {
    boost::json::object sel{
        {"matchExpressions", boost::json::array{boost::json::object{
                                 {"key", "group"},
                                 {"operator", "In"},
                                 {"values", boost::json::array{group(j), group(j + 1)}}}}}};
    boost::json::object spec{
        {"serviceMonitorSelector", sel},
        {"serviceMonitorNamespaceSelector", boost::json::object()},
        {"podMonitorSelector", sel},
        {"podMonitorNamespaceSelector", boost::json::object()},
        {"probeSelector", sel},
        {"probeNamespaceSelector", boost::json::object()},
        {"remoteWrite",
         boost::json::array{boost::json::object{
             {"url", "https://prometheus-" + std::to_string(j) + ".example.com/api/v1/write"},
             {"basicAuth",
              boost::json::object{
                  {"username", boost::json::object{{"name", "secret-0"}, {"key", "token"}}},
                  {"password", boost::json::object{{"name", "secret-0"}, {"key", "token"}}}}}}}}};
    return boost::json::object{
        {"apiVersion", "monitoring.grafana.com/v1alpha1"},
        {"kind", "MetricsInstance"},
        {"metadata", boost::json::object{{"name", "agent-000-m" + std::to_string(j)},
                                         {"namespace", "ns-0"},
                                         {"labels", boost::json::object{{"agent", "agent-000"}}}}},
        {"spec", std::move(spec)}};
  }

  static boost::json::object secret(int n) {
    std::string pem = "-----BEGIN CERTIFICATE-----\n";
    for (int k = 0; k < 16; ++k)
      pem += std::string(64, static_cast<char>('A' + (n + k) % 26)) + "\n";
    pem += "-----END CERTIFICATE-----\n";
    return boost::json::object{
        {"apiVersion", "v1"},
        {"kind", "Secret"},
        {"metadata",
         boost::json::object{{"name", "secret-" + std::to_string(n)}, {"namespace", ns_name(n)}}},
        {"data", boost::json::object{{"token", k8s::base64_encode("token-" + std::to_string(n) +
                                                                  std::string(96, 'x'))},
                                     {"ca.crt", k8s::base64_encode(pem)}}}};
  }

  static boost::json::array relabelings(int i, int n, const std::string& tag) {
    boost::json::array out;
    for (int k = 0; k < n; ++k) {
      out.push_back(boost::json::object{
          {"sourceLabels",
           boost::json::array{"__meta_kubernetes_pod_label_app", "__meta_kubernetes_pod_name"}},
          {"separator", ";"},
          {"regex", "(app-" + std::to_string(i % 97) + ");(.*)"},
          {"targetLabel", "label_" + std::to_string(k)},
          {"replacement", "value-" + std::to_string(i) + "-" + std::to_string(k) + tag},
          {"action", "replace"}});
    }
    return out;
  }

  static boost::json::array metric_relabelings(int i) {
    return boost::json::array{
        boost::json::object{{"sourceLabels", boost::json::array{"__name__"}},
                            {"regex", "go_gc_.*|process_.*_" + std::to_string(i % 13)},
                            {"action", "drop"}},
        boost::json::object{{"regex", "pod_template_hash"}, {"action", "labeldrop"}}};
  }

  static boost::json::object service_monitor(int i, int edit) {
    const std::string ns = monitor_ns(i, 1);
    const int nsi = (i * 37 + 1) % kNamespaces;
    const std::string tag = edit == 0 ? std::string() : "-churn-" + std::to_string(edit);
    boost::json::array eps;
    for (int k = 0; k < 2 + i % 3; ++k) {
      boost::json::object ep{{"port", "http-metrics-" + std::to_string(k)},
                             {"path", "/metrics"},
                             {"interval", "30s"},
                             {"scrapeTimeout", "10s"},
                             {"scheme", k == 0 ? "https" : "http"},
                             {"honorLabels", k == 1},
                             {"relabelings", relabelings(i, 3, k == 0 ? tag : std::string())},
                             {"metricRelabelings", metric_relabelings(i)}};
      if (k == 0) {
        const std::string s = "secret-" + std::to_string(nsi);
        ep["tlsConfig"] = boost::json::object{
            {"ca",
             boost::json::object{{"secret", boost::json::object{{"name", s}, {"key", "ca.crt"}}}}},
            {"serverName", "svc-" + std::to_string(i) + "." + ns + ".svc"}};
        ep["bearerTokenSecret"] = boost::json::object{{"name", s}, {"key", "token"}};
      }
      eps.push_back(std::move(ep));
    }
    const std::string app = "app-" + std::to_string(i % 500);
    return boost::json::object{
        {"apiVersion", "monitoring.coreos.com/v1"},
        {"kind", "ServiceMonitor"},
        {"metadata",
         boost::json::object{{"name", "sm-" + std::to_string(i)},
                             {"namespace", ns},
                             {"labels", boost::json::object{{"group", group(i / kServiceMonitors)},
                                                            {"app", app}}}}},
        {"spec",
         boost::json::object{
             {"jobLabel", "app.kubernetes.io/name"},
             {"targetLabels", boost::json::array{"team", "tier"}},
             {"podTargetLabels", boost::json::array{"version"}},
             {"selector", boost::json::object{{"matchLabels", boost::json::object{{"app", app}}},
                                              {"matchExpressions",
                                               boost::json::array{boost::json::object{
                                                   {"key", "tier"},
                                                   {"operator", "In"},
                                                   {"values", boost::json::array{"web", "db"}}}}}}},
             {"namespaceSelector", boost::json::object{{"matchNames", boost::json::array{ns}}}},
             {"sampleLimit", 50000},
             {"endpoints", std::move(eps)}}}};
  }

  static boost::json::object pod_monitor(int i) {
    const std::string ns = monitor_ns(i, 2);
    boost::json::array eps;
    for (int k = 0; k < 2; ++k) {
      eps.push_back(boost::json::object{{"port", "metrics-" + std::to_string(k)},
                                        {"path", "/metrics"},
                                        {"interval", "15s"},
                                        {"relabelings", relabelings(i + 100000, 2, "")},
                                        {"metricRelabelings", metric_relabelings(i)}});
    }
    return boost::json::object{
        {"apiVersion", "monitoring.coreos.com/v1"},
        {"kind", "PodMonitor"},
        {"metadata",
         boost::json::object{{"name", "pm-" + std::to_string(i)},
                             {"namespace", ns},
                             {"labels", boost::json::object{{"group", group(i / kPodMonitors)}}}}},
        {"spec",
         boost::json::object{
             {"jobLabel", "app"},
             {"podTargetLabels", boost::json::array{"version", "team"}},
             {"selector",
              boost::json::object{
                  {"matchLabels", boost::json::object{{"app", "app-" + std::to_string(i % 500)}}}}},
             {"namespaceSelector", boost::json::object{{"matchNames", boost::json::array{ns}}}},
             {"podMetricsEndpoints", std::move(eps)}}}};
  }

  static boost::json::object probe(int i) {
    boost::json::array targets;
    for (int k = 0; k < 5; ++k) {
      targets.push_back(boost::json::string("https://site-" + std::to_string(i) + "-" +
                                            std::to_string(k) + ".example.com"));
    }
    return boost::json::object{
        {"apiVersion", "monitoring.coreos.com/v1"},
        {"kind", "Probe"},
        {"metadata",
         boost::json::object{{"name", "probe-" + std::to_string(i)},
                             {"namespace", monitor_ns(i, 3)},
                             {"labels", boost::json::object{{"group", group(i / kProbes)}}}}},
        {"spec",
         boost::json::object{
             {"jobName", "blackbox-" + std::to_string(i)},
             {"interval", "60s"},
             {"module", "http_2xx"},
             {"prober", boost::json::object{{"url", "blackbox-exporter.monitoring.svc:9115"},
                                            {"path", "/probe"},
                                            {"scheme", "http"}}},
             {"targets",
              boost::json::object{
                  {"staticConfig",
                   boost::json::object{
                       {"static", std::move(targets)},
                       {"labels",
                        boost::json::object{{"env", "prod"}, {"probe", "p-" + std::to_string(i)}}},
                       {"relabelingConfigs", relabelings(i + 200000, 1, "")}}}}}}}};
  }

  agent::MemoryCluster cluster_;
  int rv_ = 1000;
  int edits_ = 0;
};

}  // namespace aop::bench
