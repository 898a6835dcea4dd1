// The backend choice of the pipeline: the annotation over --agent-backend, an invalid
// annotation, a root on Alloy (its objects in apply order, the translation condition),
// a class-B failure, Integrations kept on static (hybrid root), and a root switching
// between backends (the other backend's objects found, kept, and deleted in order).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/agent/root_status.hpp"
#include "tests/agent/pipeline_support.hpp"

namespace aop::agent {
namespace {

using namespace aop::agent::testing;

constexpr std::string_view kMembers = R"(
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: m, namespace: ns1}
spec:
  serviceMonitorSelector: {}
  remoteWrite: [{url: "http://mimir/api/v1/push"}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web, namespace: ns1}
spec:
  endpoints: [{port: http}]
)";

std::string agent(std::string_view annotations,
                  std::string_view spec = "{metrics: {instanceSelector: {}}}") {
  return "apiVersion: monitoring.grafana.com/v1alpha1\nkind: GrafanaAgent\nmetadata: {name: "
         "agent, namespace: ns1, uid: ga-1, generation: 2, annotations: " +
         std::string(annotations) + "}\nspec: " + std::string(spec) + "\n";
}

// A cluster that also holds the operator's own objects (as the live caches do; render's
// MemoryCluster has no live state and holds none).
class WithWorkloads final : public ClusterView {
 public:
  WithWorkloads(const MemoryCluster& c, std::vector<k8s::ObjectPtr> workloads)
      : c_(c), workloads_(std::move(workloads)) {}
  Result<void> list(Kind kind, std::string_view ns, const k8s::LabelSelector& selector,
                    const std::function<void(const ListedObject&)>& visit) const override {
    for (const auto& w : workloads_) {
      if (w->kind() == kind_name(kind) && w->ns() == ns) visit(ListedObject{*w});
    }
    return c_.list(kind, ns, selector, visit);
  }
  Result<Labels> namespace_labels(std::string_view ns) const override {
    return c_.namespace_labels(ns);
  }

 private:
  const MemoryCluster& c_;
  std::vector<k8s::ObjectPtr> workloads_;
};

RootPlan plan_of(const std::string& text, const Options& options = {},
                 std::string_view workloads = {}) {
  const MemoryCluster c = cluster_of(text);
  std::vector<k8s::ObjectPtr> listed;
  if (!workloads.empty()) {
    auto docs = k8s::yaml::parse_all(workloads);
    EXPECT_TRUE(docs.has_value());
    for (const auto& d : *docs) listed.push_back(k8s::Object::from_json(d));
  }
  const WithWorkloads view(c, std::move(listed));
  DecodeCache uncached(false);
  return plan_root(*root_of(c), PipelineInputs{view, c, options, uncached, {}});
}

std::vector<std::string> applied(const RootPlan& plan) {
  std::vector<std::string> out;
  for (const auto& s : plan.apply.steps) {
    if (s.action == runtime::ApplyStep::Action::apply) {
      out.push_back(s.kind.kind + " " + s.key.name);
    }
  }
  return out;
}

