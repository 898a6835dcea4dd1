// The decode stage: custom resources into structs, with every error's JSON path and
// nil kept apart from empty; the cache that decodes an unchanged object once.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/decode_cache.hpp"
#include "tests/agent/pipeline_support.hpp"

namespace aop::agent {
namespace {

using namespace aop::agent::testing;

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

// ---- the decode stage's cache -----------------------------------------------------------

k8s::ObjectPtr monitor(std::string_view uid, std::string_view rv, std::string_view port) {
  return k8s::Object::from_json(
      yaml("{apiVersion: monitoring.coreos.com/v1, kind: "
           "ServiceMonitor, metadata: {name: web, namespace: apps, "
           "uid: '" +
           std::string(uid) + "', resourceVersion: '" + std::string(rv) +
           "'}, spec: {endpoints: [{port: " + std::string(port) + "}]}}"));
}

TEST(DecodeCache, AnUnchangedObjectIsDecodedOnceAndANewVersionAgain) {
  DecodeCache cache;
  auto first = cache.decode<ServiceMonitor>(*monitor("u1", "10", "http"));
  ASSERT_TRUE(first.has_value());
  auto again = cache.decode<ServiceMonitor>(*monitor("u1", "10", "http"));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->spec.endpoints.at(0).port, "http");
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 1u);

  // A new resourceVersion is decoded, and replaces the entry.
  auto changed = cache.decode<ServiceMonitor>(*monitor("u1", "11", "metrics"));
  ASSERT_TRUE(changed.has_value());
  EXPECT_EQ(changed->spec.endpoints.at(0).port, "metrics");
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(cache.size(), 1u);

  cache.forget("u1");
  EXPECT_EQ(cache.size(), 0u);
}

TEST(DecodeCache, FailuresAreKeptAndObjectsWithoutIdentityNeverAre) {
  DecodeCache cache;
  const auto bad = monitor("u2", "1", "5");  // a number where a port name belongs
  EXPECT_FALSE(cache.decode<ServiceMonitor>(*bad).has_value());
  const auto again = cache.decode<ServiceMonitor>(*bad);
  ASSERT_FALSE(again.has_value());
  EXPECT_NE(again.error().message.find("spec.endpoints[0].port"), std::string::npos);
  EXPECT_EQ(cache.misses(), 1u);

  // render's input has no uid or resourceVersion: decoded every time, kept never.
  const auto plain = monitor("", "", "http");
  (void)cache.decode<ServiceMonitor>(*plain);
  (void)cache.decode<ServiceMonitor>(*plain);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(DecodeCache, TheRootFailsTheDecodeStageWithItsName) {
  DecodeCache cache;
  const auto root = k8s::Object::from_json(
      yaml("{apiVersion: monitoring.grafana.com/v1alpha1, kind: GrafanaAgent, metadata: {name: a, "
           "namespace: ns1, uid: u, resourceVersion: '3'}, spec: {metrics: {shards: '2'}}}"));
  const auto out = decode_root(*root, cache);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.failure->stage, Stage::decode);
  EXPECT_EQ(out.failure->code, runtime::Errc::invalid_spec);
  EXPECT_EQ(out.failure->message,
            "GrafanaAgent ns1/a: spec.metrics.shards: expected integer, got string");
}

}  // namespace
}  // namespace aop::agent
