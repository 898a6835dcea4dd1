// Unit tests of the Grafana Agent controller's pure core: decoding errors with JSON
// paths and nil-versus-empty, discovery semantics and dependencies, asset collection and
// resolution, sanitizers, gzip threshold, strategic merge, determinism.
#include <array>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "k8s/yaml.hpp"
#include "reconcile/agent/config.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/encoding.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/sanitize.hpp"

namespace aop::agent {
namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;

value yaml(std::string_view text) {
  auto v = k8s::yaml::parse(text);
  EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
  return v ? *v : value();
}

// A cluster from a multi-document YAML stream.
MemoryCluster cluster_of(std::string_view text) {
  MemoryCluster c;
  auto docs = k8s::yaml::parse_all(text);
  EXPECT_TRUE(docs.has_value());
  if (!docs) return c;
  for (auto& d : *docs) EXPECT_TRUE(c.add(std::move(d)).has_value());
  return c;
}

GrafanaAgent agent_of(const MemoryCluster& c, std::string_view name = "agent") {
  for (const object* o : c.objects(Kind::grafana_agent)) {
    auto a = decode_grafana_agent(value(*o));
    EXPECT_TRUE(a.has_value()) << (a ? "" : a.error().message);
    if (a && a->metadata.name == name) return *a;
  }
  ADD_FAILURE() << "no GrafanaAgent " << name;
  return {};
}

std::vector<std::string> names(const std::vector<MetricsEntry>& entries) {
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const auto& e : entries) {
    out.push_back(e.instance.metadata.ns + "/" + e.instance.metadata.name);
  }
  return out;
}

template <class T>
std::vector<std::string> names(const std::vector<T>& objs) {
  std::vector<std::string> out;
  out.reserve(objs.size());
  for (const auto& o : objs) out.push_back(o.metadata.ns + "/" + o.metadata.name);
  return out;
}

// ---- decoding -------------------------------------------------------------------------