const runtime::Condition* find_condition(const RootStatus& s, std::string_view type) {
  for (const auto& c : s.update.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

TEST(Backend, TheFlagChoosesForRootsWithoutTheAnnotation) {
  Options alloy;
  alloy.backend = Backend::alloy;
  const RootPlan p = plan_of(
      agent("{}", "{metrics: {shards: 2, instanceSelector: {}}}") + std::string(kMembers), alloy);
  ASSERT_FALSE(p.failure) << p.failure->message;
  ASSERT_TRUE(p.backend);
  EXPECT_EQ(p.backend->backend, Backend::alloy);
  EXPECT_EQ(applied(p),
            (std::vector<std::string>{"Secret agent-secrets", "Secret agent-alloy-config",
                                      "Service agent-alloy-cluster", "StatefulSet agent-alloy"}));
  EXPECT_EQ(p.workloads, (std::vector<WorkloadRef>{{Kind::stateful_set, {"ns1", "agent-alloy"}}}));
  // The static objects of a root without logs or integrations are deleted if present
  // (the hybrid step), and the root's stale Alloy objects pruned.
  ASSERT_FALSE(p.apply.steps.empty());
  EXPECT_EQ(p.apply.steps.back().action, runtime::ApplyStep::Action::prune);
  EXPECT_EQ(p.apply.steps.back().prune.match_labels.at(std::string(kBackendLabel)), "alloy");
  EXPECT_EQ(p.alloy_translation->at(1), "Complete");

  const RootPlan s = plan_of(agent("{}") + std::string(kMembers));
  EXPECT_EQ(s.backend->backend, Backend::static_mode);
  EXPECT_EQ(applied(s).at(1), "Secret agent-config");
  EXPECT_FALSE(s.alloy_translation);
}

TEST(Backend, TheAnnotationWinsOverTheFlag) {
  Options alloy;
  alloy.backend = Backend::alloy;
  const RootPlan s =
      plan_of(agent("{operator.agent.grafana.com/backend: static}") + std::string(kMembers), alloy);
  EXPECT_EQ(s.backend->backend, Backend::static_mode);
  const RootPlan a =
      plan_of(agent("{operator.agent.grafana.com/backend: alloy}") + std::string(kMembers));
  EXPECT_EQ(a.backend->backend, Backend::alloy);
  EXPECT_EQ(applied(a).at(1), "Secret agent-alloy-config");
}

TEST(Backend, AnInvalidAnnotationTouchesNothing) {
  for (const char* v : {"Alloy", "\"\"", "flow"}) {
    const RootPlan p =
        plan_of(agent(std::string("{operator.agent.grafana.com/backend: ") + v + "}") +
                std::string(kMembers));
    ASSERT_TRUE(p.failure) << v;
    EXPECT_EQ(p.failure->stage, Stage::choose_backend);
    EXPECT_EQ(p.failure->code, runtime::Errc::invalid_backend);
    EXPECT_FALSE(p.applies());
    EXPECT_TRUE(p.apply.steps.empty());
    const RootStatus st = root_status(p, nullptr, {}, std::nullopt);
    EXPECT_EQ(find_condition(st, "Reconciled")->reason, "InvalidBackend");
    // Fixed only by an edit of the root: no retry with backoff.
    EXPECT_EQ(st.result.kind, runtime::ReconcileResult::terminal_error("").kind);
  }
  const RootPlan p =
      plan_of(agent("{operator.agent.grafana.com/backend: Alloy}") + std::string(kMembers));
  EXPECT_EQ(p.failure->message,
            "annotation operator.agent.grafana.com/backend: \"Alloy\" is not static or alloy");
}

// Consul service discovery is valid Prometheus (and static mode) but has no Alloy
// translation the backend emits.
std::string class_b_root() {
  return agent("{operator.agent.grafana.com/backend: alloy}") + R"(---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: m, namespace: ns1}
spec:
  remoteWrite: [{url: "http://mimir/api/v1/push"}]
  additionalScrapeConfigs: {name: extra, key: jobs.yaml}
---
apiVersion: v1
kind: Secret
metadata: {name: extra, namespace: ns1}
stringData:
  jobs.yaml: |
    - job_name: consul
      consul_sd_configs: [{server: "consul:8500"}]
)";
}

TEST(Backend, AClassBFailureAppliesTheAssetsSecretOnly) {
  const std::string text = class_b_root();
  const RootPlan p = plan_of(text);
  ASSERT_TRUE(p.failure);
  EXPECT_EQ(p.failure->stage, Stage::translate);
  EXPECT_EQ(p.failure->code, runtime::Errc::translation_failed);
  EXPECT_NE(p.failure->message.find("spec.additionalScrapeConfigs[0].consul_sd_configs"),
            std::string::npos)
      << p.failure->message;
  EXPECT_TRUE(p.applies());
  EXPECT_EQ(applied(p), (std::vector<std::string>{"Secret agent-secrets"}));
  EXPECT_EQ(p.apply.steps.size(), 1U);  // nothing deleted or pruned either
  const RootStatus st = root_status(p, nullptr, {}, std::nullopt);
  EXPECT_EQ(find_condition(st, "Reconciled")->reason, "TranslationFailed");
  ASSERT_NE(find_condition(st, "AlloyTranslation"), nullptr);
  EXPECT_EQ(find_condition(st, "AlloyTranslation")->status, "False");
  EXPECT_EQ(find_condition(st, "AlloyTranslation")->reason, "Failed");
  EXPECT_EQ(st.update.fields.at("backend"), "alloy");
}

// An object of the root as the static backend (`alloy`: the Alloy backend) leaves it.
std::string owned(std::string_view kind, std::string_view name, bool alloy = false,
                  std::string_view uid = "ga-1") {
  const bool workload = kind == "StatefulSet" || kind == "DaemonSet" || kind == "Deployment";
  return "---\napiVersion: " + std::string(workload ? "apps/v1" : "v1") +
         "\nkind: " + std::string(kind) + "\nmetadata:\n  name: " + std::string(name) +
         "\n  namespace: ns1\n  uid: u-" + std::string(name) +
         "\n  labels: {app.kubernetes.io/managed-by: grafana-agent-operator" +
         (kind == "StatefulSet" || alloy ? ", operator.agent.grafana.com/name: agent" : "") +
         (alloy ? ", operator.agent.grafana.com/backend: alloy" : "") +
         "}\n  ownerReferences: [{apiVersion: monitoring.grafana.com/v1alpha1, kind: "
         "GrafanaAgent, name: agent, uid: " +
         std::string(uid) + ", controller: " + (workload ? "true" : "false") + "}]\n";
}

std::vector<std::string> old_names(const RootPlan& p) {
  std::vector<std::string> out;
  for (const auto& [kind, key] : p.old_objects.objects) {
    out.push_back(std::string(kind_name(kind)) + " " + key.name);
  }
  return out;
}

TEST(Backend, IntegrationsWithoutTranslationKeepRunningOnStaticWorkloads) {
  const std::string text =
      agent("{operator.agent.grafana.com/backend: alloy}", "{integrations: {selector: {}}}") +
      R"(---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: odd, namespace: ns1}
spec:
  name: some_exporter_alloy_lacks
  config: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: node, namespace: ns1}
spec:
  name: node_exporter
  type: {allNodes: true}
  config: {}
)";
  const RootPlan p = plan_of(text);
  ASSERT_FALSE(p.failure) << p.failure->message;
  EXPECT_EQ(applied(p),
            (std::vector<std::string>{
                "Secret agent-secrets", "Secret agent-alloy-integrations-ds-config",
                "DaemonSet agent-alloy-integrations-ds", "Secret agent-integrations-deploy-config",
                "Deployment agent-integrations-deploy"}));
  EXPECT_EQ(p.workloads,
            (std::vector<WorkloadRef>{{Kind::daemon_set, {"ns1", "agent-alloy-integrations-ds"}},
                                      {Kind::deployment, {"ns1", "agent-integrations-deploy"}}}));
  EXPECT_EQ(p.alloy_translation->at(1), "Incomplete");
  bool reported = false;
  for (const auto& pr : p.problems) {
    if (pr.object.name == "odd" && pr.severity == Severity::warning) reported = true;
  }
  EXPECT_TRUE(reported);
  // The static workload runs the kept Integration only.
  const auto* cfg = p.apply.find(runtime::GroupKind::of(gvk(Kind::secret)),
                                 {"ns1", "agent-integrations-deploy-config"});
  ASSERT_NE(cfg, nullptr);

  // Switching from static: the kept Integration's static objects are desired, not old;
  // the static DaemonSet of the translated one is old, and kept until Alloy is ready.
  const RootPlan q = plan_of(text, {},
                             owned("Deployment", "agent-integrations-deploy") +
                                 owned("Secret", "agent-integrations-deploy-config") +
                                 owned("DaemonSet", "agent-integrations-ds") +
                                 owned("Secret", "agent-integrations-ds-config"));
  ASSERT_FALSE(q.failure) << q.failure->message;
  EXPECT_EQ(old_names(q), (std::vector<std::string>{"DaemonSet agent-integrations-ds",
                                                    "Secret agent-integrations-ds-config"}));
  for (const auto& step : q.apply.steps) {
    EXPECT_NE(step.action, runtime::ApplyStep::Action::delete_if_managed) << step.key.name;
  }
}

