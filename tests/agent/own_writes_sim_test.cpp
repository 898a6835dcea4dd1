// A cold start reconciles each root once, and a change once more: the operator's own
// writes come back as watch events recognised as echoes, while someone else's edit of an
// owned object is repaired.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

// A cold start reconciles each root once, and a member change once more: the
// operator's own writes (config Secret, workloads) come back as watch events that are
// recognised as echoes and reconcile nothing, while the Ready condition still reflects
// the StatefulSets just created.
TEST_F(AgentControllerSimTest, OneReconcilePerChangeNotAnotherForItsOwnWrites) {
  auto& agent = env.add_agent_controller(module_options());
  env.create_yaml(kMetricsHierarchy);
  env.create(AgentSim::secret("agents", "rw-auth",
                              {{"username", "metrics-writer"}, {"password", "pw-1"}}));
  env.start();  // the whole hierarchy is in the caches before the first reconcile

  // The two StatefulSets' adds are echoes of the creates (the other owned kinds' adds
  // are not watched).
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.condition_status("agents", "main", "Reconciled") == "True" &&
               agent.own_write_echoes() >= 2 && agent.idle();
      },
      kDeadline))
      << "Reconciled: " << json::serialize(env.condition("agents", "main", "Reconciled"));
  EXPECT_EQ(agent.reconciles("agents/main"), 1u);
  const auto ready = env.condition("agents", "main", "Ready");
  const auto* message = ready.if_contains("message");
  ASSERT_NE(message, nullptr) << json::serialize(ready);
  EXPECT_TRUE(contains(std::string(message->as_string()),
                       "StatefulSet agents/main: generation 1 not rolled out yet"))
      << json::serialize(ready);

  // A member change: one reconcile, whose config Secret update is an echo.
  const auto echoes = agent.own_write_echoes();
  env.patch(Kind::service_monitor, "apps-a", "web",
            json::parse(R"({"spec": {"endpoints": [{"port": "http", "interval": "17s"}]}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return contains(env.agent_yml("agents", "main-config"), "scrape_interval: 17s") &&
               agent.own_write_echoes() > echoes && agent.idle();
      },
      kDeadline));
  EXPECT_EQ(agent.reconciles("agents/main"), 2u);

  // Someone else's edit of an owned object is not an echo: it is repaired.
  env.patch(Kind::secret, "agents", "main-config",
            json::parse(R"({"data": {"agent.yml": "ZWRpdGVk"}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return contains(env.agent_yml("agents", "main-config"), "scrape_interval: 17s") &&
               agent.reconciles("agents/main") >= 3 && agent.idle();
      },
      kDeadline));
}

}  // namespace
}  // namespace aop::agent::testing
