// A member shared by two hierarchies reconciles both; an agent outside --agent-selector
// is left alone.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "net/metrics.hpp"
#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

// agent_operator_render_fragments_total{result}.
double fragments(std::string_view result) {
  return net::metrics::registry()
      .counter("agent_operator_render_fragments_total", "", {"result"})
      .with({result})
      .value();
}

// A resource shared by two hierarchies reconciles both, and an agent outside
// --agent-selector is left alone; the same with each member's fragment kept
// (--agent-incremental-render), where the edited member must be rendered again for both.
void shared_members(AgentSim& env, bool incremental) {
  AgentModuleOptions options = module_options();
  options.agent_selector = "operated-by=test";
  options.incremental_render = incremental;
  auto& agent = env.add_agent_controller(options);
  env.start();
  env.create_yaml(R"(
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: shared, namespace: team, labels: {agent: any}}
spec:
  serviceMonitorSelector: {matchLabels: {scrape: "yes"}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: app, namespace: team, labels: {scrape: "yes"}}
spec:
  selector: {matchLabels: {app: app}}
  endpoints: [{port: http}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: one, namespace: team, labels: {operated-by: test}}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: any}}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: two, namespace: team, labels: {operated-by: test}}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: any}}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: ignored, namespace: team, labels: {operated-by: someone-else}}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: any}}}
)");
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return contains(env.agent_yml("team", "one-config"), "serviceMonitor/team/app/0") &&
               contains(env.agent_yml("team", "two-config"), "serviceMonitor/team/app/0") &&
               agent.idle();
      },
      kDeadline));
  EXPECT_FALSE(env.exists(Kind::secret, "team", "ignored-config"));
  EXPECT_EQ(agent.reconciles("team/ignored"), 0u);

  const auto one = agent.reconciles("team/one");
  const auto two = agent.reconciles("team/two");
  const double rendered = fragments("rendered");
  const double shared = fragments("shared");
  const double reused = fragments("reused");
  env.patch(Kind::service_monitor, "team", "app",
            json::parse(R"({"spec": {"endpoints": [{"port": "http"}, {"port": "debug"}]}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return contains(env.agent_yml("team", "one-config"), "serviceMonitor/team/app/1") &&
               contains(env.agent_yml("team", "two-config"), "serviceMonitor/team/app/1");
      },
      kDeadline));
  EXPECT_GT(agent.reconciles("team/one"), one);
  EXPECT_GT(agent.reconciles("team/two"), two);
  EXPECT_EQ(agent.reconciles("team/ignored"), 0u);
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));
  // /metrics: the edited monitor was rendered for each root, or by one and shared by the
  // other (whichever came first); nothing was reused.
  if (incremental) {
    EXPECT_GE(fragments("rendered") - rendered + fragments("shared") - shared, 2.0);
    EXPECT_GE(fragments("rendered") - rendered, 1.0);
  }

  // A change of the instance, which member fragments do not read: both roots render
  // again and reuse the monitor's fragment.
  const double reused_before = fragments("reused");
  const double rendered_before = fragments("rendered");
  const auto one_before = agent.reconciles("team/one");
  const auto two_before = agent.reconciles("team/two");
  env.patch(Kind::metrics_instance, "team", "shared",
            json::parse(R"({"spec": {"remoteWrite": [{"url": "http://mimir:9009/push"}]}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return contains(env.agent_yml("team", "one-config"), "mimir:9009") &&
               contains(env.agent_yml("team", "two-config"), "mimir:9009") && agent.idle();
      },
      kDeadline));
  EXPECT_GT(agent.reconciles("team/one"), one_before);
  EXPECT_GT(agent.reconciles("team/two"), two_before);
  if (incremental) {
    EXPECT_GE(fragments("reused") - reused_before, 2.0);
    EXPECT_EQ(fragments("rendered"), rendered_before);
  } else {
    // Without the cache nothing is kept, so nothing is counted.
    EXPECT_EQ(fragments("rendered"), rendered);
    EXPECT_EQ(fragments("shared"), shared);
    EXPECT_EQ(fragments("reused"), reused);
  }
}

TEST_F(AgentControllerSimTest, SharedMembersAndAgentSelector) {
  shared_members(env, false);
}

TEST_F(AgentControllerSimTest, SharedMembersAndAgentSelectorWithIncrementalRendering) {
  shared_members(env, true);
}

}  // namespace
}  // namespace aop::agent::testing