const runtime::Condition* backend_condition(const RootStatus& st) {
  for (const auto& c : st.update.conditions) {
    if (c.type == "Backend") return &c;
  }
  return nullptr;
}

TEST(Backend, ARootOnStaticSwitchesToAlloyNextToItsStaticObjects) {
  const std::string statics = owned("StatefulSet", "agent") +
                              owned("StatefulSet", "agent-shard-1") +
                              owned("Service", "agent-operated") + owned("Secret", "agent-config") +
                              owned("DaemonSet", "agent-logs") + owned("Secret", "agent-secrets");
  // Not the root's static objects: another root's (UID), the Alloy backend's, an object
  // the operator does not manage under a static name is still owned by nobody here.
  const std::string others =
      owned("StatefulSet", "stranger", false, "ga-2") + owned("Secret", "agent-alloy-config", true);
  const std::string alloy = agent("{operator.agent.grafana.com/backend: alloy}");
  const RootPlan p = plan_of(alloy + std::string(kMembers), {}, statics + others);
  ASSERT_FALSE(p.failure) << p.failure->message;
  EXPECT_EQ(p.backend->backend, Backend::alloy);
  // E's objects are applied; nothing of static is deleted by that plan.
  for (const auto& step : p.apply.steps) {
    if (step.action == runtime::ApplyStep::Action::delete_if_managed) {
      EXPECT_TRUE(step.key.name.find("-alloy") != std::string::npos) << step.key.name;
    }
  }
  EXPECT_EQ(applied(p).at(1), "Secret agent-alloy-config");
  // The old objects, workloads first, then Services, then Secrets; the shared assets
  // Secret is not one of them.
  EXPECT_EQ(old_names(p),
            (std::vector<std::string>{"StatefulSet agent", "StatefulSet agent-shard-1",
                                      "DaemonSet agent-logs", "Service agent-operated",
                                      "Secret agent-config"}));
  EXPECT_EQ(p.old_objects.backend, Backend::static_mode);
  ASSERT_EQ(p.old_objects.plan.steps.size(), 4u);
  EXPECT_EQ(p.old_objects.plan.steps[0].prune.kinds.at(0).kind, "StatefulSet");
  EXPECT_EQ(p.old_objects.plan.steps[1].prune.kinds.at(0).kind, "DaemonSet");
  EXPECT_EQ(p.old_objects.plan.steps[2].prune.kinds.at(0).kind, "Service");
  EXPECT_EQ(p.old_objects.plan.steps[3].prune.kinds.at(0).kind, "Secret");
  EXPECT_EQ(p.old_objects.plan.steps[0].prune.owner_uid, "ga-1");

  // Not ready: Switching, the old objects kept; the first such status starts the switch.
  std::vector<WorkloadState> states;
  for (const auto& w : p.workloads) states.push_back(workload_state(w, nullptr));
  const runtime::ApplyReport ok;
  RootStatus st = root_status(p, &ok, states, std::nullopt);
  ASSERT_NE(backend_condition(st), nullptr);
  EXPECT_EQ(backend_condition(st)->status, "False");
  EXPECT_EQ(backend_condition(st)->reason, "Switching");
  EXPECT_EQ(backend_condition(st)->message,
            "static → alloy: 0 of " + std::to_string(p.workloads.size()) +
                " alloy workload(s) ready; static objects are kept until all are ready");
  EXPECT_EQ(st.update.fields.at("backend"), "alloy");
  ASSERT_EQ(st.events.size(), 1u);
  EXPECT_EQ(st.events[0].reason, "SwitchStarted");
  // The same switch seen again (a restart, a new leader): no second Event; the time waited.
  SwitchProgress again;
  again.previous_reason = "Switching";
  again.previous_message = backend_condition(st)->message;
  again.waited = "since 2026-01-01T00:00:00Z, 5m0s ago";
  st = root_status(p, &ok, states, std::nullopt, again);
  EXPECT_TRUE(st.events.empty());
  EXPECT_TRUE(
      backend_condition(st)->message.ends_with("; waiting since 2026-01-01T00:00:00Z, "
                                               "5m0s ago"))
      << backend_condition(st)->message;
  // Deleted: Backend=True, SwitchCompleted.
  runtime::ApplyReport retired;
  retired.deleted = 5;
  SwitchProgress done;
  done.retired = &retired;
  st = root_status(p, &ok, states, std::nullopt, done);
  EXPECT_EQ(backend_condition(st)->status, "True");
  EXPECT_EQ(backend_condition(st)->reason, "Alloy");
  ASSERT_EQ(st.events.size(), 1u);
  EXPECT_EQ(st.events[0].reason, "SwitchCompleted");
  EXPECT_NE(st.events[0].message.find("deleted 5 static object(s)"), std::string::npos)
      << st.events[0].message;
}

