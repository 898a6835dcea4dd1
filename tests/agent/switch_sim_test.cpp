// Switching a live root between the static and the Alloy backend, against the test
// cluster: the new backend's objects are created next to the old ones, the old ones go
// only once every new workload reports ready (the test plays the workload controllers,
// writing status as they would), whatever happens to the members meanwhile; a switch back
// midway is safe; a paused root is left alone; and an operator restarted, or a new leader, finishes
// a switch another one started, from what the cluster holds.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

constexpr std::string_view kSwitchHierarchy = R"(
apiVersion: v1
kind: Namespace
metadata: {name: mon}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: primary, namespace: mon, labels: {agent: main}}
spec:
  serviceMonitorSelector: {matchLabels: {team: web}}
  remoteWrite: [{url: "https://mimir.example.com/api/v1/push"}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web, namespace: mon, labels: {team: web}}
spec:
  selector: {matchLabels: {app: web}}
  endpoints: [{port: http, interval: 30s}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: logs, namespace: mon, labels: {agent: main}}
spec:
  podLogsSelector: {matchLabels: {team: web}}
  clients: [{url: "https://loki.example.com/loki/api/v1/push"}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: main, namespace: mon}
spec:
  serviceAccountName: agent
  metrics: {shards: 2, instanceSelector: {matchLabels: {agent: main}}}
  logs: {instanceSelector: {matchLabels: {agent: main}}}
)";

using Names = std::vector<std::pair<Kind, std::string>>;

// Each backend's objects of the root above, workloads first.
const Names& static_objects() {
  static const Names names = {{Kind::stateful_set, "main"},    {Kind::stateful_set, "main-shard-1"},
                              {Kind::daemon_set, "main-logs"}, {Kind::service, "main-operated"},
                              {Kind::secret, "main-config"},   {Kind::secret, "main-logs-config"}};
  return names;
}
const Names& alloy_objects() {
  static const Names names = {{Kind::stateful_set, "main-alloy"},
                              {Kind::daemon_set, "main-alloy-logs"},
                              {Kind::service, "main-alloy-cluster"},
                              {Kind::secret, "main-alloy-config"},
                              {Kind::secret, "main-alloy-logs-config"}};
  return names;
}
const Names& static_workloads() {
  static const Names names(static_objects().begin(), static_objects().begin() + 3);
  return names;
}
const Names& alloy_workloads() {
  static const Names names(alloy_objects().begin(), alloy_objects().begin() + 2);
  return names;
}

std::int64_t int_at(const json::object& o, std::string_view a, std::string_view b) {
  const auto* x = o.if_contains(a);
  if (x == nullptr || !x->is_object()) return -1;
  const auto* y = x->as_object().if_contains(b);
  return y != nullptr && y->is_number() ? y->to_number<std::int64_t>() : -1;
}

// Ready as the Ready condition judges it: rolled out, every replica (scheduled pod) ready.
bool ready(const json::object& w) {
  const auto generation = int_at(w, "metadata", "generation");
  if (int_at(w, "status", "observedGeneration") < generation) return false;
  if (w.at("kind") == "DaemonSet") {
    return int_at(w, "status", "numberReady") >= int_at(w, "status", "desiredNumberScheduled");
  }
  return int_at(w, "status", "readyReplicas") >= int_at(w, "spec", "replicas");
}

bool live_and_ready(AgentSim& env, Kind kind, const std::string& name) {
  const auto w = env.get(kind, "mon", name);
  return w && ready(*w);
}

// What the workload controllers write once the pods run: every workload of `names` that
// exists and is not ready at its current generation is reported ready (one pod per
// DaemonSet). Returns whether all of them exist and are ready.
bool run_pods(AgentSim& env, const Names& names) {
  bool all = true;
  for (const auto& [kind, name] : names) {
    const auto w = env.get(kind, "mon", name);
    if (!w) {
      all = false;
      continue;
    }
    if (ready(*w)) continue;
    const auto generation = int_at(*w, "metadata", "generation");
    json::object status{{"observedGeneration", generation}};
    if (kind == Kind::daemon_set) {
      status["desiredNumberScheduled"] = 1;
      status["numberReady"] = 1;
      status["updatedNumberScheduled"] = 1;
    } else {
      const auto replicas = int_at(*w, "spec", "replicas");
      status["replicas"] = replicas;
      status["readyReplicas"] = replicas;
      status["updatedReplicas"] = replicas;
    }
    env.patch(kind, "mon", name, json::value{{"status", std::move(status)}}, true);
    all = false;  // seen ready on the next pass
  }
  return all;
}