TEST(Decode, ErrorsCarryTheirJsonPath) {
  auto sm = decode_service_monitor(yaml(R"(
metadata: {name: web, namespace: apps}
spec:
  endpoints:
    - port: http
    - port: 5
      targetPort: true
      relabelings:
        - sourceLabels: [a, 1]
  sampleLimit: -1
)"));
  ASSERT_FALSE(sm.has_value());
  const std::string& m = sm.error().message;
  EXPECT_NE(m.find("spec.endpoints[1].port: expected string, got number"), std::string::npos) << m;
  EXPECT_NE(m.find("spec.endpoints[1].targetPort: expected integer or string, got boolean"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("spec.endpoints[1].relabelings[0].sourceLabels[1]: expected string"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("spec.sampleLimit: expected non-negative integer"), std::string::npos) << m;
}

TEST(Decode, NestedAgentFieldPaths) {
  auto a = decode_grafana_agent(yaml(R"(
metadata: {name: a, namespace: ns1}
spec:
  metrics:
    shards: "3"
    remoteWrite:
      - url: http://x
        basicAuth:
          username: {name: s, key: 7}
)"));
  ASSERT_FALSE(a.has_value());
  const std::string& m = a.error().message;
  EXPECT_NE(m.find("spec.metrics.shards: expected integer, got string"), std::string::npos) << m;
  EXPECT_NE(m.find("spec.metrics.remoteWrite[0].basicAuth.username.key: expected string"),
            std::string::npos)
      << m;
}

TEST(Decode, NilAndEmptyStayDistinct) {
  auto mi = decode_metrics_instance(yaml(R"(
metadata: {name: m, namespace: ns1}
spec:
  serviceMonitorSelector: {}
  podMonitorNamespaceSelector: {}
  writeStaleOnShutdown: false
)"));
  ASSERT_TRUE(mi.has_value()) << mi.error().message;
  EXPECT_TRUE(mi->spec.service_monitor_selector.has_value());
  EXPECT_FALSE(mi->spec.service_monitor_namespace_selector.has_value());
  EXPECT_FALSE(mi->spec.pod_monitor_selector.has_value());
  EXPECT_TRUE(mi->spec.pod_monitor_namespace_selector.has_value());
  ASSERT_TRUE(mi->spec.write_stale_on_shutdown.has_value());
  EXPECT_FALSE(*mi->spec.write_stale_on_shutdown);
  EXPECT_FALSE(mi->spec.additional_scrape_configs.has_value());

  auto sm = decode_service_monitor(yaml(R"(
metadata: {name: s, namespace: ns1}
spec:
  endpoints:
    - honorTimestamps: false
      metricRelabelings: []
      targetPort: 0
      oauth2: {scopes: [], clientSecret: {name: a, key: b}}
    - {}
)"));
  ASSERT_TRUE(sm.has_value()) << sm.error().message;
  const auto& e0 = sm->spec.endpoints[0];
  const auto& e1 = sm->spec.endpoints[1];
  EXPECT_EQ(e0.honor_timestamps, std::optional<bool>(false));
  EXPECT_FALSE(e1.honor_timestamps.has_value());
  EXPECT_TRUE(e0.metric_relabelings.has_value());
  EXPECT_FALSE(e1.metric_relabelings.has_value());
  ASSERT_TRUE(e0.target_port.has_value());
  EXPECT_FALSE(e0.target_port->is_string);
  EXPECT_FALSE(e1.target_port.has_value());
  ASSERT_TRUE(e0.oauth2.has_value());
  EXPECT_TRUE(e0.oauth2->scopes.has_value());
  EXPECT_FALSE(e0.oauth2->endpoint_params.has_value());

  auto ga = decode_grafana_agent(yaml(R"(
metadata: {name: a, namespace: ns1}
spec:
  metrics:
    replicaExternalLabelName: ""
    shards: 0
)"));
  ASSERT_TRUE(ga.has_value());
  EXPECT_EQ(ga->spec.metrics.replica_external_label_name, std::optional<std::string>(""));
  EXPECT_FALSE(ga->spec.metrics.metrics_external_label_name.has_value());
  EXPECT_EQ(ga->spec.metrics.shards, std::optional<std::int64_t>(0));
  EXPECT_FALSE(ga->spec.metrics.replicas.has_value());
  EXPECT_FALSE(ga->spec.metrics.instance_selector.has_value());
}

TEST(Decode, MatchStagesErrorsArePrefixed) {
  auto stages = decode_pipeline_stages(yaml("[{regex: {expression: 5}}, 3]"), "PodLogs a/b: x");
  ASSERT_FALSE(stages.has_value());
  EXPECT_NE(stages.error().message.find("PodLogs a/b: x[0].regex.expression: expected string"),
            std::string::npos)
      << stages.error().message;
  EXPECT_NE(stages.error().message.find("x[1]: expected object, got number"), std::string::npos)
      << stages.error().message;
}

// ---- sanitizers and encodings ---------------------------------------------------------

TEST(Sanitize, LabelNameReplacesEachCodePoint) {
  EXPECT_EQ(sanitize_label_name("/secrets/ns/my-secret/tls.crt"), "_secrets_ns_my_secret_tls_crt");
  EXPECT_EQ(sanitize_label_name("/configMaps/ns/cm/ca.crt"), "_configMaps_ns_cm_ca_crt");
  EXPECT_EQ(sanitize_label_name("caf\xC3\xA9-x"), "caf__x");  // é is one code point
  EXPECT_EQ(sanitize_label_name("a\xE2\x82\xAC"
                                "b"),
            "a_b");  // € (3 bytes) → one _
  EXPECT_EQ(sanitize_label_name("ok_Name9"), "ok_Name9");
}

TEST(Sanitize, VolumeName) {
  EXPECT_EQ(sanitize_volume_name("v0.44.8"), "v0-44-8");
  EXPECT_EQ(sanitize_volume_name("secret-My_Secret..x"), "secret-my-secret-x");
  EXPECT_EQ(sanitize_volume_name("--a--"), "a");
  EXPECT_EQ(sanitize_volume_name(""), "");
  EXPECT_EQ(sanitize_volume_name(std::string(70, 'a') + "-"), std::string(63, 'a'));
}

TEST(Encoding, GzipThresholdIs102400Bytes) {
  const std::string at(kGzipThreshold, 'x');
  EXPECT_EQ(config_secret_payload(at), at);
  const std::string above(kGzipThreshold + 1, 'x');
  const std::string gz = config_secret_payload(above);
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_LT(gz.size(), above.size());
  EXPECT_EQ(gzip_decompress(gz), above);
}

// ---- discovery ------------------------------------------------------------------------

constexpr std::string_view kSelection = R"(
apiVersion: v1
kind: Namespace
metadata: {name: prod, labels: {env: prod}}
---
apiVersion: v1
kind: Namespace
metadata: {name: dev, labels: {env: dev}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: b, namespace: monitoring, labels: {x: "1"}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: a, namespace: monitoring, labels: {x: "1"}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: c, namespace: monitoring}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: p, namespace: prod, labels: {x: "1"}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: d, namespace: dev, labels: {x: "1"}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: o, namespace: orphan, labels: {x: "1"}}
)";

std::vector<std::string> selected(std::string_view metrics_spec) {
  MemoryCluster c = cluster_of(std::string(kSelection) + R"(
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: monitoring}
spec:
  metrics: )" + std::string(metrics_spec));
  Discovery d = discover(agent_of(c), c, Options{});
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error->message);
  return names(d.hierarchy.metrics);
}

TEST(Discovery, NilLabelSelectorSelectsNothing) {
  EXPECT_EQ(selected("{}"), std::vector<std::string>{});
}

TEST(Discovery, EmptyLabelSelectorSelectsEverythingInOwnNamespace) {
  EXPECT_EQ(selected("{instanceSelector: {}}"),
            (std::vector<std::string>{"monitoring/a", "monitoring/b", "monitoring/c"}));
}

TEST(Discovery, MatchLabelsWithNilNamespaceSelector) {
  EXPECT_EQ(selected("{instanceSelector: {matchLabels: {x: '1'}}}"),
            (std::vector<std::string>{"monitoring/a", "monitoring/b"}));
}

TEST(Discovery, EmptyNamespaceSelectorMeansAllNamespacesSorted) {
  EXPECT_EQ(
      selected("{instanceSelector: {matchLabels: {x: '1'}}, instanceNamespaceSelector: {}}"),
      (std::vector<std::string>{"dev/d", "monitoring/a", "monitoring/b", "orphan/o", "prod/p"}));
}

TEST(Discovery, NamespaceSelectorMatchesNamespaceLabels) {
  EXPECT_EQ(
      selected("{instanceSelector: {}, instanceNamespaceSelector: {matchLabels: {env: prod}}}"),
      std::vector<std::string>{"prod/p"});
  EXPECT_EQ(selected("{instanceSelector: {}, instanceNamespaceSelector: "
                     "{matchExpressions: [{key: env, operator: Exists}]}}"),
            (std::vector<std::string>{"dev/d", "prod/p"}));
  EXPECT_EQ(selected("{instanceSelector: {}, instanceNamespaceSelector: "
                     "{matchExpressions: [{key: env, operator: NotIn, values: [dev]}]}}"),
            (std::vector<std::string>{"monitoring/a", "monitoring/b", "monitoring/c", "orphan/o",
                                      "prod/p"}));
}

TEST(Discovery, InvalidSelectorAbortsWithItsPath) {
  MemoryCluster c = cluster_of(std::string(kSelection) + R"(
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: monitoring}
spec:
  metrics:
    instanceSelector:
      matchExpressions: [{key: x, operator: Foo}]
)");
  Discovery d = discover(agent_of(c), c, Options{});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error->message.find("GrafanaAgent monitoring/agent: spec.metrics.instanceSelector: "),
            std::string::npos)
      << d.error->message;
  EXPECT_NE(d.error->message.find("\"Foo\" is not a valid label selector operator"),
            std::string::npos)
      << d.error->message;
}

// A view whose Namespace lookups fail, like an API error upstream.
class FailingNamespaces final : public ClusterView {
 public:
  explicit FailingNamespaces(const MemoryCluster& c) : c_(c) {}
  Result<void> list(Kind kind, std::string_view ns, const k8s::LabelSelector& s,
                    const std::function<void(const object&)>& visit) const override {
    return c_.list(kind, ns, s, visit);
  }
  Result<Labels> namespace_labels(std::string_view) const override {
    return make_error("connection refused");
  }

 private:
  const MemoryCluster& c_;
};

TEST(Discovery, NamespaceLookupFailureAbortsButKeepsDependencies) {
  MemoryCluster c = cluster_of(std::string(kSelection) + R"(
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: monitoring}
spec:
  metrics:
    instanceSelector: {}
    instanceNamespaceSelector: {matchLabels: {env: prod}}
)");
  FailingNamespaces view(c);
  Discovery d = discover(agent_of(c), view, Options{});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error->message.find("connection refused"), std::string::npos) << d.error->message;
  ASSERT_EQ(d.dependencies.lists.size(), 1u);
  EXPECT_EQ(d.dependencies.lists[0].scope, NamespaceScope::selected);
}