TEST(Backend, ARootBackOnStaticHasTheAlloyObjectsAsOldOnesAndNoAlloyTranslation) {
  const std::string alloys = owned("StatefulSet", "agent-alloy", true) +
                             owned("Service", "agent-alloy-cluster", true) +
                             owned("Secret", "agent-alloy-config", true) +
                             owned("StatefulSet", "agent");  // static: desired again
  const RootPlan p = plan_of(
      agent("{operator.agent.grafana.com/backend: static}") + std::string(kMembers), {}, alloys);
  ASSERT_FALSE(p.failure) << p.failure->message;
  EXPECT_EQ(p.old_objects.backend, Backend::alloy);
  EXPECT_EQ(old_names(p),
            (std::vector<std::string>{"StatefulSet agent-alloy", "Service agent-alloy-cluster",
                                      "Secret agent-alloy-config"}));
  const RootStatus st = root_status(p, nullptr, {}, std::nullopt);
  EXPECT_EQ(backend_condition(st)->reason, "Switching");
  EXPECT_TRUE(backend_condition(st)->message.starts_with("alloy → static: "));
  EXPECT_EQ(st.update.removed_conditions, std::vector<std::string>{"AlloyTranslation"});
}

TEST(Backend, ATranslationFailureKeepsTheStaticObjectsAndDeletesNothing) {
  const std::string statics = owned("StatefulSet", "agent") + owned("Secret", "agent-config");
  const RootPlan p = plan_of(class_b_root(), {}, statics);
  ASSERT_TRUE(p.failure);
  ASSERT_EQ(p.failure->stage, Stage::translate);
  EXPECT_EQ(applied(p), std::vector<std::string>{"Secret agent-secrets"});
  EXPECT_EQ(old_names(p).size(), 2u);
  EXPECT_TRUE(p.old_objects.plan.steps.empty()) << "nothing of static is deleted";
  const RootStatus st = root_status(p, nullptr, {}, std::nullopt);
  EXPECT_EQ(backend_condition(st)->reason, "Switching");
}

}  // namespace
}  // namespace aop::agent
