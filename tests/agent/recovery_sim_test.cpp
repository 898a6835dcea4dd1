// Recovery after API failures, in kube-sim fault rounds over several roots: a root the API
// server failed is retried with the backoff cap of API failures (however often it failed),
// its status says so while the server fails it, and is rewritten by the first retry after
// the server is back; a status write the server failed is retried too, also after a
// terminal error. The controller's clock is a FakeClock: each round advances it by the
// cap, so the number of retries is exact, and no assertion depends on time.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "net/clock.hpp"
#include "net/metrics.hpp"
#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

constexpr std::uint64_t kRoots = 5;
constexpr auto kApiCap = std::chrono::seconds(1);

std::string root_name(std::uint64_t i) {
  return "agent-" + std::to_string(i);
}

// workqueue_retries_total of the Grafana Agent controller's queue.
std::uint64_t retries() {
  const std::string text = net::metrics::registry().expose();
  const std::string series = R"(workqueue_retries_total{name="grafana-agent"} )";
  const auto at = text.find(series);
  if (at == std::string::npos) return 0;
  return std::stoull(text.substr(at + series.size()));
}

class RecoveryTest : public ::testing::Test {
 protected:
  RecoveryTest() {
    runtime::QueuePolicy policy;
    policy.base_delay = std::chrono::milliseconds(100);
    policy.api_max_delay = kApiCap;
    runtime::ModuleContext ctx = env.context(policy);
    ctx.clock = &clock;
    agent = &env.add(std::make_unique<AgentController>(ctx, module_options()));
  }

  runtime::RateLimitedQueue& queue() { return agent->controller().queue(); }
  // Nothing ready or in flight; `waiting` keys wait for a retry.
  bool quiet(std::size_t waiting) {
    return queue().len() == 0 && queue().processing() == 0 && queue().waiting() == waiting;
  }
  void advance(net::Duration d) {
    clock.advance(d);
    agent->controller().poll();
  }
  // Waits until nothing is left to do, moving the clock over short requeues (a reconcile
  // waiting for the caches to show its own writes) when nothing else runs. Only for
  // phases in which nothing fails.
  bool settle(const std::function<bool()>& done) {
    return tst::wait_until(
        [&] {
          if (queue().len() != 0 || queue().processing() != 0) return false;
          if (queue().waiting() != 0) {
            advance(std::chrono::milliseconds(50));
            return false;
          }
          return done();
        },
        kDeadline);
  }
  bool all_roots(const std::function<bool(const std::string&)>& pred) {
    for (std::uint64_t i = 0; i < kRoots; ++i) {
      if (!pred(root_name(i))) return false;
    }
    return true;
  }
  std::string reason(const std::string& name) {
    const auto c = env.condition("rec", name, "Reconciled");
    const auto* r = c.if_contains("reason");
    return r != nullptr ? std::string(r->as_string()) : std::string("<none>");
  }
  void set_faults(const std::string& resources) {
    env.kube_sim()->set_faults(
        R"({"reset": true, "http_503": 1.0, "retry_after_seconds": 0, "only_user_agent": ")" +
        std::string(kOperatorAgent) + R"(", "only_resources": )" + resources + "}");
  }

  net::FakeClock clock;  // outlives env (and the controller it owns)
  AgentSim env;
  AgentController* agent = nullptr;
};