constexpr std::string_view kShared = R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: one, namespace: monitoring}
spec:
  metrics:
    instanceSelector: {matchLabels: {shared: "yes"}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: two, namespace: monitoring}
spec:
  metrics:
    instanceSelector: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: shared, namespace: monitoring, labels: {shared: "yes"}}
spec:
  serviceMonitorSelector: {matchLabels: {team: a}}
  serviceMonitorNamespaceSelector: {matchLabels: {kind: apps}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: second, namespace: monitoring}
spec:
  serviceMonitorSelector: {}
  serviceMonitorNamespaceSelector: {}
  additionalScrapeConfigs: {name: extra, key: k}
---
apiVersion: v1
kind: Namespace
metadata: {name: apps, labels: {kind: apps}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web, namespace: apps, labels: {team: a}}
spec:
  endpoints: [{port: http, bearerTokenSecret: {name: tok, key: t}}]
)";

TEST(Discovery, SharedMembersAppearUnderEveryParentAndRoot) {
  MemoryCluster c = cluster_of(kShared);
  Discovery one = discover(agent_of(c, "one"), c, Options{});
  Discovery two = discover(agent_of(c, "two"), c, Options{});
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(names(one.hierarchy.metrics), std::vector<std::string>{"monitoring/shared"});
  EXPECT_EQ(names(two.hierarchy.metrics),
            (std::vector<std::string>{"monitoring/second", "monitoring/shared"}));
  // The ServiceMonitor is rendered by both instances of root two.
  EXPECT_EQ(names(two.hierarchy.metrics[0].service_monitors), std::vector<std::string>{"apps/web"});
  EXPECT_EQ(names(two.hierarchy.metrics[1].service_monitors), std::vector<std::string>{"apps/web"});
  // Its secret reference is collected once, attributed to its namespace.
  const auto& refs = two.hierarchy.asset_refs;
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0].asset_key(), "/secrets/monitoring/extra/k");
  EXPECT_EQ(refs[1].asset_key(), "/secrets/apps/tok/t");
  EXPECT_EQ(refs[1].owner_kind, Kind::service_monitor);
}