bool all_exist(AgentSim& env, const Names& names) {
  for (const auto& [kind, name] : names) {
    if (!env.exists(kind, "mon", name)) return false;
  }
  return true;
}
bool none_exist(AgentSim& env, const Names& names) {
  for (const auto& [kind, name] : names) {
    if (env.exists(kind, "mon", name)) return false;
  }
  return true;
}

// Watches the root while it switches: at every look, each metrics shard and the logs
// pipeline run on a ready workload of at least one backend, and an old backend's object
// is gone only when every workload of the new one is ready.
class NoGap {
 public:
  explicit NoGap(AgentSim& env) : env_(env) {}

  void look(const Names& old_objects, const Names& new_workloads) {
    const bool alloy_metrics = live_and_ready(env_, Kind::stateful_set, "main-alloy");
    const bool alloy_logs = live_and_ready(env_, Kind::daemon_set, "main-alloy-logs");
    for (const std::string shard : {"main", "main-shard-1"}) {
      if (!alloy_metrics && !live_and_ready(env_, Kind::stateful_set, shard)) {
        gaps_.push_back("metrics shard " + shard + " runs on no ready workload");
      }
    }
    if (!alloy_logs && !live_and_ready(env_, Kind::daemon_set, "main-logs")) {
      gaps_.push_back("logs run on no ready workload");
    }
    bool new_ready = true;
    for (const auto& [kind, name] : new_workloads) {
      new_ready = new_ready && live_and_ready(env_, kind, name);
    }
    for (const auto& [kind, name] : old_objects) {
      if (!new_ready && !env_.exists(kind, "mon", name)) {
        gaps_.push_back(std::string(kind_name(kind)) + " " + name +
                        " deleted before the new workloads were ready");
      }
    }
  }
  const std::vector<std::string>& gaps() const { return gaps_; }

 private:
  AgentSim& env_;
  std::vector<std::string> gaps_;
};

void annotate(AgentSim& env, std::string_view backend) {
  env.patch(Kind::grafana_agent, "mon", "main",
            json::value{{"metadata",
                         json::object{{"annotations", json::object{{std::string(kBackendAnnotation),
                                                                    backend}}}}}});
}

// The root's own objects (owned by its UID, managed by the operator), as "Kind name".
std::set<std::string> owned_objects(AgentSim& env) {
  const auto root = env.get(Kind::grafana_agent, "mon", "main");
  const auto uid = root->at("metadata").at("uid");
  std::set<std::string> out;
  for (const Kind k :
       {Kind::secret, Kind::service, Kind::stateful_set, Kind::daemon_set, Kind::deployment}) {
    for (const auto& o : env.list(k, "mon")) {
      const auto& md = o.at("metadata").as_object();
      const auto* refs = md.if_contains("ownerReferences");
      if (refs == nullptr) continue;
      for (const auto& r : refs->as_array()) {
        if (r.at("uid") == uid)
          out.insert(std::string(kind_name(k)) + " " + std::string(md.at("name").as_string()));
      }
    }
  }
  return out;
}

// The objects a fresh render of the root over the cluster's current state applies.
std::set<std::string> rendered_objects(AgentSim& env, const Options& options) {
  MemoryCluster cluster;
  for (const Kind k : {Kind::grafana_agent, Kind::metrics_instance, Kind::logs_instance,
                       Kind::pod_logs, Kind::integration, Kind::service_monitor, Kind::pod_monitor,
                       Kind::probe, Kind::secret, Kind::config_map, Kind::namespace_}) {
    for (auto& o : env.list(k)) EXPECT_TRUE(cluster.add(json::value(std::move(o))).has_value());
  }
  std::set<std::string> out;
  for (const auto& a : cluster.compact(Kind::grafana_agent)) {
    if (a->ns() != "mon" || a->name() != "main") continue;
    const RootPlan plan = plan_root(*a, cluster, options);
    EXPECT_FALSE(plan.failure.has_value()) << plan.failure->message;
    for (const auto& s : plan.apply.steps) {
      if (s.action == runtime::ApplyStep::Action::apply) out.insert(s.kind.kind + " " + s.key.name);
    }
  }
  return out;
}

std::size_t events(AgentSim& env, std::string_view reason) {
  return env.events.about("GrafanaAgent", "mon", "main", reason).size();
}

