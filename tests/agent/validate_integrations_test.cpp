// The validate stage's Integration checks (beyond upstream): what is rejected, what is
// only reported, that each finding names the objects involved, and that the rest of the
// hierarchy still renders and deploys. Also the privileged flag of integration pods
// (upstream drops it while merging pod options; Compat::fixed keeps the DaemonSet's).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/agent/validate_integrations.hpp"
#include "tests/agent/pipeline_support.hpp"

namespace aop::agent {
namespace {

using namespace aop::agent::testing;

constexpr std::string_view kAgent = R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: monitoring, uid: u-1}
spec:
  metrics:
    instanceSelector: {}
  logs:
    instanceSelector: {}
  integrations:
    selector: {}
    namespaceSelector: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: metrics, namespace: monitoring}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: logs, namespace: monitoring}
spec:
  clients: [{url: "http://loki"}]
)";

struct Rendered {
  Hierarchy hierarchy;
  std::vector<Problem> problem_list;  // discover's and validate's
  AssetStore assets;
  Options options;
  DesiredObjects state;

  const Hierarchy& h() const { return hierarchy; }
  std::vector<std::string> integration_names() const {
    std::vector<std::string> out;
    for (const auto& in : h().integrations) out.push_back(in.metadata.ns + "/" + in.metadata.name);
    return out;
  }
  std::vector<std::string> problems() const { return strs(problem_list); }
  // The rendered integrations config as a tree, parsed back from the Secret text.
  value integrations(bool all_nodes) const {
    const auto configs = configs_of(h(), assets, options);
    EXPECT_TRUE(configs.ok()) << configs.failure->message;
    const std::string text = config_text(
        configs, all_nodes ? ConfigFile::integrations_ds : ConfigFile::integrations_deploy,
        options);
    EXPECT_FALSE(text.empty());
    auto v = k8s::yaml::parse(text);
    EXPECT_TRUE(v.has_value());
    if (!v) return nullptr;
    return v->as_object().at("integrations");
  }
};

Rendered run(std::string_view integrations_yaml, const Options& options = {}) {
  MemoryCluster cluster;
  auto docs =
      k8s::yaml::parse_all(std::string(kAgent) + "\n---\n" + std::string(integrations_yaml));
  EXPECT_TRUE(docs.has_value()) << docs.error().message;
  for (auto& d : *docs) {
    auto added = cluster.add(std::move(d));
    EXPECT_TRUE(added.has_value()) << added.error().message;
  }
  Rendered r;
  r.options = options;
  auto discovered = discover_in(cluster, agent_of(cluster));
  EXPECT_TRUE(discovered.ok()) << discovered.failure->message;
  auto validated = validate(std::move(discovered.value.hierarchy), cluster, options);
  r.hierarchy = std::move(validated.value);
  r.problem_list = discovered.problems;
  r.problem_list.insert(r.problem_list.end(), validated.problems.begin(), validated.problems.end());
  auto assets = resolve_assets(r.hierarchy, cluster);
  EXPECT_TRUE(assets.ok()) << assets.failure->message;
  r.assets = assets.value;
  const auto configs = configs_of(r.hierarchy, r.assets, options);
  EXPECT_TRUE(configs.ok()) << configs.failure->message;
  r.state = build_objects(r.hierarchy, r.assets, configs.value, options).value;
  return r;
}

std::string integration(std::string_view ns, std::string_view name, std::string_view spec) {
  return "apiVersion: monitoring.grafana.com/v1alpha1\nkind: Integration\nmetadata: {name: " +
         std::string(name) + ", namespace: " + std::string(ns) + "}\nspec:\n" + std::string(spec) +
         "\n---\n";
}

bool contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

