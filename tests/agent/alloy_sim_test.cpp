// The Alloy backend in the live controller, against the test cluster: a new root is
// deployed with Alloy (its objects exactly what plan_root() makes of the same state, every
// workload's configuration accepted by the Alloy checker; replica groups follow
// spec.metrics.replicas, members spec.metrics.shards); an invalid backend annotation
// touches nothing. Switching a running root: switch_sim_test.cpp.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"
#include "tests/alloy/checker/checker.hpp"

namespace aop::agent::testing {
namespace {

constexpr std::string_view kAlloyHierarchy = R"(
apiVersion: v1
kind: Namespace
metadata: {name: mon}
---
apiVersion: v1
kind: Secret
metadata: {name: rw-auth, namespace: mon}
stringData: {username: writer, password: pw-1}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: primary, namespace: mon, labels: {agent: main}}
spec:
  serviceMonitorSelector: {matchLabels: {team: web}}
  remoteWrite:
  - url: https://mimir.example.com/api/v1/push
    basicAuth:
      username: {name: rw-auth, key: username}
      password: {name: rw-auth, key: password}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web, namespace: mon, labels: {team: web}}
spec:
  selector: {matchLabels: {app: web}}
  endpoints: [{port: http, interval: 30s}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: logs, namespace: mon, labels: {agent: main}}
spec:
  podLogsSelector: {matchLabels: {team: web}}
  clients: [{url: "https://loki.example.com/loki/api/v1/push"}]
)";

std::string root(std::string_view annotations, int shards, int replicas) {
  return "apiVersion: monitoring.grafana.com/v1alpha1\nkind: GrafanaAgent\nmetadata: {name: main, "
         "namespace: mon, annotations: " +
         std::string(annotations) +
         "}\nspec:\n  serviceAccountName: agent\n  metrics: {shards: " + std::to_string(shards) +
         ", replicas: " + std::to_string(replicas) +
         ", instanceSelector: {matchLabels: {agent: main}}}\n  logs: {instanceSelector: "
         "{matchLabels: {agent: main}}}\n";
}

// The configuration a live workload loads (the Secrets its projected volume names),
// through the Alloy checker.
void expect_config_loads(AgentSim& env, Kind kind, const std::string& name) {
  const auto w = env.get(kind, "mon", name);
  ASSERT_TRUE(w.has_value()) << name;
  std::vector<std::string> sources;
  std::vector<alloy::check::ConfigSecret> secrets;
  for (const auto& v : w->at("spec").at("template").at("spec").at("volumes").as_array()) {
    if (v.at("name") != "config") continue;
    for (const auto& s : v.at("projected").at("sources").as_array()) {
      sources.emplace_back(s.at("secret").at("name").as_string());
    }
  }
  ASSERT_FALSE(sources.empty()) << name;
  for (const auto& s : sources) {
    const auto secret = env.get(Kind::secret, "mon", s);
    ASSERT_TRUE(secret.has_value()) << s;
    alloy::check::ConfigSecret cs{s, {}};
    for (const auto& [key, data] : secret->at("data").as_object()) {
      cs.data.push_back({std::string(key), k8s::base64_decode(data.as_string()).value()});
    }
    secrets.push_back(std::move(cs));
  }
  const auto v = alloy::check::check_config_secrets(secrets, sources[0], sources, "mon", "main");
  EXPECT_TRUE(v.empty()) << name << ": " << alloy::check::to_string(v);
}