// Waits until `done`, looking for gaps and playing the workload controllers of `runs`
// at every poll.
bool switch_until(AgentSim& env, NoGap& watch, const Names& old_objects, const Names& new_workloads,
                  const Names& runs, const std::function<bool()>& done) {
  return tst::wait_until(
      [&] {
        watch.look(old_objects, new_workloads);
        run_pods(env, runs);
        return done();
      },
      kDeadline);
}

// The root of kSwitchHierarchy running on static, then switching to Alloy: both backends'
// objects there, the Alloy workloads not ready. `idle`: the operator has nothing to do.
void start_switch(AgentSim& env, NoGap& watch, const std::function<bool()>& idle) {
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return run_pods(env, static_workloads()) &&
               env.condition_reason("mon", "main", "Backend") == "Static";
      },
      kDeadline));
  annotate(env, "alloy");
  ASSERT_TRUE(switch_until(env, watch, static_objects(), alloy_workloads(), {}, [&] {
    return all_exist(env, alloy_objects()) &&
           env.condition_reason("mon", "main", "Backend") == "Switching" && idle();
  })) << json::serialize(env.agent_status("mon", "main"));
}

TEST_F(AgentControllerSimTest, ARootSwitchesToAlloyAndBackWithoutAGap) {
  const AgentModuleOptions options = module_options();
  auto& agent = env.add_agent_controller(options);
  env.start();
  env.create_yaml(kSwitchHierarchy);
  NoGap watch(env);

  // On static, running.
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return run_pods(env, static_workloads()) &&
               env.condition_reason("mon", "main", "Backend") == "Static";
      },
      kDeadline))
      << json::serialize(env.agent_status("mon", "main"));
  std::map<std::string, json::value> static_uids;
  for (const auto& [kind, name] : static_objects()) {
    static_uids[name] = env.get(kind, "mon", name)->at("metadata").at("uid");
  }

  // To Alloy: its objects next to the static ones, which stay while Alloy is not ready.
  annotate(env, "alloy");
  ASSERT_TRUE(switch_until(env, watch, static_objects(), alloy_workloads(), {}, [&] {
    return all_exist(env, alloy_objects()) &&
           env.condition_reason("mon", "main", "Backend") == "Switching" && agent.idle();
  })) << json::serialize(env.agent_status("mon", "main"));
  EXPECT_EQ(env.agent_status("mon", "main").at("backend"), "alloy");
  EXPECT_EQ(env.condition_message("mon", "main", "Backend"),
            "static → alloy: 0 of 2 alloy workload(s) ready; static objects are kept until all "
            "are ready");
  EXPECT_EQ(env.condition_reason("mon", "main", "AlloyTranslation"), "Complete");
  EXPECT_EQ(events(env, "SwitchStarted"), 1u);

  // Members churn meanwhile: the Alloy configuration follows, the static objects are not
  // touched (neither re-rendered nor deleted).
  const auto static_config = env.get(Kind::secret, "mon", "main-config")->at("data");
  const auto alloy_config = env.get(Kind::secret, "mon", "main-alloy-config")->at("data");
  env.create_yaml(R"(
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: api, namespace: mon, labels: {team: web}}
spec:
  selector: {matchLabels: {app: api}}
  endpoints: [{port: metrics}]
)");
  ASSERT_TRUE(switch_until(env, watch, static_objects(), alloy_workloads(), {}, [&] {
    return env.get(Kind::secret, "mon", "main-alloy-config")->at("data") != alloy_config &&
           agent.idle();
  }));
  EXPECT_EQ(env.get(Kind::secret, "mon", "main-config")->at("data"), static_config);

  // One Alloy workload ready of two: still switching, and the message says since when.
  ASSERT_TRUE(switch_until(
      env, watch, static_objects(), alloy_workloads(), {{Kind::stateful_set, "main-alloy"}},
      [&] {
        return env.condition_message("mon", "main", "Backend")
                   .starts_with("static → alloy: 1 of 2 alloy workload(s) ready") &&
               agent.idle();
      }))
      << env.condition_message("mon", "main", "Backend");
  EXPECT_TRUE(contains(env.condition_message("mon", "main", "Backend"), "; waiting since "))
      << env.condition_message("mon", "main", "Backend");
  EXPECT_TRUE(all_exist(env, static_objects()));
  for (const auto& [kind, name] : static_objects()) {
    EXPECT_EQ(env.get(kind, "mon", name)->at("metadata").at("uid"), static_uids[name]) << name;
  }

  // All ready: the static objects go, the shared assets Secret stays.
  ASSERT_TRUE(switch_until(env, watch, static_objects(), alloy_workloads(), alloy_workloads(), [&] {
    return env.condition_reason("mon", "main", "Backend") == "Alloy" &&
           none_exist(env, static_objects()) && agent.idle();
  })) << json::serialize(env.agent_status("mon", "main"));
  EXPECT_TRUE(env.exists(Kind::secret, "mon", "main-secrets"));
  EXPECT_EQ(events(env, "SwitchCompleted"), 1u);
  EXPECT_EQ(owned_objects(env), rendered_objects(env, options.agent));
  expect_live_equals_plan(env, "mon", "main", options.agent);

  // Back to static: the same the other way; AlloyTranslation goes at once.
  annotate(env, "static");
  ASSERT_TRUE(switch_until(env, watch, alloy_objects(), static_workloads(), {}, [&] {
    return all_exist(env, static_objects()) &&
           env.condition_reason("mon", "main", "Backend") == "Switching" && agent.idle();
  })) << json::serialize(env.agent_status("mon", "main"));
  EXPECT_TRUE(env.condition_message("mon", "main", "Backend")
                  .starts_with("alloy → static: 0 of 3 static workload(s)"))
      << env.condition_message("mon", "main", "Backend");
  EXPECT_TRUE(env.condition("mon", "main", "AlloyTranslation").empty());
  EXPECT_EQ(env.agent_status("mon", "main").at("backend"), "static");
  EXPECT_TRUE(all_exist(env, alloy_objects()));
  ASSERT_TRUE(switch_until(env, watch, alloy_objects(), static_workloads(), static_workloads(),
                           [&] {
                             return env.condition_reason("mon", "main", "Backend") == "Static" &&
                                    none_exist(env, alloy_objects()) && agent.idle();
                           }))
      << json::serialize(env.agent_status("mon", "main"));
  EXPECT_EQ(events(env, "SwitchStarted"), 2u);
  EXPECT_EQ(events(env, "SwitchCompleted"), 2u);
  EXPECT_EQ(owned_objects(env), rendered_objects(env, options.agent));
  expect_live_equals_plan(env, "mon", "main", options.agent);
  EXPECT_EQ(watch.gaps(), std::vector<std::string>{});
}