TEST(Discovery, DependenciesDescribeEveryListAndObject) {
  MemoryCluster c = cluster_of(kShared);
  Discovery d = discover(agent_of(c, "two"), c, Options{});
  ASSERT_TRUE(d.ok());
  const auto& lists = d.dependencies.lists;
  // MetricsInstances in monitoring; then per instance its ServiceMonitors (selected
  // namespaces / all namespaces). Nil selectors (PodMonitors, Probes, logs, integrations)
  // match nothing and need no watch.
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[0].kind, Kind::metrics_instance);
  EXPECT_EQ(lists[0].scope, NamespaceScope::one);
  EXPECT_EQ(lists[0].ns, "monitoring");
  EXPECT_TRUE(lists[0].selector.matches_everything());
  EXPECT_EQ(lists[1].kind, Kind::service_monitor);
  EXPECT_EQ(lists[1].scope, NamespaceScope::all);
  EXPECT_EQ(lists[2].kind, Kind::service_monitor);
  EXPECT_EQ(lists[2].scope, NamespaceScope::selected);
  EXPECT_EQ(lists[2].namespace_selector.to_string(), "kind=apps");
  EXPECT_EQ(lists[2].selector.to_string(), "team=a");
  ASSERT_EQ(d.dependencies.objects.size(), 2u);
  EXPECT_EQ(d.dependencies.objects[0].key.str(), "apps/tok");
  EXPECT_EQ(d.dependencies.objects[1].key.str(), "monitoring/extra");
}

TEST(Discovery, UndecodableMemberIsSkippedAndReported) {
  MemoryCluster c = cluster_of(R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: monitoring}
spec:
  metrics: {instanceSelector: {}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: good, namespace: monitoring}
spec: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: bad, namespace: monitoring}
spec: {walTruncateFrequency: 5}
)");
  Discovery d = discover(agent_of(c), c, Options{});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(names(d.hierarchy.metrics), std::vector<std::string>{"monitoring/good"});
  ASSERT_EQ(d.hierarchy.problems.size(), 1u);
  EXPECT_EQ(d.hierarchy.problems[0].str(),
            "MetricsInstance monitoring/bad: spec.walTruncateFrequency: expected string, got "
            "number");
}

// ---- assets ---------------------------------------------------------------------------

TEST(Assets, CollectionFollowsUpstreamEmptinessRules) {
  MemoryCluster c = cluster_of(R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: ga}
spec:
  metrics:
    instanceSelector: {}
    remoteWrite:
      - url: x
        basicAuth:
          username: {name: u, key: ""}
          password: {name: "", key: p}
        tlsConfig:
          ca: {secret: {name: "", key: ""}}
          keySecret: {name: k, key: ""}
        oauth2:
          clientId: {configMap: {name: cm, key: id}}
          clientSecret: {name: cs, key: s}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: i, namespace: other}
