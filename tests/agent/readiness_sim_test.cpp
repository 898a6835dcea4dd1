// Readiness against the test cluster: a workload the API server holds but its controller
// has not yet observed is not ready, and neither is a workload the API server refused to
// create (a missing workload is not a ready one).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

constexpr const char* kLogsOnly = R"(
apiVersion: v1
kind: Namespace
metadata: {name: ready}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: logs, namespace: ready, labels: {agent: main}}
spec:
  clients: [{url: "http://loki.example:3100/loki/api/v1/push"}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: main, namespace: ready}
spec:
  logs: {instanceSelector: {matchLabels: {agent: main}}}
)";

// The status a DaemonSet controller writes once every scheduled pod is ready and it has
// observed the latest spec.
void mark_daemon_set_ready(AgentSim& env, const std::string& ns, const std::string& name) {
  const auto ds = env.get(Kind::daemon_set, ns, name);
  ASSERT_TRUE(ds.has_value());
  const auto generation = ds->at("metadata").at("generation").to_number<std::int64_t>();
  env.patch(Kind::daemon_set, ns, name,
            json::object{{"status", json::object{{"observedGeneration", generation},
                                                 {"desiredNumberScheduled", 1},
                                                 {"currentNumberScheduled", 1},
                                                 {"numberReady", 1},
                                                 {"numberAvailable", 1},
                                                 {"updatedNumberScheduled", 1}}}},
            true);
}

// A DaemonSet just created has desiredNumberScheduled 0 and numberReady 0 and no
// observedGeneration (what kube-apiserver returns before the DaemonSet controller has
// looked at it): not yet rolled out, as `kubectl rollout status` judges it, so the root is
// not Ready until the controller has observed it.
TEST_F(AgentControllerSimTest, ANewDaemonSetNotYetObservedDoesNotMakeTheRootReady) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(kLogsOnly);
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.exists(Kind::daemon_set, "ready", "main-logs") &&
               env.condition_status("ready", "main", "Reconciled") == "True" && agent.idle();
      },
      kDeadline));
  EXPECT_EQ(env.condition_status("ready", "main", "Ready"), "False")
      << json::serialize(env.condition("ready", "main", "Ready"));

  mark_daemon_set_ready(env, "ready", "main-logs");
  EXPECT_TRUE(tst::wait_until(
      [&] { return env.condition_status("ready", "main", "Ready") == "True"; }, kDeadline))
      << json::serialize(env.condition("ready", "main", "Ready"));
}

// A root whose StatefulSets the API server refuses to create (here: kube-apiserver's
// ResourceQuota admission, for a quota with no room for StatefulSets, its status written
// by the test as no quota controller runs) is not Ready, although its logs
// DaemonSet is: a missing workload is not a ready one. kube-sim admits object-count
// quotas as kube-apiserver does.
TEST_F(AgentControllerSimTest, ARootWhoseStatefulSetIsRefusedIsNotReady) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(kLogsOnly);
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.exists(Kind::daemon_set, "ready", "main-logs") && agent.idle(); },
      kDeadline));
  mark_daemon_set_ready(env, "ready", "main-logs");
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.condition_status("ready", "main", "Ready") == "True"; }, kDeadline))
      << json::serialize(env.condition("ready", "main", "Ready"));

  env.create_yaml(R"(
apiVersion: v1
kind: ResourceQuota
metadata: {name: no-statefulsets, namespace: ready}
spec:
  hard: {count/statefulsets.apps: "0"}
)");
  env.patch(k8s::GroupVersionKind{"", "v1", "ResourceQuota"}, "ready", "no-statefulsets",
            json::parse(R"({"status": {"hard": {"count/statefulsets.apps": "0"},
                                       "used": {"count/statefulsets.apps": "0"}}})"),
            true);
  env.create_yaml(R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: metrics, namespace: ready, labels: {agent: main}}
spec:
  remoteWrite: [{url: "http://mimir.example:9009/api/v1/push"}]
)");
  env.patch(Kind::grafana_agent, "ready", "main", json::parse(R"({"spec": {"metrics": {
                "instanceSelector": {"matchLabels": {"agent": "main"}}}}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        const auto c = env.condition("ready", "main", "Reconciled");
        return c.contains("reason") && c.at("reason").as_string() == "ApplyFailed";
      },
      kDeadline))
      << json::serialize(env.condition("ready", "main", "Reconciled"));
  EXPECT_FALSE(env.exists(Kind::stateful_set, "ready", "main"));
  EXPECT_EQ(env.condition_status("ready", "main", "Ready"), "False")
      << json::serialize(env.condition("ready", "main", "Ready"));
}

}  // namespace
}  // namespace aop::agent::testing
