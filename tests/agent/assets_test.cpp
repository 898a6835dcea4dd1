// The resolve-assets stage: which references are collected (upstream's emptiness
// rules, namespace attribution), absent objects versus absent keys, and collisions in
// the assets Secret.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/agent/hierarchy.hpp"
#include "tests/agent/pipeline_support.hpp"

namespace aop::agent {
namespace {

using namespace aop::agent::testing;

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
  auto d = discover_in(c, a);
  ASSERT_TRUE(d.ok()) << d.failure->message;
  std::vector<std::string> keys;
  for (const auto& r : collect_asset_refs(d.value.hierarchy)) keys.push_back(r.asset_key());
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
  // An Integration's secrets and configMaps lists: every element is a reference.
  Hierarchy h;
  h.agent.metadata = {"agent", "ns1"};
  Integration in;
  in.metadata = {"i", "ns1"};
  in.spec.secrets = {{"s", "a"}, {"absent", "x"}};
  in.spec.config_maps = {{"cm", "text"}, {"cm", "bin"}};
  h.integrations.push_back(in);
  auto store = resolve_assets(h, c);
  ASSERT_TRUE(store.ok()) << store.failure->message;
  EXPECT_EQ(store.value.values,
            (std::map<std::string, std::string>{{"/secrets/ns1/s/a", "A"},
                                                {"/configMaps/ns1/cm/text", "T"},
                                                {"/configMaps/ns1/cm/bin", "B"}}));

  h.integrations[0].spec.config_maps.push_back({"cm", "none"});
  auto missing_cm = resolve_assets(h, c);
  ASSERT_FALSE(missing_cm.ok());
  EXPECT_EQ(missing_cm.failure->stage, Stage::resolve_assets);
  EXPECT_EQ(missing_cm.failure->code, runtime::Errc::asset_resolution_failed);
  EXPECT_EQ(missing_cm.failure->message,
            "no key none in ConfigMap cm (namespace ns1) (referenced by Integration ns1/i at "
            "spec.configMaps[2])");

  h.integrations[0].spec.config_maps.pop_back();
  h.integrations[0].spec.secrets.push_back({"s", "b"});
  auto missing = resolve_assets(h, c);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.failure->message.rfind("no key b in Secret s", 0), 0u)
      << missing.failure->message;
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

TEST(Assets, TheStageReportsCollisionsAsProblems) {
  MemoryCluster c = cluster_of(R"(
apiVersion: v1
kind: Secret
metadata: {name: a-b, namespace: ns1}
stringData: {c: "1"}
---
apiVersion: v1
kind: Secret
metadata: {name: a_b, namespace: ns1}
stringData: {c: "2"}
)");
  Hierarchy h;
  h.agent.metadata = {"agent", "ns1"};
  Integration in;
  in.metadata = {"i", "ns1"};
  in.spec.secrets = {{"a-b", "c"}, {"a_b", "c"}};
  h.integrations.push_back(in);
  const auto store = resolve_assets(h, c);
  ASSERT_TRUE(store.ok());
  ASSERT_EQ(store.problems.size(), 1u);
  EXPECT_EQ(store.problems[0].kind, gvk(Kind::grafana_agent));
  EXPECT_EQ(store.problems[0].object, (k8s::ObjectKey{"ns1", "agent"}));
}

}  // namespace
}  // namespace aop::agent