spec:
  name: node_exporter
  secrets: [{name: "", key: ""}]
)");
  GrafanaAgent a = agent_of(c);
  a.spec.integrations.selector = LabelSelectorSpec{};
  a.spec.integrations.namespace_selector = LabelSelectorSpec{};
  Discovery d = discover(a, c, Options{});
  ASSERT_TRUE(d.ok()) << d.error->message;
  std::vector<std::string> keys;
  for (const auto& r : d.hierarchy.asset_refs) keys.push_back(r.asset_key());
  // basicAuth selectors (held by value) with an empty name or key are not collected;
  // pointer-held ones and list elements are, even when empty.
  EXPECT_EQ(keys,
            (std::vector<std::string>{"/configMaps/ga/cm/id", "/secrets/ga/cs/s", "/secrets/ga//",
                                      "/secrets/ga/k/", "/secrets/other//"}));
}

TEST(Assets, ResolutionAbsentObjectVersusAbsentKey) {
  MemoryCluster c = cluster_of(R"(
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: ns1}
data: {a: QQ==}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns1}
data: {text: T}
binaryData: {bin: Qg==, text: Qg==}
)");
  Hierarchy h;
  h.agent.metadata = {"agent", "ns1"};
  h.asset_refs = {AssetRef{AssetKind::secret, "ns1", "s", "a"},
                  AssetRef{AssetKind::secret, "ns1", "absent", "x"},
                  AssetRef{AssetKind::config_map, "ns1", "cm", "text"},
                  AssetRef{AssetKind::config_map, "ns1", "cm", "bin"}};
  auto store = resolve_assets(h, c);
  ASSERT_TRUE(store.has_value()) << store.error().message;
  EXPECT_EQ(store->values, (std::map<std::string, std::string>{{"/secrets/ns1/s/a", "A"},
                                                               {"/configMaps/ns1/cm/text", "T"},
                                                               {"/configMaps/ns1/cm/bin", "B"}}));

  h.asset_refs.push_back(AssetRef{AssetKind::config_map, "ns1", "cm", "none"});
  auto missing_cm = resolve_assets(h, c);
  ASSERT_FALSE(missing_cm.has_value());
  EXPECT_EQ(missing_cm.error().message.rfind("no key none in ConfigMap cm", 0), 0u)
      << missing_cm.error().message;

  h.asset_refs.back() = AssetRef{AssetKind::secret, "ns1", "s", "b"};
  auto missing = resolve_assets(h, c);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message.rfind("no key b in Secret s", 0), 0u)
      << missing.error().message;
}

TEST(Assets, SanitizedKeyCollisionsAreReported) {
  AssetStore store;
  store.values = {{"/secrets/n/a-b/c", "1"}, {"/secrets/n/a_b/c", "2"}, {"/secrets/n/x/y", "3"}};
  GrafanaAgent a;
  a.metadata = {"agent", "n"};
  std::vector<Problem> problems;
  const auto data = asset_secret_data(store, a, &problems);
  EXPECT_EQ(data, (std::map<std::string, std::string>{{"_secrets_n_a_b_c", "2"},
                                                      {"_secrets_n_x_y", "3"}}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].severity, Severity::warning);
  EXPECT_NE(problems[0].message.find("/secrets/n/a-b/c and /secrets/n/a_b/c"), std::string::npos);
}

// ---- rendering ------------------------------------------------------------------------

Hierarchy metrics_hierarchy(std::string_view text) {
  MemoryCluster c = cluster_of(text);
  Discovery d = discover(agent_of(c), c, Options{});
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error->message);
  return d.hierarchy;
}

TEST(Render, PreservesTheGivenOrder) {
  Hierarchy h;
  h.agent.metadata = {"agent", "ns"};
  for (const char* n : {"zeta", "alpha"}) {
    MetricsEntry e;
    e.instance.metadata = {n, "ns"};
    h.metrics.push_back(e);
  }
  auto tree = metrics_config_tree(h, AssetStore{}, Options{}, nullptr);
  ASSERT_TRUE(tree.has_value());
  const auto& configs = tree->at("metrics").at("configs").as_array();
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].at("name"), "ns/zeta");
  EXPECT_EQ(configs[1].at("name"), "ns/alpha");
}