TEST_F(AgentControllerSimTest, ASwitchBackMidwayKeepsTheStaticObjectsUntouched) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(kSwitchHierarchy);
  NoGap watch(env);
  ASSERT_NO_FATAL_FAILURE(start_switch(env, watch, [&] { return agent.idle(); }));
  const auto uid = env.get(Kind::stateful_set, "mon", "main")->at("metadata").at("uid");
  const auto generation =
      env.get(Kind::stateful_set, "mon", "main")->at("metadata").at("generation");
  // Alloy never became ready; back to static, whose workloads are: the Alloy objects go.
  annotate(env, "static");
  ASSERT_TRUE(switch_until(env, watch, alloy_objects(), static_workloads(), {}, [&] {
    return env.condition_reason("mon", "main", "Backend") == "Static" &&
           none_exist(env, alloy_objects()) && agent.idle();
  })) << json::serialize(env.agent_status("mon", "main"));
  const auto sts = env.get(Kind::stateful_set, "mon", "main");
  EXPECT_EQ(sts->at("metadata").at("uid"), uid);
  EXPECT_EQ(sts->at("metadata").at("generation"), generation);
  EXPECT_TRUE(all_exist(env, static_objects()));
  EXPECT_EQ(watch.gaps(), std::vector<std::string>{});
}