TEST_F(AgentControllerSimTest, ANewRootIsDeployedWithAlloy) {
  AgentModuleOptions options = module_options();
  options.agent.backend = Backend::alloy;  // --agent-backend=alloy
  auto& agent = env.add_agent_controller(options);
  env.start();
  env.create_yaml(kAlloyHierarchy);
  env.create_yaml(root("{}", 2, 2));

  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.exists(Kind::stateful_set, "mon", "main-alloy-replica-1") &&
               env.exists(Kind::daemon_set, "mon", "main-alloy-logs") &&
               env.condition_status("mon", "main", "Reconciled") == "True" &&
               env.condition_reason("mon", "main", "AlloyTranslation") == "Complete";
      },
      kDeadline))
      << json::serialize(env.agent_status("mon", "main"));
  const auto status = env.agent_status("mon", "main");
  EXPECT_EQ(status.at("backend"), "alloy");
  EXPECT_EQ(env.condition_reason("mon", "main", "Backend"), "Alloy");
  for (const auto& [kind, n] :
       std::vector<std::pair<Kind, std::string>>{{Kind::secret, "main-config"},
                                                 {Kind::service, "main-operated"},
                                                 {Kind::stateful_set, "main"},
                                                 {Kind::daemon_set, "main-logs"}}) {
    EXPECT_FALSE(env.exists(kind, "mon", n)) << "static " << kind_name(kind) << " " << n;
  }
  for (const std::string group : {"main-alloy", "main-alloy-replica-1"}) {
    const auto sts = env.get(Kind::stateful_set, "mon", group);
    EXPECT_EQ(sts->at("spec").at("replicas"), 2) << group;  // cluster members = shards
    EXPECT_TRUE(env.exists(Kind::service, "mon", group + "-cluster")) << group;
    expect_config_loads(env, Kind::stateful_set, group);
  }
  expect_config_loads(env, Kind::daemon_set, "main-alloy-logs");
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));
  expect_live_equals_plan(env, "mon", "main", options.agent);

  // Ready follows the Alloy workloads.
  mark_ready(env, Kind::stateful_set, "mon", "main-alloy", 2);
  mark_ready(env, Kind::stateful_set, "mon", "main-alloy-replica-1", 2);
  mark_ready(env, Kind::daemon_set, "mon", "main-alloy-logs", 1);
  EXPECT_TRUE(tst::wait_until(
      [&] { return env.condition_status("mon", "main", "Ready") == "True"; }, kDeadline))
      << ready_message(env, "mon", "main");

  // One replica group fewer and three members: the group's StatefulSet and Service go,
  // the other scales; its configuration does not change.
  const auto config_before = env.get(Kind::secret, "mon", "main-alloy-config")->at("data");
  env.patch(Kind::grafana_agent, "mon", "main",
            json::parse(R"({"spec": {"metrics": {"shards": 3, "replicas": 1}}})"));
  EXPECT_TRUE(tst::wait_until(
      [&] {
        const auto sts = env.get(Kind::stateful_set, "mon", "main-alloy");
        return !env.exists(Kind::stateful_set, "mon", "main-alloy-replica-1") &&
               !env.exists(Kind::service, "mon", "main-alloy-replica-1-cluster") && sts &&
               sts->at("spec").at("replicas") == 3;
      },
      kDeadline));
  EXPECT_EQ(env.get(Kind::secret, "mon", "main-alloy-config")->at("data"), config_before);
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));
  expect_live_equals_plan(env, "mon", "main", options.agent);
}

TEST_F(AgentControllerSimTest, AnInvalidBackendAnnotationTouchesNothing) {
  env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(kAlloyHierarchy);
  env.create_yaml(root("{operator.agent.grafana.com/backend: Alloy}", 1, 1));
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.condition_reason("mon", "main", "Reconciled") == "InvalidBackend"; },
      kDeadline))
      << json::serialize(env.agent_status("mon", "main"));
  EXPECT_FALSE(env.exists(Kind::secret, "mon", "main-secrets"));
  EXPECT_TRUE(env.list(Kind::stateful_set, "mon").empty());
  EXPECT_FALSE(env.events.about("GrafanaAgent", "mon", "main", "InvalidSpec").empty());
  // Fixing the annotation deploys the root.
  env.patch(Kind::grafana_agent, "mon", "main", json::parse(R"({"metadata": {"annotations": {
                "operator.agent.grafana.com/backend": "alloy"}}})"));
  EXPECT_TRUE(tst::wait_until([&] { return env.exists(Kind::stateful_set, "mon", "main-alloy"); },
                              kDeadline));
}

}  // namespace
}  // namespace aop::agent::testing