TEST(ValidateIntegrations, DuplicateOfAUniqueIntegrationIsRejectedTheFirstKeepsWorking) {
  const Rendered r = run(integration("apps", "node-a", R"(
  name: node_exporter
  type: {unique: true, allNodes: true}
  config: {rootfs_path: /a})") +
                         integration("apps", "node-b", R"(
  name: node_exporter
  type: {allNodes: true}
  config: {rootfs_path: /b})") +
                         integration("apps", "redis", R"(
  name: redis_exporter
  config: {redis_addr: "redis:6379"})"));

  EXPECT_EQ(r.integration_names(), (std::vector<std::string>{"apps/node-a", "apps/redis"}));
  ASSERT_EQ(r.problem_list.size(), 1U) << ::testing::PrintToString(r.problems());
  const Problem& p = r.problem_list[0];
  EXPECT_EQ(p.kind, gvk(Kind::integration));
  EXPECT_EQ(p.object, (k8s::ObjectKey{"apps", "node-b"}));  // the rejected one
  EXPECT_EQ(p.field, "spec.name");
  EXPECT_EQ(p.severity, Severity::error);
  EXPECT_TRUE(contains(p.message, "Integration apps/node-a")) << p.message;  // and the first
  EXPECT_TRUE(contains(p.message, "not deployed")) << p.message;

  // The first one is rendered alone; everything else still deploys.
  EXPECT_EQ(r.integrations(true).as_object().at("node_exporter_configs"),
            (boost::json::array{object{{"rootfs_path", "/a"}}}));
  EXPECT_EQ(r.integrations(false).as_object().at("redis_exporter_configs").as_array().size(), 1U);
  EXPECT_NE(r.state.find(Kind::stateful_set, "agent"), nullptr);
  EXPECT_NE(r.state.find(Kind::daemon_set, "agent-logs"), nullptr);
  EXPECT_NE(r.state.find(Kind::daemon_set, "agent-integrations-ds"), nullptr);
  EXPECT_NE(r.state.find(Kind::deployment, "agent-integrations-deploy"), nullptr);
}

TEST(ValidateIntegrations, UniqueComingSecondIsRejectedNonUniqueDuplicatesAreFine) {
  const Rendered r = run(integration("a", "first", "  name: eventhandler") +
                         integration("b", "second", "  name: eventhandler") +
                         integration("c", "third", "  name: eventhandler\n  type: {unique: true}"));
  EXPECT_EQ(r.integration_names(), (std::vector<std::string>{"a/first", "b/second"}));
  ASSERT_EQ(r.problem_list.size(), 1U);
  EXPECT_EQ(r.problem_list[0].object, (k8s::ObjectKey{"c", "third"}));
  EXPECT_TRUE(contains(r.problem_list[0].message, "Integration a/first"));
  EXPECT_TRUE(contains(r.problem_list[0].message, "this one is unique"));
  EXPECT_EQ(r.integrations(false).as_object().at("eventhandler_configs"),
            (boost::json::array{object(), object()}));
}

TEST(ValidateIntegrations, UniquenessSpansBothDeploymentModes) {
  const Rendered r =
      run(integration("a", "ds", "  name: x\n  type: {unique: true, allNodes: true}") +
          integration("a", "deploy", "  name: x"));
  // "a/deploy" sorts before "a/ds": the Deployment one comes first and keeps working.
  EXPECT_EQ(r.integration_names(), (std::vector<std::string>{"a/deploy"}));
  EXPECT_EQ(r.state.find(Kind::daemon_set, "agent-integrations-ds"), nullptr);
  EXPECT_NE(r.state.find(Kind::deployment, "agent-integrations-deploy"), nullptr);
}

TEST(ValidateIntegrations, NonObjectConfigIsRejectedWithItsPathAndItsSecretsAreNotMounted) {
  const Rendered r = run(integration("apps", "bad", R"(
  name: mysqld_exporter
  config: "data_source_name: root@tcp(mysql)/"
  secrets: [{name: mysql, key: dsn}])") +
                         integration("apps", "list", "  name: mysqld_exporter\n  config: [1, 2]") +
                         integration("apps", "number", "  name: mysqld_exporter\n  config: 5") +
                         integration("apps", "nullcfg", "  name: other_exporter\n  config: null") +
                         integration("apps", "good", R"(
  name: mysqld_exporter
  type: {unique: true}
  config: {data_source_name: "root@tcp(mysql)/"})"));
  // Rejected ones do not count for uniqueness ("good" is unique and comes after "bad");
  // a null config is an empty object.
  EXPECT_EQ(r.integration_names(), (std::vector<std::string>{"apps/good", "apps/nullcfg"}))
      << ::testing::PrintToString(r.problems());
  ASSERT_EQ(r.problem_list.size(), 3U) << ::testing::PrintToString(r.problems());
  const std::vector<std::pair<std::string, std::string>> want{
      {"bad", "got string"}, {"list", "got array"}, {"number", "got number"}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    const Problem& p = r.problem_list[i];
    EXPECT_EQ(p.object, (k8s::ObjectKey{"apps", want[i].first}));
    EXPECT_EQ(p.field, "spec.config");
    EXPECT_EQ(p.severity, Severity::error);
    EXPECT_TRUE(contains(p.message, "expected an object")) << p.message;
    EXPECT_TRUE(contains(p.message, want[i].second)) << p.message;
  }

  for (const auto& ref : collect_asset_refs(r.h())) EXPECT_NE(ref.name, "mysql") << ref.asset_key();
  const auto* deploy = r.state.find(Kind::deployment, "agent-integrations-deploy");
  ASSERT_NE(deploy, nullptr);
  EXPECT_FALSE(contains(boost::json::serialize(*deploy), "agent-integrations-secrets"));
  EXPECT_EQ(r.integrations(false).as_object().at("mysqld_exporter_configs"),
            (boost::json::array{object{{"data_source_name", "root@tcp(mysql)/"}}}));
}

TEST(ValidateIntegrations, NullConfigIsAnEmptyObjectWithoutProblems) {
  const Rendered r = run(integration("apps", "first", "  name: agent\n  config: null") +
                         integration("apps", "second", "  name: agent"));
  EXPECT_TRUE(r.problem_list.empty()) << ::testing::PrintToString(r.problems());
  EXPECT_EQ(r.integrations(false).as_object().at("agent_configs"),
            (boost::json::array{object(), object()}));
}

TEST(ValidateIntegrations, DanglingInstanceReferencesAreReportedButStillRendered) {
  const Rendered r = run(integration("apps", "ok", R"(
  name: redis_exporter
  config:
    autoscrape: {enable: true, metrics_instance: monitoring/metrics}
    logs_instance: monitoring/logs)") +
                         integration("apps", "wrong-ns", R"(
  name: redis_exporter
  config:
    autoscrape: {enable: true, metrics_instance: apps/metrics})") +
                         integration("apps", "typed", R"(
  name: redis_exporter
  config:
    autoscrape: {metrics_instance: 5})") +
                         integration("apps", "events", R"(
  name: eventhandler
  config: {logs_instance: logs})"));
  EXPECT_EQ(r.integration_names().size(), 4U);  // nothing rejected
  const auto problems = r.problems();
  ASSERT_EQ(problems.size(), 3U) << ::testing::PrintToString(problems);
  for (const auto& p : r.problem_list) EXPECT_EQ(p.severity, Severity::warning);
  EXPECT_EQ(r.problem_list[0].object.name, "events");
  EXPECT_EQ(r.problem_list[0].field, "spec.config.logs_instance");
  EXPECT_TRUE(contains(problems[0], "LogsInstance \"logs\"")) << problems[0];
  EXPECT_TRUE(contains(problems[0], "monitoring/logs")) << problems[0];  // what to use
  EXPECT_EQ(r.problem_list[1].object.name, "typed");
  EXPECT_TRUE(contains(problems[1], "got number")) << problems[1];
  EXPECT_EQ(r.problem_list[2].object.name, "wrong-ns");
  EXPECT_EQ(r.problem_list[2].field, "spec.config.autoscrape.metrics_instance");
  EXPECT_TRUE(contains(problems[2], "MetricsInstance \"apps/metrics\"")) << problems[2];
  EXPECT_TRUE(contains(problems[2], "GrafanaAgent monitoring/agent")) << problems[2];

  // Output-neutral: the configs are spliced exactly as given.
  const auto redis = r.integrations(false).as_object().at("redis_exporter_configs").as_array();
  ASSERT_EQ(redis.size(), 3U);
  EXPECT_EQ(redis[2].at("autoscrape").at("metrics_instance"), "apps/metrics");
  EXPECT_EQ(redis[1].at("autoscrape").at("metrics_instance").to_number<double>(), 5.0);
}

TEST(ValidateIntegrations, ReferenceWithoutAnyInstanceSaysSo) {
  Hierarchy h;
  h.agent.metadata = {"agent", "monitoring"};
  Integration in;
  in.metadata = {"x", "apps"};
  in.spec.name = "node_exporter";
  in.spec.config = boost::json::parse(R"({"autoscrape": {"metrics_instance": "monitoring/m"}})");
  h.integrations.push_back(in);
  const auto problems = validate_integrations(h);
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_TRUE(contains(problems[0].message, "selects no MetricsInstance")) << problems[0].message;
  EXPECT_EQ(h.integrations.size(), 1U);
}

TEST(IntegrationPods, PrivilegedIsFalseUpstreamAndTrueForTheDaemonSetWithCompatFixed) {
  const std::string list = integration("a", "d", "  name: alpha") +
                           integration("a", "s", "  name: beta\n  type: {allNodes: true}");
  auto privileged = [](const DesiredObjects& s, Kind kind, std::string_view name) {
    const auto* o = s.find(kind, name);
    EXPECT_NE(o, nullptr) << name;
    if (o == nullptr) return value(nullptr);
    const auto& containers = o->at("spec").at("template").at("spec").at("containers").as_array();
    return containers[1].at("securityContext").at("privileged");
  };
  const Rendered upstream = run(list);
  EXPECT_EQ(privileged(upstream.state, Kind::deployment, "agent-integrations-deploy"), false);
  EXPECT_EQ(privileged(upstream.state, Kind::daemon_set, "agent-integrations-ds"), false);
  EXPECT_EQ(privileged(upstream.state, Kind::daemon_set, "agent-logs"), true);

  Options fixed;
  fixed.compat = Compat::fixed;
  const Rendered f = run(list, fixed);
  // Fixed: the integrations DaemonSet is privileged as intended; the Deployment not.
  EXPECT_EQ(privileged(f.state, Kind::deployment, "agent-integrations-deploy"), false);
  EXPECT_EQ(privileged(f.state, Kind::daemon_set, "agent-integrations-ds"), true);
  EXPECT_EQ(privileged(f.state, Kind::daemon_set, "agent-logs"), true);
}

}  // namespace
}  // namespace aop::agent