TEST_F(AgentControllerSimTest, APausedRootIsNotSwitchedUntilUnpaused) {
  auto& agent = env.add_agent_controller(module_options());
  env.start();
  env.create_yaml(kSwitchHierarchy);
  NoGap watch(env);
  ASSERT_NO_FATAL_FAILURE(start_switch(env, watch, [&] { return agent.idle(); }));
  env.patch(Kind::grafana_agent, "mon", "main", json::parse(R"({"spec": {"paused": true}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.condition_reason("mon", "main", "Reconciled") == "Paused"; }, kDeadline));
  // The Alloy workloads become ready while paused: nothing is deleted.
  ASSERT_TRUE(switch_until(env, watch, static_objects(), alloy_workloads(), alloy_workloads(),
                           [&] { return run_pods(env, alloy_workloads()) && agent.idle(); }));
  EXPECT_TRUE(all_exist(env, static_objects()));
  EXPECT_EQ(env.condition_reason("mon", "main", "Backend"), "Switching");
  env.patch(Kind::grafana_agent, "mon", "main", json::parse(R"({"spec": {"paused": false}})"));
  ASSERT_TRUE(switch_until(env, watch, static_objects(), alloy_workloads(), alloy_workloads(), [&] {
    return env.condition_reason("mon", "main", "Backend") == "Alloy" &&
           none_exist(env, static_objects()) && agent.idle();
  })) << json::serialize(env.agent_status("mon", "main"));
  EXPECT_EQ(watch.gaps(), std::vector<std::string>{});
}

// Another operator process against the same cluster: its own caches and controller,
// writing only while it leads.
class Operator {
 public:
  Operator(AgentSim& env, const AgentModuleOptions& options, bool leading)
      : env_(env), leading_(leading) {
    informers_ = std::make_unique<k8s::InformerFactory>(env.io.executor(), *env.client,
                                                        std::vector<std::string>{});
    runtime::ModuleContext ctx = env.context();
    ctx.informers = informers_.get();
    ctx.may_write = [this] { return leading_.load(); };
    controller_ = std::make_unique<AgentController>(ctx, options);
    informers_->start();
    EXPECT_TRUE(
        tst::wait_until([&] { return controller_->not_ready_reason().empty(); }, kDeadline));
    if (leading) controller_->start_reconciling();
  }
  ~Operator() { stop(); }
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;

  // Leadership acquired (app/: writes allowed, then every root reconciled) or lost.
  void lead() {
    leading_ = true;
    controller_->start_reconciling();
  }
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    leading_ = false;
    env_.io.run(controller_->stop(std::chrono::seconds(30)));
    informers_->stop();
  }
  AgentController& controller() { return *controller_; }

 private:
  AgentSim& env_;
  std::atomic<bool> leading_;
  bool stopped_ = false;
  std::unique_ptr<k8s::InformerFactory> informers_;
  std::unique_ptr<AgentController> controller_;
};

// The first operator starts the switch and goes away (a restart: its successor starts
// cold; a leader change: the standby, watching all along, takes over); the second
// finishes it from what the cluster holds, without announcing it again.
void switch_across_operators(AgentSim& env, bool standby) {
  const AgentModuleOptions options = module_options();
  auto first = std::make_unique<Operator>(env, options, true);
  std::unique_ptr<Operator> second;
  if (standby) second = std::make_unique<Operator>(env, options, false);
  env.create_yaml(kSwitchHierarchy);
  NoGap watch(env);
  ASSERT_NO_FATAL_FAILURE(start_switch(env, watch, [&] { return first->controller().idle(); }));
  first->stop();
  if (standby) {
    // A standby takes over once it has seen the first leader's last status (a real
    // hand-over waits for the lease at least; the status says the switch has begun).
    const std::string written(env.get(Kind::grafana_agent, "mon", "main")
                                  ->at("metadata")
                                  .at("resourceVersion")
                                  .as_string());
    ASSERT_TRUE(tst::wait_until(
        [&] {
          return cache_holds(second->controller(), Kind::grafana_agent, {"mon", "main"}, written);
        },
        kDeadline));
    second->lead();
  } else {
    second = std::make_unique<Operator>(env, options, true);
  }
  ASSERT_TRUE(switch_until(env, watch, static_objects(), alloy_workloads(), alloy_workloads(), [&] {
    return env.condition_reason("mon", "main", "Backend") == "Alloy" &&
           none_exist(env, static_objects()) && second->controller().idle();
  })) << json::serialize(env.agent_status("mon", "main"));
  EXPECT_EQ(events(env, "SwitchStarted"), 1u);
  EXPECT_EQ(events(env, "SwitchCompleted"), 1u);
  EXPECT_EQ(owned_objects(env), rendered_objects(env, options.agent));
  EXPECT_EQ(watch.gaps(), std::vector<std::string>{});
  second->stop();
}

TEST_F(AgentControllerSimTest, AnOperatorRestartedMidSwitchFinishesIt) {
  switch_across_operators(env, false);
}

TEST_F(AgentControllerSimTest, ANewLeaderFinishesASwitchTheOldOneStarted) {
  switch_across_operators(env, true);
}

}  // namespace
}  // namespace aop::agent::testing