TEST(Render, AdditionalScrapeConfigsMustBeAList) {
  Hierarchy h;
  h.agent.metadata = {"agent", "ns"};
  MetricsEntry e;
  e.instance.metadata = {"m", "ns"};
  e.instance.spec.additional_scrape_configs = SecretKeySelector{"extra", "k"};
  h.metrics.push_back(e);
  AssetStore assets;
  assets.values["/secrets/ns/extra/k"] = "job_name: x\n";
  auto tree = metrics_config_tree(h, assets, Options{}, nullptr);
  ASSERT_FALSE(tree.has_value());
  EXPECT_NE(tree.error().message.find("MetricsInstance ns/m: spec.additionalScrapeConfigs "
                                      "(Secret ns/extra key k): expected a YAML list"),
            std::string::npos)
      << tree.error().message;

  assets.values["/secrets/ns/extra/k"] = "- [unclosed\n";
  tree = metrics_config_tree(h, assets, Options{}, nullptr);
  ASSERT_FALSE(tree.has_value());
  EXPECT_NE(tree.error().message.find("not valid YAML"), std::string::npos);

  assets.values["/secrets/ns/extra/k"] = "";
  tree = metrics_config_tree(h, assets, Options{}, nullptr);
  ASSERT_TRUE(tree.has_value());
  EXPECT_FALSE(tree->at("metrics").at("configs").at(0).as_object().contains("scrape_configs"));
}

TEST(Render, SelectorExpressionWithoutValuesSkipsOnlyThatMonitor) {
  Hierarchy h = metrics_hierarchy(R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: ns1}
spec: {metrics: {instanceSelector: {}}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: m, namespace: ns1}
spec: {serviceMonitorSelector: {}, podMonitorSelector: {}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: bad, namespace: ns1}
spec:
  selector: {matchExpressions: [{key: a, operator: NotIn, values: []}]}
  endpoints: [{port: x}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: good, namespace: ns1}
spec:
  endpoints: [{port: x}]
---
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata: {name: badpm, namespace: ns1}
spec:
  selector: {matchExpressions: [{key: a, operator: In}]}
  podMetricsEndpoints: [{port: x}]
)");
  std::vector<Problem> problems;
  auto tree = metrics_config_tree(h, AssetStore{}, Options{}, &problems);
  ASSERT_TRUE(tree.has_value()) << tree.error().message;
  const auto& scrape = tree->at("metrics").at("configs").at(0).at("scrape_configs").as_array();
  ASSERT_EQ(scrape.size(), 1u);
  EXPECT_EQ(scrape[0].at("job_name"), "serviceMonitor/ns1/good/0");
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].str(),
            "ServiceMonitor ns1/bad: spec.selector.matchExpressions[0].values: operator In/NotIn "
            "needs at least one value; ServiceMonitor skipped");
  EXPECT_EQ(problems[1].kind, Kind::pod_monitor);
}

TEST(Render, IgnoreNamespaceSelectorsAndHonorOverrides) {
  Hierarchy h = metrics_hierarchy(R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: ns1}
spec:
  apiServer: {host: "https://api:6443"}
  metrics:
    instanceSelector: {}
    ignoreNamespaceSelectors: true
    overrideHonorTimestamps: true
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: m, namespace: ns1}
spec: {serviceMonitorSelector: {}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: sm, namespace: ns1}
spec:
  namespaceSelector: {any: true}
  endpoints:
    - {port: a, honorLabels: true}
    - {port: b, honorTimestamps: true}
)");
  auto tree = metrics_config_tree(h, AssetStore{}, Options{}, nullptr);
  ASSERT_TRUE(tree.has_value()) << tree.error().message;
  const auto& scrape = tree->at("metrics").at("configs").at(0).at("scrape_configs").as_array();
  ASSERT_EQ(scrape.size(), 2u);
  // ignoreNamespaceSelectors forces the monitor's own namespace over `any`; the API
  // server block carries only the host.
  EXPECT_EQ(
      scrape[0].at("kubernetes_sd_configs"),
      yaml("[{role: endpoints, api_server: 'https://api:6443', namespaces: {names: [ns1]}}]"));
  // honorLabels is not overridden; honorTimestamps is, nil included (false, emitted).
  EXPECT_EQ(scrape[0].at("honor_labels"), true);
  EXPECT_EQ(scrape[0].at("honor_timestamps"), false);
  EXPECT_EQ(scrape[1].at("honor_labels"), false);
  EXPECT_EQ(scrape[1].at("honor_timestamps"), false);
}