TEST_F(RecoveryTest, RootsTellTheTruthAsSoonAsTheApiServerIsBack) {
  ASSERT_NE(env.kube_sim(), nullptr) << "fault injection needs kube-sim";
  std::string yaml = R"(
apiVersion: v1
kind: Namespace
metadata: {name: rec}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: shared, namespace: rec, labels: {agent: any}}
spec:
  remoteWrite: [{url: "http://mimir.example:9009/v1"}]
)";
  for (std::uint64_t i = 0; i < kRoots; ++i) {
    yaml +=
        "---\napiVersion: monitoring.grafana.com/v1alpha1\nkind: GrafanaAgent\n"
        "metadata: {name: " +
        root_name(i) +
        ", namespace: rec}\nspec:\n  metrics: {instanceSelector: {matchLabels: {agent: "
        "any}}}\n";
  }
  env.start();
  env.create_yaml(yaml);
  ASSERT_TRUE(settle([&] {
    return all_roots([&](const std::string& n) {
      return env.condition_status("rec", n, "Reconciled") == "True" &&
             agent->caches_caught_up("rec/" + n);
    });
  })) << "the roots did not deploy";

  // Round 1: the server fails every write of the roots' objects, not their status.
  const std::uint64_t before = retries();
  set_faults(R"(["secrets", "services", "statefulsets"])");
  env.patch(Kind::metrics_instance, "rec", "shared",
            json::parse(R"({"spec": {"remoteWrite": [{"url": "http://mimir.example:9009/v2"}]}})"));
  // Each root fails once and says so.
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return retries() - before == kRoots && quiet(kRoots) &&
               all_roots([&](const std::string& n) { return reason(n) == "ApplyFailed"; });
      },
      kDeadline))
      << "retries " << retries() - before << ", " << env.condition("rec", "agent-0", "Reconciled");
  // Each advance by the cap retries every root exactly once, however often it failed
  // (uncapped, the 8th delay would be 12.8 s).
  constexpr std::uint64_t kRounds = 8;
  for (std::uint64_t round = 1; round <= kRounds; ++round) {
    advance(kApiCap);
    ASSERT_TRUE(tst::wait_until(
        [&] { return retries() - before == kRoots * (round + 1) && quiet(kRoots); }, kDeadline))
        << "round " << round << ": retries " << retries() - before;
  }
  EXPECT_TRUE(all_roots([&](const std::string& n) { return reason(n) == "ApplyFailed"; }));

  // The server is back: the next retry applies, and the status says so.
  env.kube_sim()->clear_faults();
  advance(kApiCap);
  ASSERT_TRUE(settle([&] {
    return all_roots([&](const std::string& n) {
      return env.condition_status("rec", n, "Reconciled") == "True" &&
             contains(env.agent_yml("rec", n + "-config"), "mimir.example:9009/v2");
    });
  })) << env.condition("rec", "agent-0", "Reconciled");
  EXPECT_EQ(retries() - before, kRoots * (kRounds + 1))
      << "a root failed after the server was back";

  // Round 2: the server fails status writes. Each root changes (its generation too), and
  // a new root is refused for good (its name is too long), which only its status says.
  ASSERT_TRUE(settle([&] {
    return all_roots([&](const std::string& n) { return agent->caches_caught_up("rec/" + n); });
  }));
  const std::uint64_t before2 = retries();
  set_faults(R"(["grafanaagents/status"])");
  for (std::uint64_t i = 0; i < kRoots; ++i) {
    env.patch(Kind::grafana_agent, "rec", root_name(i),
              json::parse(R"({"spec": {"metrics": {"scrapeInterval": "17s"}}})"));
  }
  const std::string long_name(55, 'x');
  env.create_yaml(
      "apiVersion: monitoring.grafana.com/v1alpha1\nkind: GrafanaAgent\nmetadata: {name: " +
      long_name +
      ", namespace: rec}\nspec:\n  metrics: {instanceSelector: {matchLabels: {agent: any}}}\n");
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return retries() - before2 == kRoots + 1 && quiet(kRoots + 1) &&
               all_roots([&](const std::string& n) {
                 return contains(env.agent_yml("rec", n + "-config"), "scrape_interval: 17s") &&
                        agent->caches_caught_up("rec/" + n);
               });
      },
      kDeadline))
      << "retries " << retries() - before2;
  constexpr std::uint64_t kRounds2 = 3;
  for (std::uint64_t round = 1; round <= kRounds2; ++round) {
    advance(kApiCap);
    ASSERT_TRUE(tst::wait_until(
        [&] { return retries() - before2 == (kRoots + 1) * (round + 1) && quiet(kRoots + 1); },
        kDeadline))
        << "round " << round << ": retries " << retries() - before2;
  }
  // Nothing got through meanwhile.
  EXPECT_EQ(status_int(env.agent_status("rec", "agent-0"), "observedGeneration"), 1);
  EXPECT_EQ(env.condition_status("rec", long_name, "Reconciled"), "<none>");

  env.kube_sim()->clear_faults();
  advance(kApiCap);
  ASSERT_TRUE(settle([&] {
    return all_roots([&](const std::string& n) {
             return status_int(env.agent_status("rec", n), "observedGeneration") == 2 &&
                    env.condition_status("rec", n, "Reconciled") == "True";
           }) &&
           reason(long_name) == "InvalidName";
  })) << env.condition("rec", long_name, "Reconciled");
  EXPECT_EQ(retries() - before2, (kRoots + 1) * (kRounds2 + 1));
}

}  // namespace
}  // namespace aop::agent::testing
