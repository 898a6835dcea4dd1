// The build-objects stage and its building blocks: gzip above the threshold, stale
// shards, the compat switch, strategic merge of containers, sanitizers.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "reconcile/agent/encoding.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/sanitize.hpp"
#include "tests/agent/pipeline_support.hpp"

namespace aop::agent {
namespace {

using namespace aop::agent::testing;

// The stage over a hierarchy, its configs assembled first.
Outcome<DesiredObjects> objects_of(const Hierarchy& h, const Options& options = {}) {
  const auto configs = configs_of(h, {}, options);
  EXPECT_TRUE(configs.ok()) << configs.failure->message;
  return build_objects(h, AssetStore{}, configs.value, options);
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
  const Hierarchy h = hierarchy_of(cluster_of(text));
  const std::string config = config_text(configs_of(h), ConfigFile::metrics);
  ASSERT_GT(config.size(), kGzipThreshold);
  const auto s = objects_of(h);
  ASSERT_TRUE(s.ok());
  const object* secret = s.value.find(Kind::secret, "agent-config");
  ASSERT_NE(secret, nullptr);
  auto bytes = k8s::base64_decode(secret->at("data").at("agent.yml").as_string());
  ASSERT_TRUE(bytes.has_value());
  ASSERT_GE(bytes->size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>((*bytes)[0]), 0x1f);
  EXPECT_EQ(gzip_decompress(*bytes), config);
}

TEST(Objects, StaleShardsArePrunedWithinTheAgentsScope) {
  Hierarchy h;
  h.agent.metadata = {"agent", "n", "uid-1"};
  h.agent.spec.metrics.shards = 2;
  MetricsEntry e;
  e.instance.metadata = {"m", "n"};
  h.metrics.push_back(e);
  auto s = objects_of(h);
  const runtime::ApplyStep* prune = nullptr;
  std::vector<std::string> shards;
  for (const auto& st : s.value.plan.steps) {
    if (st.action == runtime::ApplyStep::Action::prune) prune = &st;
    if (st.action == runtime::ApplyStep::Action::apply && st.kind == gvk(Kind::stateful_set)) {
      shards.push_back(st.key.name);
    }
  }
  // The plan keeps what it applies: the prune step deletes the other StatefulSets of this
  // agent only (its namespace, its labels, controlled by its UID).
  EXPECT_EQ(shards, (std::vector<std::string>{"agent", "agent-shard-1"}));
  ASSERT_NE(prune, nullptr);
  EXPECT_EQ(prune->prune.kinds, std::vector<k8s::GroupVersionKind>{gvk(Kind::stateful_set)});
  EXPECT_EQ(prune->prune.owner_uid, "uid-1");
  EXPECT_TRUE(prune->prune.controller_only);
  EXPECT_EQ(prune->prune.namespaces, std::vector<std::string>{"n"});
  EXPECT_EQ(prune->prune.match_labels,
            (runtime::Labels{{"app.kubernetes.io/managed-by", "grafana-agent-operator"},
                             {"operator.agent.grafana.com/name", "agent"}}));
  EXPECT_EQ(s.value.workloads,
            (std::vector<WorkloadRef>{{Kind::stateful_set, {"n", "agent"}},
                                      {Kind::stateful_set, {"n", "agent-shard-1"}}}));

  // No MetricsInstance: the Service and config Secret are deleted, every shard pruned.
  h.metrics.clear();
  s = objects_of(h);
  EXPECT_EQ(s.value.find(Kind::service, "agent-operated"), nullptr);
  EXPECT_TRUE(s.value.workloads.empty());
  bool deletes_service = false;
  bool prunes = false;
  for (const auto& st : s.value.plan.steps) {
    if (st.action == runtime::ApplyStep::Action::delete_if_managed &&
        st.kind == gvk(Kind::service) && st.key.name == "agent-operated") {
      deletes_service = true;
    }
    prunes = prunes || st.action == runtime::ApplyStep::Action::prune;
    EXPECT_FALSE(st.action == runtime::ApplyStep::Action::apply &&
                 st.kind == gvk(Kind::stateful_set));
  }
  EXPECT_TRUE(deletes_service);
  EXPECT_TRUE(prunes);

  // Without a UID (render input) there is nothing to scope a prune by: no prune step.
  h.agent.metadata.uid.clear();
  s = objects_of(h);
  for (const auto& st : s.value.plan.steps) {
    EXPECT_NE(st.action, runtime::ApplyStep::Action::prune);
  }
}

TEST(Objects, AConfigThatFailedEndsTheStepsButNotTheWorkloads) {
  Hierarchy h;
  h.agent.metadata = {"agent", "n", "u"};
  h.metrics.emplace_back();
  h.metrics[0].instance.metadata = {"m", "n"};
  h.logs.emplace_back();
  h.logs[0].instance.metadata = {"l", "n"};
  ConfigTrees configs;  // the metrics file assembled, the logs file failed
  configs[ConfigFile::metrics] = yaml("{metrics: {}}");
  const auto s = build_objects(h, AssetStore{}, configs, Options{});
  ASSERT_TRUE(s.ok());
  ASSERT_FALSE(s.value.plan.steps.empty());
  // The steps end before the logs config Secret: its DaemonSet is not applied ...
  EXPECT_NE(s.value.find(Kind::secret, "agent-config"), nullptr);
  EXPECT_EQ(s.value.find(Kind::secret, "agent-logs-config"), nullptr);
  EXPECT_EQ(s.value.find(Kind::daemon_set, "agent-logs"), nullptr);
  EXPECT_EQ(s.value.plan.steps.back().action, runtime::ApplyStep::Action::prune);
  // ... but the root still needs it to be ready.
  EXPECT_EQ(s.value.workloads.back(), (WorkloadRef{Kind::daemon_set, {"n", "agent-logs"}}));
}

TEST(Objects, CompatFixedServiceSelectsOnlyMetricsPods) {
  Hierarchy h;
  h.agent.metadata = {"agent", "n", "u"};
  h.metrics.emplace_back();
  h.metrics[0].instance.metadata = {"m", "n"};
  Options fixed;
  fixed.compat = Compat::fixed;
  const auto up = objects_of(h);
  const auto fx = objects_of(h, fixed);
  const auto& up_sel = up.value.find(Kind::service, "agent-operated")->at("spec").at("selector");
  const auto& fx_sel = fx.value.find(Kind::service, "agent-operated")->at("spec").at("selector");
  EXPECT_FALSE(up_sel.as_object().contains("operator.agent.grafana.com/type"));
  EXPECT_EQ(fx_sel.at("operator.agent.grafana.com/type"), "metrics");
}

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

}  // namespace
}  // namespace aop::agent
