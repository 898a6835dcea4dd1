// Logs and integrations come and go with their members; invalid Integrations are
// reported (status, Events on the members, a summary on the agent) while the rest
// deploys, and are not reported again on every resync.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

TEST_F(AgentControllerSimTest, LogsAndIntegrationsComeAndGo) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(kLogsIntegrationsHierarchy);

  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.exists(Kind::daemon_set, "agents", "main-integrations-ds") &&
               env.exists(Kind::secret, "agents", "main-integrations-ds-config") &&
               env.condition_status("agents", "main", "Reconciled") == "True";
      },
      kDeadline));
  EXPECT_FALSE(env.exists(Kind::daemon_set, "agents", "main-logs"));
  EXPECT_FALSE(env.exists(Kind::deployment, "agents", "main-integrations-deploy"));
  EXPECT_TRUE(
      contains(env.agent_yml("agents", "main-integrations-ds-config"), "node_exporter_configs:"));

  // A LogsInstance creates the logs DaemonSet and its Secret; removing it deletes them.
  env.create_yaml(kLogsInstance);
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.exists(Kind::daemon_set, "agents", "main-logs") &&
               env.exists(Kind::secret, "agents", "main-logs-config");
      },
      kDeadline));
  EXPECT_TRUE(contains(env.agent_yml("agents", "main-logs-config"), "name: agents/logs"));
  EXPECT_TRUE(tst::wait_until(
      [&] { return status_int(env.agent_status("agents", "main"), "logsInstances") == 1; },
      kDeadline));
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));
  expect_live_equals_plan(env, "agents", "main", module_options().agent);

  env.remove(Kind::logs_instance, "agents", "logs");
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return !env.exists(Kind::daemon_set, "agents", "main-logs") &&
               !env.exists(Kind::secret, "agents", "main-logs-config");
      },
      kDeadline))
      << "logs objects not deleted after the last LogsInstance went";

  // allNodes true → false: from the DaemonSet to the Deployment.
  env.patch(Kind::integration, "agents", "node-exporter",
            json::parse(R"({"spec": {"type": {"allNodes": false}}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.exists(Kind::deployment, "agents", "main-integrations-deploy") &&
               env.exists(Kind::secret, "agents", "main-integrations-deploy-config") &&
               !env.exists(Kind::daemon_set, "agents", "main-integrations-ds") &&
               !env.exists(Kind::secret, "agents", "main-integrations-ds-config");
      },
      kDeadline))
      << "the integration did not move to the Deployment";
  EXPECT_TRUE(contains(env.agent_yml("agents", "main-integrations-deploy-config"),
                       "node_exporter_configs:"));
  // And back.
  env.patch(Kind::integration, "agents", "node-exporter",
            json::parse(R"({"spec": {"type": {"allNodes": true}}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.exists(Kind::daemon_set, "agents", "main-integrations-ds") &&
               !env.exists(Kind::deployment, "agents", "main-integrations-deploy");
      },
      kDeadline))
      << "the integration did not move back to the DaemonSet";
}

TEST_F(AgentControllerSimTest, InvalidIntegrationsAreReportedWhileTheRestDeploys) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(kLogsIntegrationsHierarchy);
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.exists(Kind::daemon_set, "agents", "main-integrations-ds"); }, kDeadline));

  env.create_yaml(R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: node-exporter-2, namespace: agents, labels: {agent: main}}
spec:
  name: node_exporter
  type: {allNodes: true, unique: true}
  config: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: redis, namespace: agents, labels: {agent: main}}
spec:
  name: redis_exporter
  type: {allNodes: true}
  config:
    redis_addr: "redis:6379"
    autoscrape: {enable: true, metrics_instance: agents/missing}
)");

  // Both problems land in status.problems ...
  auto problem_names = [&] {
    std::set<std::string> out;
    const auto status = env.agent_status("agents", "main");
    const auto* problems = status.if_contains("problems");
    if (problems == nullptr || !problems->is_array()) return out;
    for (const auto& p : problems->as_array()) {
      const auto& o = p.as_object();
      out.insert(std::string(o.at("kind").as_string()) + " " +
                 std::string(o.at("name").as_string()) + " " +
                 std::string(o.at("field").as_string()));
    }
    return out;
  };
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return problem_names() ==
               std::set<std::string>{"Integration node-exporter-2 spec.name",
                                     "Integration redis spec.config.autoscrape.metrics_instance"};
      },
      kDeadline))
      << json::serialize(env.agent_status("agents", "main"));

  // ... as a Warning Event on the agent per problem set, naming members and fields (none
  // on the members; the two were created one after the other, so the last Event names
  // both), and in the invalid-objects gauge (the dangling reference is only suspect) ...
  auto last_summary = [&] {
    const auto all = env.events.about("GrafanaAgent", "agents", "main", "InvalidMembers");
    return all.empty() ? std::string() : all.back().message;
  };
  ASSERT_TRUE(tst::wait_until([&] { return contains(last_summary(), "1 invalid, 1 suspect: "); },
                              kDeadline))
      << last_summary();
  const auto summary = env.events.about("GrafanaAgent", "agents", "main", "InvalidMembers");
  const auto summaries = summary.size();
  ASSERT_LE(summaries, 2u);
  const std::string& message = summary.back().message;
  EXPECT_EQ(summary.front().type, k8s::EventType::warning);
  EXPECT_TRUE(contains(message, "1 invalid, 1 suspect: ")) << message;
  EXPECT_TRUE(contains(message, "Integration agents/node-exporter-2: spec.name: ")) << message;
  EXPECT_TRUE(contains(message, "unique")) << message;
  EXPECT_TRUE(
      contains(message, "Integration agents/redis: spec.config.autoscrape.metrics_instance"))
      << message;
  EXPECT_TRUE(contains(message, "agents/missing")) << message;
  EXPECT_FALSE(summary.front().subject.uid.empty()) << "the Event names the GrafanaAgent";
  for (const auto& e : env.events.events()) {
    EXPECT_NE(e.subject.kind, "Integration") << e.reason << ": " << e.message;
  }
  EXPECT_EQ(agent.invalid_objects(Kind::integration), 1u);
  // ... while the rest keeps deploying: the first node_exporter and redis are rendered.
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return contains(env.agent_yml("agents", "main-integrations-ds-config"),
                        "redis_exporter_configs:");
      },
      kDeadline));
  const std::string config = env.agent_yml("agents", "main-integrations-ds-config");
  const auto first = config.find("node_exporter_configs:");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(config.find("node_exporter_configs:", first + 1), std::string::npos);
  EXPECT_EQ(env.condition_status("agents", "main", "Reconciled"), "True");
  EXPECT_TRUE(env.exists(Kind::stateful_set, "agents", "main"));

  // Reported once, not again on every resync.
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));
  const auto events = env.events.events().size();
  const auto before = agent.reconciles("agents/main");
  agent.controller().resync_now();
  ASSERT_TRUE(tst::wait_until(
      [&] { return agent.reconciles("agents/main") > before && agent.idle(); }, kDeadline));
  EXPECT_EQ(env.events.events().size(), events);
  EXPECT_EQ(env.events.about("GrafanaAgent", "agents", "main", "InvalidMembers").size(), summaries);

  // Fixed: the gauge goes back to zero.
  env.remove(Kind::integration, "agents", "node-exporter-2");
  ASSERT_TRUE(
      tst::wait_until([&] { return agent.invalid_objects(Kind::integration) == 0; }, kDeadline));
}

}  // namespace
}  // namespace aop::agent::testing
