// Normal Events for what the operator changed, as `kubectl get events` shows them: one
// Event per kind of change on the GrafanaAgent, naming the objects; the same change again
// raises that Event's count instead of adding an Event; an unchanged resync records
// nothing (and so writes nothing).
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

std::vector<json::object> with_reason(const std::vector<json::object>& events,
                                      std::string_view reason) {
  std::vector<json::object> out;
  for (const auto& e : events) {
    if (e.at("reason").as_string() == reason) out.push_back(e);
  }
  return out;
}

std::int64_t count_of(const json::object& event) {
  const auto* c = event.if_contains("count");
  return c != nullptr && c->is_number() ? c->to_number<std::int64_t>() : 1;
}

TEST_F(AgentControllerSimTest, NormalEventsSayWhatChangedAndRepeatsRaiseTheCount) {
  runtime::ModuleContext ctx = env.context();
  ctx.events = &env.api_events();
  auto& agent = env.add(std::make_unique<AgentController>(ctx, module_options()));
  env.start();
  env.create_yaml(R"(
apiVersion: v1
kind: Namespace
metadata: {name: feedback}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: shared, namespace: feedback, labels: {agent: any}}
spec:
  remoteWrite: [{url: "http://mimir.example:9009/v1"}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: fb, namespace: feedback}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: any}}}
)");
  auto settled = [&](std::string_view url) {
    return tst::wait_until(
        [&] {
          return contains(env.agent_yml("feedback", "fb-config"), url) && agent.idle() &&
                 agent.caches_caught_up("feedback/fb");
        },
        kDeadline);
  };
  // The Events on the GrafanaAgent with one reason, as the API server holds them.
  auto events_with = [&](std::string_view reason) {
    return with_reason(env.events_about("feedback", "GrafanaAgent", "fb"), reason);
  };
  ASSERT_TRUE(settled("mimir.example:9009/v1"));

  // The objects created, on the GrafanaAgent: in one Event per reconcile that created
  // some (the first reconcile may run before every member is in the caches).
  const auto names_config = [](const std::vector<json::object>& created) {
    for (const auto& e : created) {
      if (contains(std::string(e.at("message").as_string()), "Secret feedback/fb-config")) {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(tst::wait_until([&] { return names_config(events_with("Created")); }, kDeadline))
      << json::serialize(json::value_from(events_with("Created")));
  for (const auto& e : events_with("Created")) {
    const std::string message(e.at("message").as_string());
    EXPECT_EQ(e.at("type").as_string(), "Normal");
    EXPECT_TRUE(contains(message, "created ")) << message;
  }

  // A change: one Updated Event naming what was updated.
  env.patch(Kind::metrics_instance, "feedback", "shared",
            json::parse(R"({"spec": {"remoteWrite": [{"url": "http://mimir.example:9009/v2"}]}})"));
  ASSERT_TRUE(settled("mimir.example:9009/v2"));
  ASSERT_TRUE(tst::wait_until([&] { return !events_with("Updated").empty(); }, kDeadline));
  const auto updated = events_with("Updated");
  ASSERT_EQ(updated.size(), 1u);
  EXPECT_EQ(count_of(updated.front()), 1);
  const std::string message(updated.front().at("message").as_string());
  EXPECT_TRUE(contains(message, "updated Secret feedback/fb-config")) << message;

  // The same change again (back and forth updates the same objects): the same Event, its
  // count raised, as kubectl shows "(x2 over ...)".
  env.patch(Kind::metrics_instance, "feedback", "shared",
            json::parse(R"({"spec": {"remoteWrite": [{"url": "http://mimir.example:9009/v1"}]}})"));
  ASSERT_TRUE(settled("mimir.example:9009/v1"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        const auto now = events_with("Updated");
        return now.size() == 1 && count_of(now.front()) == 2;
      },
      kDeadline))
      << json::serialize(json::value_from(events_with("Updated")));
  EXPECT_EQ(events_with("Updated").front().at("message").as_string(), message);

  // An unchanged resync: reconciled again, no Event, no write at all.
  const auto events = env.events_about("feedback", "GrafanaAgent", "fb");
  const auto writes = env.operator_writes();
  const auto before = agent.reconciles("feedback/fb");
  agent.controller().resync_now();
  ASSERT_TRUE(tst::wait_until(
      [&] { return agent.reconciles("feedback/fb") > before && agent.idle(); }, kDeadline));
  EXPECT_EQ(env.operator_writes(), writes) << "an unchanged resync wrote";
  EXPECT_EQ(env.events_about("feedback", "GrafanaAgent", "fb"), events);
}

}  // namespace
}  // namespace aop::agent::testing
