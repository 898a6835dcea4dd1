// The render-fragments and assemble stages: upstream's order and layout, errors that
// fail a whole file, members skipped with a problem, determinism whatever the input
// order, and fragments shared between instances and files.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <array>

#include "tests/agent/pipeline_support.hpp"

namespace aop::agent {
namespace {

using namespace aop::agent::testing;

Hierarchy metrics_hierarchy(std::string_view text) {
  return hierarchy_of(cluster_of(text));
}

TEST(Render, PreservesTheGivenOrder) {
  Hierarchy h;
  h.agent.metadata = {"agent", "ns"};
  for (const char* n : {"zeta", "alpha"}) {
    MetricsEntry e;
    e.instance.metadata = {n, "ns"};
    h.metrics.push_back(e);
  }
  auto out = configs_of(h);
  ASSERT_TRUE(out.ok());
  const auto& configs = out.value[ConfigFile::metrics]->at("metrics").at("configs").as_array();
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
  auto out = configs_of(h, assets);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.failure->stage, Stage::assemble);
  EXPECT_EQ(out.failure->code, runtime::Errc::render_failed);
  EXPECT_EQ(out.failure->message.rfind("rendering agent-config: MetricsInstance ns/m: "
                                       "spec.additionalScrapeConfigs (Secret ns/extra key k): "
                                       "expected a YAML list",
                                       0),
            0u)
      << out.failure->message;
  EXPECT_FALSE(out.value[ConfigFile::metrics].has_value());

  assets.values["/secrets/ns/extra/k"] = "- [unclosed\n";
  out = configs_of(h, assets);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.failure->message.find("not valid YAML"), std::string::npos);

  assets.values["/secrets/ns/extra/k"] = "";
  out = configs_of(h, assets);
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(
      out.value[ConfigFile::metrics]->at("metrics").at("configs").at(0).as_object().contains(
          "scrape_configs"));
}

TEST(Render, SelectorExpressionWithoutValuesLeavesOnlyThatMonitorOut) {
  // The validate stage leaves out the members; rendering renders the rest.
  const MemoryCluster c = cluster_of(R"(
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
  auto discovered = discover_in(c, agent_of(c));
  ASSERT_TRUE(discovered.ok());
  auto validated = validate(std::move(discovered.value.hierarchy), c, Options{});
  ASSERT_TRUE(validated.ok());
  auto out = configs_of(validated.value);
  ASSERT_TRUE(out.ok()) << out.failure->message;
  EXPECT_TRUE(out.problems.empty());
  const auto& scrape = out.value[ConfigFile::metrics]
                           ->at("metrics")
                           .at("configs")
                           .at(0)
                           .at("scrape_configs")
                           .as_array();
  ASSERT_EQ(scrape.size(), 1u);
  EXPECT_EQ(scrape[0].at("job_name"), "serviceMonitor/ns1/good/0");
  const auto problems = strs(validated.problems);
  EXPECT_EQ(problems,
            (std::vector<std::string>{
                "ServiceMonitor ns1/bad: spec.selector.matchExpressions[0].values: must be "
                "specified when `operator` is 'In' or 'NotIn'",
                "PodMonitor ns1/badpm: spec.selector.matchExpressions[0].values: must be "
                "specified when `operator` is 'In' or 'NotIn'"}));
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
  auto out = configs_of(h);
  ASSERT_TRUE(out.ok()) << out.failure->message;
  const auto& scrape = out.value[ConfigFile::metrics]
                           ->at("metrics")
                           .at("configs")
                           .at(0)
                           .at("scrape_configs")
                           .as_array();
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
    const auto out = configs_of(hierarchy_of(cluster_of(text)));
    EXPECT_TRUE(out.ok());
    return config_text(out, ConfigFile::metrics);
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

// ---- fragments ------------------------------------------------------------------------

constexpr std::string_view kTwoInstances = R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: ns1, uid: u}
spec:
  metrics: {instanceSelector: {}}
  logs: {instanceSelector: {}}
  integrations: {selector: {}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: a, namespace: ns1}
spec: {serviceMonitorSelector: {}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: b, namespace: ns1}
spec: {serviceMonitorSelector: {}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web, namespace: ns1}
spec:
  endpoints: [{port: http}, {port: admin}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: broken, namespace: ns1}
spec:
  selector: {matchExpressions: [{key: a, operator: In}]}
  endpoints: [{port: http}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: logs, namespace: ns1}
spec:
  clients:
  - url: "http://loki"
    basicAuth: {username: {name: loki, key: user}, password: {name: loki, key: pass}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: node, namespace: ns1}
spec: {name: node_exporter, type: {allNodes: true}, config: {x: 1}}
)";

TEST(Fragments, AMemberSelectedTwiceIsRenderedOnceAndIncludedTwice) {
  const Hierarchy h = hierarchy_of(cluster_of(kTwoInstances));
  AssetStore assets;
  assets.values["/secrets/ns1/loki/user"] = "me";
  assets.values["/secrets/ns1/loki/pass"] = "pw";
  auto fragments = render_fragments(h, assets, Options{});
  // web once; broken (an In without values) was left out by the validate stage.
  ASSERT_EQ(fragments.value.members.size(), 1u);
  const auto& web = fragments.value.members.at(MemberKey{Kind::service_monitor, {"ns1", "web"}});
  ASSERT_EQ(web.configs.size(), 2u);  // one per endpoint
  EXPECT_EQ(web.configs[1].at("job_name"), "serviceMonitor/ns1/web/1");
  ASSERT_EQ(fragments.value.integrations.size(), 1u);
  EXPECT_EQ(fragments.value.integrations[0], yaml("{x: 1}"));

  auto configs = assemble(std::move(fragments.value), h);
  ASSERT_TRUE(configs.ok()) << configs.failure->message;
  // Each instance's entry has the shared monitor's jobs.
  const auto& entries = configs.value[ConfigFile::metrics]->at("metrics").at("configs").as_array();
  ASSERT_EQ(entries.size(), 2u);
  for (const auto& e : entries) EXPECT_EQ(e.at("scrape_configs").as_array().size(), 2u);
  EXPECT_TRUE(configs.problems.empty());
  // The integrations file: the instances without their members, and the integration.
  const auto& ds = *configs.value[ConfigFile::integrations_ds];
  EXPECT_FALSE(ds.at("metrics").at("configs").at(0).as_object().contains("scrape_configs"));
  EXPECT_EQ(ds.at("integrations").at("node_exporter_configs"), yaml("[{x: 1.0}]"));  // float64
  EXPECT_FALSE(configs.value[ConfigFile::integrations_deploy].has_value());          // not needed
}

TEST(Fragments, AnErrorFailsTheFirstFileThatIncludesItAndKeepsTheOnesBefore) {
  const Hierarchy h = hierarchy_of(cluster_of(kTwoInstances));
  // The LogsInstance's client needs a Secret key nobody provided.
  auto configs = configs_of(h);
  ASSERT_FALSE(configs.ok());
  EXPECT_EQ(configs.failure->stage, Stage::assemble);
  EXPECT_EQ(configs.failure->message,
            "rendering agent-logs-config: key not provided: /secrets/ns1/loki/user");
  EXPECT_TRUE(configs.value[ConfigFile::metrics].has_value());
  EXPECT_FALSE(configs.value[ConfigFile::logs].has_value());
  EXPECT_FALSE(configs.value[ConfigFile::integrations_ds].has_value());  // not reached
  EXPECT_TRUE(configs.problems.empty());
}

}  // namespace
}  // namespace aop::agent
