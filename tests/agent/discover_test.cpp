// The discover stage: what each selector selects (nil, empty, namespace selectors),
// what was listed to find it (the dependencies, also after a failure), sorting, shared
// members, undecodable members; and the in-memory cluster render reads.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/agent/memory_cluster.hpp"
#include "tests/agent/pipeline_support.hpp"

namespace aop::agent {
namespace {

using namespace aop::agent::testing;

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
  auto d = discover_in(c, agent_of(c));
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.failure->message);
  return names(d.value.hierarchy.metrics);
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
  auto d = discover_in(c, agent_of(c));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.failure->stage, Stage::discover);
  EXPECT_EQ(d.failure->code, runtime::Errc::discovery_failed);
  EXPECT_NE(
      d.failure->message.find("GrafanaAgent monitoring/agent: spec.metrics.instanceSelector: "),
      std::string::npos)
      << d.failure->message;
  EXPECT_NE(d.failure->message.find("\"Foo\" is not a valid label selector operator"),
            std::string::npos)
      << d.failure->message;
}

// A view whose Namespace lookups fail, like an API error upstream.
class FailingNamespaces final : public ClusterView {
 public:
  explicit FailingNamespaces(const MemoryCluster& c) : c_(c) {}
  Result<void> list(Kind kind, std::string_view ns, const k8s::LabelSelector& s,
                    const std::function<void(const ListedObject&)>& visit) const override {
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
  DecodeCache uncached(false);
  auto d = discover(agent_of(c), view, uncached);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.failure->message.find("connection refused"), std::string::npos) << d.failure->message;
  ASSERT_EQ(d.value.selections.size(), 1u);
  EXPECT_EQ(d.value.selections[0].scope, runtime::NamespaceScope::selected);
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
  auto one = discover_in(c, agent_of(c, "one"));
  auto two = discover_in(c, agent_of(c, "two"));
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(names(one.value.hierarchy.metrics), std::vector<std::string>{"monitoring/shared"});
  EXPECT_EQ(names(two.value.hierarchy.metrics),
            (std::vector<std::string>{"monitoring/second", "monitoring/shared"}));
  // The ServiceMonitor is rendered by both instances of root two.
  EXPECT_EQ(names(two.value.hierarchy.metrics[0].service_monitors),
            std::vector<std::string>{"apps/web"});
  EXPECT_EQ(names(two.value.hierarchy.metrics[1].service_monitors),
            std::vector<std::string>{"apps/web"});
  // Its secret reference is collected once, attributed to its namespace.
  const auto refs = collect_asset_refs(two.value.hierarchy);
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0].asset_key(), "/secrets/monitoring/extra/k");
  EXPECT_EQ(refs[1].asset_key(), "/secrets/apps/tok/t");
  EXPECT_EQ(refs[1].owner_kind, Kind::service_monitor);
}

TEST(Discovery, DependenciesDescribeEveryListAndObject) {
  MemoryCluster c = cluster_of(kShared);
  auto d = discover_in(c, agent_of(c, "two"));
  ASSERT_TRUE(d.ok());
  const auto& lists = d.value.selections;
  // MetricsInstances in monitoring; then per instance its ServiceMonitors (selected
  // namespaces / all namespaces). Nil selectors (PodMonitors, Probes, logs, integrations)
  // match nothing and need no watch.
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[0].kind, runtime::GroupKind::of(gvk(Kind::metrics_instance)));
  EXPECT_EQ(lists[0].scope, runtime::NamespaceScope::one);
  EXPECT_EQ(lists[0].ns, "monitoring");
  EXPECT_TRUE(lists[0].selector.matches_everything());
  EXPECT_EQ(lists[1].kind, runtime::GroupKind::of(gvk(Kind::service_monitor)));
  EXPECT_EQ(lists[1].scope, runtime::NamespaceScope::all);
  EXPECT_EQ(lists[2].kind, runtime::GroupKind::of(gvk(Kind::service_monitor)));
  EXPECT_EQ(lists[2].scope, runtime::NamespaceScope::selected);
  EXPECT_EQ(lists[2].namespace_selector.to_string(), "kind=apps");
  EXPECT_EQ(lists[2].selector.to_string(), "team=a");
  const auto objects = asset_dependencies(d.value.hierarchy);
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[0].key.str(), "apps/tok");
  EXPECT_EQ(objects[1].key.str(), "monitoring/extra");
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
  auto d = discover_in(c, agent_of(c));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(names(d.value.hierarchy.metrics), std::vector<std::string>{"monitoring/good"});
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_EQ(d.problems[0].str(),
            "MetricsInstance monitoring/bad: spec.walTruncateFrequency: expected string, got "
            "number");
}

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