TEST(Render, SameStateGivesByteIdenticalOutputWhateverTheInputOrder) {
  // One document per object: (kind, namespace/name, spec).
  const std::vector<std::array<std::string, 3>> objects = {
      {"monitoring.grafana.com/v1alpha1 GrafanaAgent", "agent ns1",
       "{metrics: {instanceSelector: {}, shards: 2}}"},
      {"monitoring.grafana.com/v1alpha1 MetricsInstance", "m1 ns1",
       "{serviceMonitorSelector: {}, serviceMonitorNamespaceSelector: {}}"},
      {"monitoring.grafana.com/v1alpha1 MetricsInstance", "m0 ns1", "{serviceMonitorSelector: {}}"},
      {"monitoring.coreos.com/v1 ServiceMonitor", "b z", "{endpoints: [{port: a}, {port: b}]}"},
      {"monitoring.coreos.com/v1 ServiceMonitor", "a z", "{endpoints: [{port: c}]}"},
      {"monitoring.coreos.com/v1 ServiceMonitor", "c ns1", "{endpoints: [{port: d}]}"},
  };
  std::vector<std::string> docs;
  for (const auto& [type, key, spec] : objects) {
    const auto t = type.find(' ');
    const auto k = key.find(' ');
    docs.push_back("apiVersion: " + type.substr(0, t) + "\nkind: " + type.substr(t + 1) +
                   "\nmetadata: {name: " + key.substr(0, k) + ", namespace: " + key.substr(k + 1) +
                   ", uid: u}\nspec: " + spec + "\n");
  }
  auto render = [&](const std::vector<std::size_t>& order) {
    std::string text;
    for (auto i : order) text += "---\n" + docs[i];
    MemoryCluster c = cluster_of(text);
    Discovery d = discover(agent_of(c), c, Options{});
    EXPECT_TRUE(d.ok());
    auto cfg = render_metrics_config(d.hierarchy, AssetStore{}, Options{});
    EXPECT_TRUE(cfg.has_value());
    return cfg ? cfg->text : std::string();
  };
  const std::string first = render({0, 1, 2, 3, 4, 5});
  EXPECT_EQ(render({5, 4, 3, 2, 1, 0}), first);
  EXPECT_EQ(render({3, 0, 5, 1, 4, 2}), first);
  // m0 sorts before m1; in m1 ({} namespace selector) ns1/c sorts before z/a, z/b.
  const auto m0 = first.find("name: ns1/m0");
  const auto m1 = first.find("name: ns1/m1");
  EXPECT_LT(m0, m1);
  const auto c = first.find("serviceMonitor/ns1/c/0", m1);
  const auto a = first.find("serviceMonitor/z/a/0", m1);
  const auto b1 = first.find("serviceMonitor/z/b/1", m1);
  EXPECT_LT(c, a);
  EXPECT_LT(a, b1);
  EXPECT_NE(b1, std::string::npos);
  EXPECT_EQ(first.substr(first.size() - 2), "\n\n");
}

TEST(Objects, LargeConfigIsStoredGzipped) {
  std::string text =
      "apiVersion: monitoring.grafana.com/v1alpha1\nkind: GrafanaAgent\nmetadata: {name: agent, "
      "namespace: ns1, uid: u}\nspec: {metrics: {instanceSelector: {}}}\n---\napiVersion: "
      "monitoring.grafana.com/v1alpha1\nkind: MetricsInstance\nmetadata: {name: m, namespace: "
      "ns1}\nspec: {serviceMonitorSelector: {}}\n";
  for (int i = 0; i < 80; ++i) {
    text +=
        "---\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: "
        "sm" +
        std::to_string(i) + ", namespace: ns1}\nspec: {endpoints: [{port: web}]}\n";
  }
  MemoryCluster c = cluster_of(text);
  Discovery d = discover(agent_of(c), c, Options{});
  ASSERT_TRUE(d.ok());
  auto cfg = render_metrics_config(d.hierarchy, AssetStore{}, Options{});
  ASSERT_TRUE(cfg.has_value());
  ASSERT_GT(cfg->text.size(), kGzipThreshold);
  DesiredState s = build_objects(d.hierarchy, AssetStore{}, Options{});
  ASSERT_FALSE(s.error.has_value());
  const object* secret = s.find(Kind::secret, "agent-config");
  ASSERT_NE(secret, nullptr);
  auto bytes = k8s::base64_decode(secret->at("data").at("agent.yml").as_string());
  ASSERT_TRUE(bytes.has_value());
  ASSERT_GE(bytes->size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>((*bytes)[0]), 0x1f);
  EXPECT_EQ(gzip_decompress(*bytes), cfg->text);
}

