// Generated names the API server would refuse: the root is refused before any write, with
// a condition and an Event naming the root, each name, the limit and the longest name that
// fits, and the other roots deploy.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

// A GrafanaAgent named with 55 characters generates a governing Service "<name>-operated"
// of 64: kube-apiserver refuses it (a Service name is a DNS-1035 label of at most 63
// characters). The root is refused before any write, with a condition and an Event that
// name it and the limit, and the other roots deploy.
TEST_F(AgentControllerSimTest, NamesTooLongForTheGeneratedObjectsAreRefusedBeforeAnyWrite) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  const std::string long_name(55, 'a');
  ASSERT_EQ(long_name.size() + std::string("-operated").size(), 64u);
  env.create_yaml(R"(
apiVersion: v1
kind: Namespace
metadata: {name: names}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: primary, namespace: names, labels: {agent: any}}
spec:
  remoteWrite: [{url: "http://mimir.example:9009/api/v1/push"}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: short, namespace: names}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: any}}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: )" +
                  long_name + R"(, namespace: names}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: any}}}
)");
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.condition_status("names", long_name, "Reconciled") == "False" &&
               env.condition_status("names", "short", "Reconciled") == "True";
      },
      kDeadline))
      << json::serialize(env.condition("names", long_name, "Reconciled"));
  const auto reconciled = env.condition("names", long_name, "Reconciled");
  EXPECT_EQ(reconciled.at("reason").as_string(), "InvalidName");
  const std::string message(reconciled.at("message").as_string());
  EXPECT_TRUE(contains(message, "GrafanaAgent names/" + long_name)) << message;
  EXPECT_TRUE(contains(message, "Service " + long_name + "-operated")) << message;
  EXPECT_TRUE(contains(message, "63")) << message;
  EXPECT_TRUE(contains(message, "at most 52 characters")) << message;
  ASSERT_TRUE(tst::wait_until(
      [&] { return !env.events.about("GrafanaAgent", "names", long_name, "InvalidName").empty(); },
      kDeadline));

  // Nothing of the long-named root was written: not its Secrets before the Service.
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));
  for (const auto& [kind, n] :
       std::vector<std::pair<Kind, std::string>>{{Kind::secret, long_name + "-secrets"},
                                                 {Kind::secret, long_name + "-config"},
                                                 {Kind::service, long_name + "-operated"},
                                                 {Kind::stateful_set, long_name}}) {
    EXPECT_FALSE(env.exists(kind, "names", n)) << kind_name(kind) << " " << n;
  }
  EXPECT_TRUE(env.exists(Kind::stateful_set, "names", "short"));
}

}  // namespace
}  // namespace aop::agent::testing
