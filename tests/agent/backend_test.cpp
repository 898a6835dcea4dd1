// The backend choice of the pipeline: the annotation over --agent-backend, an invalid
// annotation, a root on Alloy (its objects in apply order, the translation condition),
// a class-B failure, Integrations kept on static (hybrid root), and a root asked to move
// to Alloy while its static workloads run (it stays on static until switching exists).
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

// A cluster that also holds workloads (as the live caches do; render's MemoryCluster has
// no live state and holds none).
class WithWorkloads final : public ClusterView {
 public:
  WithWorkloads(const MemoryCluster& c, std::vector<k8s::ObjectPtr> workloads)
      : c_(c), workloads_(std::move(workloads)) {}
  Result<void> list(Kind kind, std::string_view ns, const k8s::LabelSelector& selector,
                    const std::function<void(const ListedObject&)>& visit) const override {
    if (kind != Kind::stateful_set && kind != Kind::daemon_set && kind != Kind::deployment) {
      return c_.list(kind, ns, selector, visit);
    }
    for (const auto& w : workloads_) {
      if (kind_of(k8s::GroupVersionKind{"apps", "v1", std::string(w->kind())}) == kind &&
          w->ns() == ns) {
        visit(ListedObject{*w});
      }
    }
    return {};
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

const runtime::Condition* condition(const RootStatus& s, std::string_view type) {
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
    EXPECT_EQ(condition(st, "Reconciled")->reason, "InvalidBackend");
    // Fixed only by an edit of the root: no retry with backoff.
    EXPECT_EQ(st.result.kind, runtime::ReconcileResult::terminal_error("").kind);
  }
  const RootPlan p =
      plan_of(agent("{operator.agent.grafana.com/backend: Alloy}") + std::string(kMembers));
  EXPECT_EQ(p.failure->message,
            "annotation operator.agent.grafana.com/backend: \"Alloy\" is not static or alloy");
}

TEST(Backend, AClassBFailureAppliesTheAssetsSecretOnly) {
  // Consul service discovery is valid Prometheus (and static mode) but has no Alloy
  // translation the backend emits.
  const std::string text = agent("{operator.agent.grafana.com/backend: alloy}") + R"(---
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
  EXPECT_EQ(condition(st, "Reconciled")->reason, "TranslationFailed");
  ASSERT_NE(condition(st, "AlloyTranslation"), nullptr);
  EXPECT_EQ(condition(st, "AlloyTranslation")->status, "False");
  EXPECT_EQ(condition(st, "AlloyTranslation")->reason, "Failed");
  EXPECT_EQ(st.update.fields.at("backend"), "alloy");
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
}

TEST(Backend, ARootRunningOnStaticStaysThereWhenAlloyIsAskedFor) {
  const std::string workload = R"(
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: agent
  namespace: ns1
  labels: {app.kubernetes.io/managed-by: grafana-agent-operator,
           operator.agent.grafana.com/name: agent}
  ownerReferences: [{apiVersion: monitoring.grafana.com/v1alpha1, kind: GrafanaAgent,
                     name: agent, uid: ga-1, controller: true}]
spec: {}
)";
  const std::string alloy = agent("{operator.agent.grafana.com/backend: alloy}");
  const RootPlan p = plan_of(alloy + std::string(kMembers), {}, workload);
  ASSERT_FALSE(p.failure) << p.failure->message;
  EXPECT_EQ(p.backend->backend, Backend::static_mode);
  EXPECT_FALSE(p.backend->held.empty());
  EXPECT_EQ(applied(p).at(1), "Secret agent-config");
  const RootStatus st = root_status(p, nullptr, {}, std::nullopt);
  ASSERT_NE(condition(st, "Backend"), nullptr);
  EXPECT_EQ(condition(st, "Backend")->status, "False");
  EXPECT_EQ(condition(st, "Backend")->reason, "SwitchNotSupported");
  EXPECT_EQ(st.update.fields.at("backend"), "static");
  ASSERT_FALSE(p.problems.empty());
  EXPECT_EQ(p.problems.back().severity, Severity::warning);
  EXPECT_EQ(p.problems.back().field, "metadata.annotations[operator.agent.grafana.com/backend]");

  // The Alloy backend's own StatefulSet, or another root's, does not hold it.
  std::string alloy_sts = workload;
  alloy_sts.replace(alloy_sts.find("operator.agent.grafana.com/name: agent}"), 39,
                    "operator.agent.grafana.com/name: agent, operator.agent.grafana.com/backend: "
                    "alloy}");
  const RootPlan q = plan_of(alloy + std::string(kMembers), {}, alloy_sts);
  EXPECT_EQ(q.backend->backend, Backend::alloy);
  std::string other = workload;
  other.replace(other.find("uid: ga-1"), 9, "uid: ga-2");
  const RootPlan r = plan_of(alloy + std::string(kMembers), {}, other);
  EXPECT_EQ(r.backend->backend, Backend::alloy);
}

}  // namespace
}  // namespace aop::agent
