// A paused agent is left alone but stays watched, and unpausing deploys it.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

TEST_F(AgentControllerSimTest, PausedAgentIsLeftAloneButStillWatched) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(R"(
apiVersion: v1
kind: Namespace
metadata: {name: p}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: m, namespace: p, labels: {agent: main}}
spec: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: main, namespace: p}
spec:
  paused: true
  metrics: {instanceSelector: {matchLabels: {agent: main}}}
)");
  ASSERT_TRUE(tst::wait_until(
      [&] {
        const auto c = env.condition("p", "main", "Reconciled");
        return c.contains("reason") && c.at("reason").as_string() == "Paused";
      },
      kDeadline));
  EXPECT_FALSE(env.exists(Kind::secret, "p", "main-secrets"));
  EXPECT_FALSE(env.exists(Kind::stateful_set, "p", "main"));
  // Still watched: a member change reconciles the paused root.
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));
  const auto before = agent.reconciles("p/main");
  env.patch(Kind::metrics_instance, "p", "m",
            json::parse(R"({"spec": {"walTruncateFrequency": "1m"}})"));
  ASSERT_TRUE(tst::wait_until([&] { return agent.reconciles("p/main") > before; }, kDeadline));
  EXPECT_FALSE(env.exists(Kind::stateful_set, "p", "main"));

  env.patch(Kind::grafana_agent, "p", "main", json::parse(R"({"spec": {"paused": false}})"));
  EXPECT_TRUE(
      tst::wait_until([&] { return env.exists(Kind::stateful_set, "p", "main"); }, kDeadline));
}

}  // namespace
}  // namespace aop::agent::testing
