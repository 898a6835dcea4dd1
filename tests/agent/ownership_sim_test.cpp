// The controller never takes over an object it does not own: a user's Secret with a
// generated name, or another GrafanaAgent's object whose generated name collides, stays
// byte-identical, and the root that would collide reports it (Reconciled=False NotOwned,
// a status.problems entry naming the object, one Warning Event).
#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

// The status.problems entry about `kind` `ns`/`name`, or an empty object.
json::object problem_about(AgentSim& env, const std::string& ns, const std::string& root,
                           std::string_view kind, const std::string& name) {
  const json::object status = env.agent_status(ns, root);
  const auto* problems = status.if_contains("problems");
  if (problems == nullptr || !problems->is_array()) return {};
  for (const auto& p : problems->as_array()) {
    const auto& o = p.as_object();
    if (o.at("kind").as_string() == kind && o.at("namespace").as_string() == ns &&
        o.at("name").as_string() == name) {
      return o;
    }
  }
  return {};
}

constexpr const char* kOwnershipHierarchy = R"(
apiVersion: v1
kind: Namespace
metadata: {name: owned}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: primary, namespace: owned, labels: {agent: any}}
spec:
  remoteWrite: [{url: "http://mimir.example:9009/api/v1/push"}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: logs, namespace: owned, labels: {agent: logs}}
spec:
  clients: [{url: "http://loki.example:3100/loki/api/v1/push"}]
  podLogsSelector: {}
)";

// A user's Secret named like the root's metrics configuration (`<agent>-config`), there
// before the root: left as it is; the root says which object is in its way.
TEST_F(AgentControllerSimTest, AUsersSecretWithAGeneratedNameIsNotTakenOver) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(kOwnershipHierarchy);
  env.create(json::value(AgentSim::secret("owned", "main-config", {{"agent.yml", "mine: true"}})));
  const auto before = env.get(Kind::secret, "owned", "main-config");
  ASSERT_TRUE(before.has_value());
  env.create_yaml(R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: main, namespace: owned}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: any}}}
)");
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.condition_status("owned", "main", "Reconciled") == "False"; }, kDeadline))
      << json::serialize(env.agent_status("owned", "main"));
  const auto reconciled = env.condition("owned", "main", "Reconciled");
  EXPECT_EQ(reconciled.at("reason").as_string(), "NotOwned");
  const std::string message(reconciled.at("message").as_string());
  EXPECT_TRUE(contains(message, "Secret owned/main-config")) << message;
  EXPECT_TRUE(contains(message, "(no ownerReference names this root)")) << message;

  ASSERT_TRUE(tst::wait_until(
      [&] { return !problem_about(env, "owned", "main", "Secret", "main-config").empty(); },
      kDeadline))
      << json::serialize(env.agent_status("owned", "main"));
  const json::object problem = problem_about(env, "owned", "main", "Secret", "main-config");
  EXPECT_EQ(problem.at("severity").as_string(), "Error");
  EXPECT_EQ(problem.at("field").as_string(), "metadata.ownerReferences");
  ASSERT_TRUE(tst::wait_until(
      [&] { return !env.events.about("GrafanaAgent", "owned", "main", "NotOwned").empty(); },
      kDeadline));
  // The Event says it once: the problem is the failure, not an addition to it.
  const auto not_owned = env.events.about("GrafanaAgent", "owned", "main", "NotOwned");
  EXPECT_TRUE(contains(not_owned.front().message, "Secret owned/main-config"))
      << not_owned.front().message;
  EXPECT_FALSE(contains(not_owned.front().message, "(and ")) << not_owned.front().message;

  // The root is retried with backoff and never idle while the Secret is in its way: after
  // three more reconciles the user's Secret is byte-identical (resourceVersion included:
  // never written), and nothing after it was written either.
  const auto seen = agent.reconciles("owned/main");
  ASSERT_TRUE(
      tst::wait_until([&] { return agent.reconciles("owned/main") >= seen + 3; }, kDeadline));
  EXPECT_EQ(env.get(Kind::secret, "owned", "main-config"), before);
  EXPECT_FALSE(env.exists(Kind::stateful_set, "owned", "main"));

  // Once the user's Secret is gone, the root deploys: at its next retry, or at once on
  // any change of the root (here an annotation; the operator's Secret cache only holds
  // its own Secrets, so the user's deletion is no event for it).
  env.remove(Kind::secret, "owned", "main-config");
  env.patch(Kind::grafana_agent, "owned", "main",
            json::value{{"metadata",
                         json::object{{"annotations", json::object{{"example.com/retry", "1"}}}}}});
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.condition_status("owned", "main", "Reconciled") == "True"; }, kDeadline))
      << json::serialize(env.agent_status("owned", "main"));
  EXPECT_TRUE(env.exists(Kind::stateful_set, "owned", "main"));
  EXPECT_TRUE(problem_about(env, "owned", "main", "Secret", "main-config").empty());
}

// Two GrafanaAgents whose generated names collide: agent `a` writes its logs configuration
// to Secret `a-logs-config`, which is also where agent `a-logs` writes its metrics
// configuration. The first keeps its Secret byte-identical; the second reports it.
TEST_F(AgentControllerSimTest, TwoRootsWhoseGeneratedNamesCollideDoNotOverwriteEachOther) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(kOwnershipHierarchy);
  env.create_yaml(R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: a, namespace: owned}
spec:
  logs: {instanceSelector: {matchLabels: {agent: logs}}}
)");
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.condition_status("owned", "a", "Reconciled") == "True"; }, kDeadline))
      << json::serialize(env.agent_status("owned", "a"));
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));
  const auto before = env.get(Kind::secret, "owned", "a-logs-config");
  ASSERT_TRUE(before.has_value());
  const std::string logs_config = env.agent_yml("owned", "a-logs-config");
  ASSERT_TRUE(contains(logs_config, "loki.example")) << logs_config;

  env.create_yaml(R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: a-logs, namespace: owned}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: any}}}
)");
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.condition_status("owned", "a-logs", "Reconciled") == "False"; }, kDeadline))
      << json::serialize(env.agent_status("owned", "a-logs"));
  const auto reconciled = env.condition("owned", "a-logs", "Reconciled");
  EXPECT_EQ(reconciled.at("reason").as_string(), "NotOwned");
  const std::string message(reconciled.at("message").as_string());
  EXPECT_TRUE(contains(message, "Secret owned/a-logs-config")) << message;
  EXPECT_TRUE(contains(message, "it belongs to GrafanaAgent a (uid ")) << message;
  ASSERT_TRUE(tst::wait_until(
      [&] { return !problem_about(env, "owned", "a-logs", "Secret", "a-logs-config").empty(); },
      kDeadline));
  ASSERT_TRUE(tst::wait_until(
      [&] { return !env.events.about("GrafanaAgent", "owned", "a-logs", "NotOwned").empty(); },
      kDeadline));

  const auto seen = agent.reconciles("owned/a-logs");
  ASSERT_TRUE(
      tst::wait_until([&] { return agent.reconciles("owned/a-logs") >= seen + 3; }, kDeadline));
  EXPECT_EQ(env.get(Kind::secret, "owned", "a-logs-config"), before);
  EXPECT_EQ(env.agent_yml("owned", "a-logs-config"), logs_config);
  EXPECT_EQ(env.condition_status("owned", "a", "Reconciled"), "True");
  EXPECT_FALSE(env.exists(Kind::stateful_set, "owned", "a-logs"));
}

}  // namespace
}  // namespace aop::agent::testing