TEST(Objects, ShardsShrinkingKeepsOnlyRemainingNames) {
  Hierarchy h;
  h.agent.metadata = {"agent", "n", "uid-1"};
  h.agent.spec.metrics.shards = 1;
  MetricsEntry e;
  e.instance.metadata = {"m", "n"};
  h.metrics.push_back(e);
  DesiredState s = build_objects(h, AssetStore{}, Options{});
  const Step* prune = nullptr;
  for (const auto& st : s.steps) {
    if (st.action == Step::Action::prune) prune = &st;
  }
  ASSERT_NE(prune, nullptr);
  EXPECT_EQ(prune->prune.keep, std::vector<std::string>{"agent"});
  EXPECT_EQ(prune->prune.owner_uid, "uid-1");
  EXPECT_EQ(prune->prune.ns, "n");

  // No MetricsInstance: the Service and config Secret are deleted, every shard pruned.
  h.metrics.clear();
  s = build_objects(h, AssetStore{}, Options{});
  EXPECT_EQ(s.find(Kind::service, "agent-operated"), nullptr);
  bool deletes_service = false;
  for (const auto& st : s.steps) {
    if (st.action == Step::Action::delete_if_managed && st.kind == Kind::service &&
        st.key.name == "agent-operated") {
      deletes_service = true;
    }
    if (st.action == Step::Action::prune) {
      EXPECT_TRUE(st.prune.keep.empty());
    }
  }
  EXPECT_TRUE(deletes_service);
}

TEST(Objects, CompatFixedServiceSelectsOnlyMetricsPods) {
  Hierarchy h;
  h.agent.metadata = {"agent", "n", "u"};
  h.metrics.emplace_back();
  h.metrics[0].instance.metadata = {"m", "n"};
  Options fixed;
  fixed.compat = Compat::fixed;
  const auto up = build_objects(h, AssetStore{}, Options{});
  const auto fx = build_objects(h, AssetStore{}, fixed);
  const auto& up_sel = up.find(Kind::service, "agent-operated")->at("spec").at("selector");
  const auto& fx_sel = fx.find(Kind::service, "agent-operated")->at("spec").at("selector");
  EXPECT_FALSE(up_sel.as_object().contains("operator.agent.grafana.com/type"));
  EXPECT_EQ(fx_sel.at("operator.agent.grafana.com/type"), "metrics");
}

// ---- strategic merge ------------------------------------------------------------------

TEST(StrategicMerge, ContainerListsMergeByKeyAndOthersReplace) {
  const object generated = yaml(R"(
name: c
args: [a, b]
ports: [{name: http, containerPort: 80}, {name: grpc, containerPort: 90}]
env: [{name: A, value: "1"}, {name: B, value: "2"}]
resources: {requests: {cpu: 1}}
)")
                               .as_object();
  const object patch = yaml(R"(
name: c
args: [z]
ports: [{containerPort: 90, protocol: UDP}, {containerPort: 100, name: new}]
env: [{name: B, value: "3"}]
resources: {limits: {cpu: 2}}
image: null
)")
                           .as_object();
  const object merged = strategic_merge_container(generated, patch);
  EXPECT_EQ(value(merged), yaml(R"(
name: c
args: [z]
ports: [{name: http, containerPort: 80}, {name: grpc, containerPort: 90, protocol: UDP},
        {containerPort: 100, name: new}]
env: [{name: A, value: "1"}, {name: B, value: "3"}]
resources: {requests: {cpu: 1}, limits: {cpu: 2}}
)"));
}

TEST(StrategicMerge, UnknownContainersAreAppendedInOrder) {
  const array generated = yaml("[{name: a}, {name: b}]").as_array();
  const array user = yaml("[{name: x}, {name: b, image: i}, {name: y}]").as_array();
  EXPECT_EQ(value(merge_containers(generated, user)),
            yaml("[{name: a}, {name: b, image: i}, {name: x}, {name: y}]"));
}

}  // namespace
}  // namespace aop::agent

namespace aop::agent {
namespace {

TEST(MemoryCluster, NonStringNamespaceIsAnErrorNotTheDefaultNamespace) {
  MemoryCluster cluster;
  // `namespace: y` in YAML 1.1 is the boolean true: render must say so, not use "default".
  auto r = cluster.add(boost::json::parse(
      R"({"apiVersion":"monitoring.grafana.com/v1alpha1","kind":"GrafanaAgent",
          "metadata":{"name":"x","namespace":true}})"));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("metadata.namespace must be a string"), std::string::npos);
  EXPECT_TRUE(cluster.objects(Kind::grafana_agent).empty());
}

}  // namespace
}  // namespace aop::agent
