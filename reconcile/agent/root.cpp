#include "reconcile/agent/root.hpp"

#include "reconcile/agent/names.hpp"

namespace aop::agent {

HierarchySummary summarize(const Hierarchy& h) {
  HierarchySummary s;
  s.metrics_instances = h.metrics.size();
  for (const auto& m : h.metrics) {
    s.service_monitors += m.service_monitors.size();
    s.pod_monitors += m.pod_monitors.size();
    s.probes += m.probes.size();
  }
  s.logs_instances = h.logs.size();
  for (const auto& l : h.logs) s.pod_logs += l.pod_logs.size();
  s.integrations = h.integrations.size();
  return s;
}

RootPlan plan_root(const GrafanaAgent& agent, const ClusterView& view, const AssetSource& assets,
                   const Options& options) {
  RootPlan plan;
  Discovery d = discover(agent, view, options);
  plan.dependencies = std::move(d.dependencies);
  // A paused agent is left alone (3.1 step 2) but stays watched (6.8).
  if (agent.spec.paused) {
    plan.paused = true;
    return plan;
  }
  plan.problems = d.hierarchy.problems;
  if (!d.ok()) {
    plan.failed = FailedStage::discovery;
    plan.error = std::move(d.error);
    return plan;
  }
  plan.summary = summarize(d.hierarchy);
  auto store = resolve_assets(d.hierarchy, assets);
  if (!store) {
    plan.failed = FailedStage::assets;
    plan.error = store.error();
    return plan;
  }
  plan.desired = build_objects(d.hierarchy, *store, options);
  for (const auto& p : plan.desired.problems) plan.problems.push_back(p);
  if (auto e = generated_names_error(agent, check_generated_names(plan.desired.steps))) {
    plan.failed = FailedStage::names;
    plan.error = std::move(e);
    plan.desired.steps.clear();
    return plan;
  }
  if (plan.desired.error) {
    plan.failed = FailedStage::render;
    plan.error = plan.desired.error;
  }
  return plan;
}

}  // namespace aop::agent
