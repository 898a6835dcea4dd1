// One root's poisonous input (a YAML alias bomb in a referenced Secret, next to a
// root-level error) fails that root quickly and clearly, leaves its last good deployment
// as it was, and does not hold up a change to another root, even with a single worker.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

// 10^9 nodes once its aliases are expanded, from 500 bytes.
constexpr const char* kAliasBomb =
    "a0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
    "a1: &a1 [*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0]\n"
    "a2: &a2 [*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1]\n"
    "a3: &a3 [*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2]\n"
    "a4: &a4 [*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3]\n"
    "a5: &a5 [*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4]\n"
    "a6: &a6 [*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5]\n"
    "a7: &a7 [*a6,*a6,*a6,*a6,*a6,*a6,*a6,*a6,*a6,*a6]\n"
    "a8: &a8 [*a7,*a7,*a7,*a7,*a7,*a7,*a7,*a7,*a7,*a7]\n";

// A namespace with a GrafanaAgent and one MetricsInstance writing to <ns>.example.com.
std::string root(const std::string& ns) {
  std::string text = R"(
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: metrics, namespace: NS, labels: {agent: main}}
spec:
  remoteWrite: [{url: "https://NS.example.com/api/v1/write"}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: main, namespace: NS}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: main}}}
)";
  for (auto at = text.find("NS"); at != std::string::npos; at = text.find("NS", at)) {
    text.replace(at, 2, ns);
  }
  return text;
}

std::int64_t resource_version(const json::object& o) {
  return std::stoll(std::string(o.at("metadata").at("resourceVersion").as_string()));
}

TEST_F(AgentControllerSimTest, APoisonedRootFailsAloneAndAnotherRootsChangeIsAppliedAfterIt) {
  // One worker: a reconcile that hung or ran away on the poison would hold up every other
  // root. Backoff so long that the failed root is not retried during the test.
  runtime::QueuePolicy slow;
  slow.base_delay = std::chrono::hours(1);
  slow.max_delay = std::chrono::hours(1);
  runtime::ModuleContext ctx = env.context(slow);
  ctx.workers = 1;
  auto& agent = env.add(std::make_unique<AgentController>(ctx, module_options()));
  env.start();
  env.create_yaml(root("poisoned"));
  env.create_yaml(root("other"));
  env.create(AgentSim::secret("poisoned", "extra-scrape", {{"scrape.yaml", kAliasBomb}}));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return contains(env.agent_yml("poisoned", "main-config"), "poisoned.example.com") &&
               contains(env.agent_yml("other", "main-config"), "other.example.com") && agent.idle();
      },
      kDeadline));
  const auto good = env.get(Kind::secret, "poisoned", "main-config");
  ASSERT_TRUE(good.has_value());
  const auto reconciles_before = agent.reconciles("poisoned/main");

  // Two changes of the same kind, so the controller sees them in this order: the poison
  // (the alias bomb as additional scrape configs, and a password key that does not
  // exist), then an ordinary change of the other root.
  env.patch(Kind::metrics_instance, "poisoned", "metrics", json::parse(R"({"spec": {
      "additionalScrapeConfigs": {"name": "extra-scrape", "key": "scrape.yaml"},
      "remoteWrite": [{"url": "https://poisoned.example.com/api/v1/write",
        "basicAuth": {"username": {"name": "extra-scrape", "key": "user"},
                      "password": {"name": "extra-scrape", "key": "password"}}}]}})"));
  env.patch(
      Kind::metrics_instance, "other", "metrics",
      json::parse(R"({"spec": {"remoteWrite": [{"url": "https://changed.example.com/w"}]}})"));

  ASSERT_TRUE(tst::wait_until(
      [&] { return contains(env.agent_yml("other", "main-config"), "changed.example.com"); },
      kDeadline))
      << "the other root's change was not applied";

  // The poisoned root: refused with a clear reason, the bomb reported by what it is.
  const auto reconciled = env.condition("poisoned", "main", "Reconciled");
  EXPECT_EQ(reconciled.at("reason").as_string(), "AssetResolutionFailed");
  const std::string status = json::serialize(env.agent_status("poisoned", "main"));
  EXPECT_TRUE(contains(status, "aliases expand to more than 100000 nodes")) << status;
  EXPECT_TRUE(contains(status, "spec.remoteWrite[0].basicAuth.password.key")) << status;
  // Its last good deployment is untouched, byte for byte.
  const auto now = env.get(Kind::secret, "poisoned", "main-config");
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(json::serialize(*now), json::serialize(*good));
  // The order: the poisoned root's reconcile ended (its status written) before the other
  // root's change was written, and it was reconciled once, not retried in a loop.
  const auto poisoned_agent = env.get(Kind::grafana_agent, "poisoned", "main");
  const auto other_config = env.get(Kind::secret, "other", "main-config");
  ASSERT_TRUE(poisoned_agent.has_value() && other_config.has_value());
  EXPECT_LT(resource_version(*poisoned_agent), resource_version(*other_config));
  EXPECT_EQ(agent.reconciles("poisoned/main"), reconciles_before + 1);
  EXPECT_EQ(env.condition_status("other", "main", "Reconciled"), "True");
}

}  // namespace
}  // namespace aop::agent::testing
