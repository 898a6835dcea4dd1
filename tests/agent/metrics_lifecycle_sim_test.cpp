// A metrics hierarchy across namespaces, end to end against the test cluster: the generated
// objects are exactly what plan_root() (the `render` path) makes of the same state; an
// unchanged resync writes nothing and reads no Secret; readiness follows the
// StatefulSets; a ServiceMonitor relabelled out of the selector, a Namespace losing its
// label and shards 3 → 1 change exactly what they should; an immutable field recreates
// the StatefulSet; what the GrafanaAgent owns carries its ownerReference, and deleting it
// lets kube-sim's garbage collector remove the rest (the real control plane has no garbage
// collector: there the ownerReferences are checked).
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

TEST_F(AgentControllerSimTest, MetricsHierarchyLifecycle) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(kMetricsHierarchy);
  // After the hierarchy: until it exists the root fails to render, and its arrival is
  // what reconciles the root again.
  env.create(AgentSim::secret("agents", "rw-auth",
                              {{"username", "metrics-writer"}, {"password", "pw-1"}}));

  // 1. The objects: assets and config Secrets, the governing Service, two shards of two.
  // (The caches fill independently, so early reconciles may see part of the hierarchy;
  // wait for the whole of it.)
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.exists(Kind::stateful_set, "agents", "main-shard-1") &&
               env.condition_status("agents", "main", "Reconciled") == "True" &&
               contains(env.agent_yml("agents", "main-config"), "serviceMonitor/apps-b/api/1") &&
               contains(env.agent_yml("agents", "main-config"), "probe/apps-a/blackbox") &&
               contains(env.agent_yml("agents", "main-config"), "podMonitor/apps-b/pods/0") &&
               status_int(env.agent_status("agents", "main"), "serviceMonitors") == 2 &&
               status_int(env.agent_status("agents", "main"), "probes") == 1 &&
               status_int(env.agent_status("agents", "main"), "podMonitors") == 1;
      },
      kDeadline))
      << "Reconciled: " << json::serialize(env.condition("agents", "main", "Reconciled"));
  for (const auto& [kind, n] :
       std::vector<std::pair<Kind, std::string>>{{Kind::secret, "main-secrets"},
                                                 {Kind::secret, "main-config"},
                                                 {Kind::service, "main-operated"},
                                                 {Kind::stateful_set, "main"},
                                                 {Kind::stateful_set, "main-shard-1"}}) {
    EXPECT_TRUE(env.exists(kind, "agents", n)) << kind_name(kind) << " " << n;
  }
  const auto sts = env.get(Kind::stateful_set, "agents", "main");
  ASSERT_TRUE(sts.has_value());
  EXPECT_EQ(sts->at("spec").at("replicas").to_number<int>(), 2);
  std::string config = env.agent_yml("agents", "main-config");
  EXPECT_TRUE(contains(config, "job_name: serviceMonitor/apps-a/web/0")) << config;
  EXPECT_TRUE(contains(config, "job_name: serviceMonitor/apps-b/api/0")) << config;
  EXPECT_TRUE(contains(config, "job_name: serviceMonitor/apps-b/api/1")) << config;
  EXPECT_FALSE(contains(config, "apps-c/hidden")) << "namespace not selected";
  EXPECT_TRUE(contains(config, "job_name: podMonitor/apps-b/pods/0")) << config;
  EXPECT_TRUE(contains(config, "job_name: probe/apps-a/blackbox")) << config;
  EXPECT_TRUE(contains(config, "modulus: 2")) << config;
  EXPECT_TRUE(contains(config, "username: metrics-writer")) << config;

  // Status: counts and conditions.
  {
    const auto status = env.agent_status("agents", "main");
    EXPECT_EQ(status_int(status, "metricsInstances"), 1);
    EXPECT_EQ(status_int(status, "serviceMonitors"), 2);
    EXPECT_EQ(status_int(status, "podMonitors"), 1);
    EXPECT_EQ(status_int(status, "probes"), 1);
    EXPECT_EQ(status_int(status, "logsInstances"), 0);
    EXPECT_EQ(status_int(status, "observedGeneration"),
              env.get(Kind::grafana_agent, "agents", "main")
                  ->at("metadata")
                  .at("generation")
                  .to_number<std::int64_t>());
    EXPECT_EQ(env.condition_status("agents", "main", "Ready"), "False")
        << "no pod runs in kube-sim yet";
  }

  // Once settled, Ready reports what the StatefulSets say: kube-sim runs no controller,
  // so none has observed its spec (each new workload reconciles its root again).
  EXPECT_TRUE(tst::wait_until(
      [&] {
        const std::string message = ready_message(env, "agents", "main");
        return contains(message, "StatefulSet agents/main: generation 1 not rolled out yet") &&
               contains(message, "StatefulSet agents/main-shard-1: generation 1 not rolled out");
      },
      kDeadline))
      << json::serialize(env.condition("agents", "main", "Ready"));
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));

  // 2. The live objects are exactly what plan_root() makes of the same state.
  expect_live_equals_plan(env, "agents", "main", module_options().agent);

  // 3. An unchanged resync: every root reconciled again, zero writes, zero Secret reads,
  //    no Event (Normal ones only say what changed).
  {
    const auto recorded = env.events.events().size();
    const auto writes = env.operator_writes();
    const auto fetches = agent.asset_fetches();
    const auto decodes = agent.decodes();
    const auto before = agent.reconciles("agents/main");
    agent.controller().resync_now();
    ASSERT_TRUE(tst::wait_until(
        [&] { return agent.reconciles("agents/main") > before && agent.idle(); }, kDeadline));
    EXPECT_EQ(env.operator_writes(), writes) << "an unchanged resync wrote";
    EXPECT_EQ(env.events.events().size(), recorded) << "an unchanged resync recorded an Event";
    EXPECT_EQ(agent.asset_fetches(), fetches) << "an unchanged resync read Secrets";
    // At most the root again: its own status write moved its resourceVersion.
    EXPECT_LE(agent.decodes(), decodes + 1) << "an unchanged resync decoded its members again";
    EXPECT_EQ(agent.asset_contents(), 1u) << "only the referenced Secret's content is held";
  }

  // 4. Readiness follows the StatefulSets. Ready replicas are not enough while the
  //    StatefulSets' controller has not observed their latest spec ...
  {
    const auto before = agent.reconciles("agents/main");
    env.patch(Kind::stateful_set, "agents", "main",
              json::parse(R"({"status": {"replicas": 2, "readyReplicas": 2}})"), true);
    ASSERT_TRUE(tst::wait_until(
        [&] { return agent.reconciles("agents/main") > before && agent.idle(); }, kDeadline));
    EXPECT_EQ(env.condition_status("agents", "main", "Ready"), "False");
    EXPECT_TRUE(contains(ready_message(env, "agents", "main"),
                         "StatefulSet agents/main: generation 1 not rolled out yet"))
        << ready_message(env, "agents", "main");
  }
  // ... once it has, and every replica is ready, the root is ready.
  for (const std::string n : {"main", "main-shard-1"}) {
    mark_ready(env, Kind::stateful_set, "agents", n, 2);
  }
  EXPECT_TRUE(tst::wait_until(
      [&] { return env.condition_status("agents", "main", "Ready") == "True"; }, kDeadline))
      << json::serialize(env.condition("agents", "main", "Ready"));

  // 5. A ServiceMonitor relabelled out of the selector: its jobs disappear.
  env.patch(Kind::service_monitor, "apps-b", "api",
            json::parse(R"({"metadata": {"labels": {"team": "other"}}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return !contains(env.agent_yml("agents", "main-config"), "serviceMonitor/apps-b/api");
      },
      kDeadline));
  config = env.agent_yml("agents", "main-config");
  EXPECT_TRUE(contains(config, "serviceMonitor/apps-a/web/0"));
  EXPECT_TRUE(tst::wait_until(
      [&] { return status_int(env.agent_status("agents", "main"), "serviceMonitors") == 1; },
      kDeadline));

  // 6. A Namespace losing the label its selector matched: its monitors drop out too.
  env.patch(Kind::namespace_, "", "apps-a",
            json::parse(R"({"metadata": {"labels": {"monitoring": null}}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return !contains(env.agent_yml("agents", "main-config"), "serviceMonitor/apps-a/web");
      },
      kDeadline));
  EXPECT_TRUE(contains(env.agent_yml("agents", "main-config"), "probe/apps-a/blackbox"))
      << "the Probe's namespace selector is {} (all namespaces)";

  // 7. Shards 2 → 3 → 1: the extra StatefulSets are deleted, and only this agent's: not a
  //    same-named agent's in another namespace, not one this agent does not control.
  for (const std::string ns_name : {"apps-c/main-shard-1", "agents/main-shard-5"}) {
    const auto slash = ns_name.find('/');
    auto foreign = json::parse(R"({"apiVersion": "apps/v1", "kind": "StatefulSet",
      "metadata": {"labels": {"app.kubernetes.io/managed-by": "grafana-agent-operator",
                              "operator.agent.grafana.com/name": "main"}},
      "spec": {"serviceName": "other", "selector": {"matchLabels": {"app": "other"}},
        "template": {"metadata": {"labels": {"app": "other"}},
                     "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})");
    auto& md = foreign.as_object()["metadata"].as_object();
    md["namespace"] = ns_name.substr(0, slash);
    md["name"] = ns_name.substr(slash + 1);
    env.create(std::move(foreign));
  }
  env.patch(Kind::grafana_agent, "agents", "main",
            json::parse(R"({"spec": {"metrics": {"shards": 3}}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.exists(Kind::stateful_set, "agents", "main-shard-2"); }, kDeadline));
  env.patch(Kind::grafana_agent, "agents", "main",
            json::parse(R"({"spec": {"metrics": {"shards": 1}}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return !env.exists(Kind::stateful_set, "agents", "main-shard-1") &&
               !env.exists(Kind::stateful_set, "agents", "main-shard-2");
      },
      kDeadline))
      << "stale shards not deleted";
  EXPECT_TRUE(env.exists(Kind::stateful_set, "agents", "main"));
  EXPECT_TRUE(env.exists(Kind::stateful_set, "apps-c", "main-shard-1"));
  EXPECT_TRUE(env.exists(Kind::stateful_set, "agents", "main-shard-5"));
  EXPECT_TRUE(contains(env.agent_yml("agents", "main-config"), "modulus: 1"));

  // 8. A change of an immutable StatefulSet field (WAL storage → volumeClaimTemplates):
  //    the update is rejected and the StatefulSet recreated.
  const auto old_uid = env.get(Kind::stateful_set, "agents", "main")->at("metadata").at("uid");
  env.patch(Kind::grafana_agent, "agents", "main", json::parse(R"({"spec": {"storage": {
      "volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "1Gi"}}}}}}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] {
        const auto s = env.get(Kind::stateful_set, "agents", "main");
        return s && s->at("spec").as_object().contains("volumeClaimTemplates") &&
               s->at("metadata").at("uid") != old_uid;
      },
      kDeadline))
      << "not recreated";
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));
  expect_live_equals_plan(env, "agents", "main", module_options().agent);

  // 9. What the GrafanaAgent owns names it as owner, so that deleting the agent lets
  //    the garbage collector remove it (kube-sim has one; the test control plane has no
  //    controller-manager).
  const std::string agent_uid(
      env.get(Kind::grafana_agent, "agents", "main")->at("metadata").at("uid").as_string());
  for (const auto& [kind, n] :
       std::vector<std::pair<Kind, std::string>>{{Kind::stateful_set, "main"},
                                                 {Kind::service, "main-operated"},
                                                 {Kind::secret, "main-config"},
                                                 {Kind::secret, "main-secrets"}}) {
    const auto o = env.get(kind, "agents", n);
    ASSERT_TRUE(o.has_value()) << kind_name(kind) << " " << n;
    const auto* refs = o->at("metadata").as_object().if_contains("ownerReferences");
    ASSERT_NE(refs, nullptr) << kind_name(kind) << " " << n << " has no ownerReferences";
    const auto& ref = refs->as_array().at(0).as_object();
    EXPECT_EQ(ref.at("uid").as_string(), agent_uid) << kind_name(kind) << " " << n;
    EXPECT_EQ(ref.at("kind").as_string(), "GrafanaAgent") << kind_name(kind) << " " << n;
  }
  if (!env.cluster().is_kube_sim()) return;
  env.remove(Kind::grafana_agent, "agents", "main");
  EXPECT_TRUE(tst::wait_until(
      [&] {
        return !env.exists(Kind::stateful_set, "agents", "main") &&
               !env.exists(Kind::service, "agents", "main-operated") &&
               !env.exists(Kind::secret, "agents", "main-config") &&
               !env.exists(Kind::secret, "agents", "main-secrets");
      },
      kDeadline))
      << "owned objects were not garbage-collected";
  ASSERT_TRUE(tst::wait_until([&] { return agent.idle(); }, kDeadline));
  EXPECT_EQ(agent.asset_contents(), 0u) << "contents of a deleted root's Secrets are dropped";
}

}  // namespace
}  // namespace aop::agent::testing
