// One GrafanaAgent root, end to end through the pure core: discovery, asset resolution,
// configuration rendering and generated objects, with the failing stage named. The live
// controller and `agent-operator render` both call plan_root(), so for the same cluster
// state they produce the same objects.
#pragma once

#include <optional>
#include <vector>

#include "reconcile/agent/cluster_view.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/options.hpp"

namespace aop::agent {

// Where a root failed (spec 3.12): a discovery or asset error touches no object and is
// retried when a dependency changes; a render error leaves the earlier steps to apply
// and is retried with backoff; generated names the API server would refuse
// (names.hpp) touch no object, and only an edit of the root can fix them.
enum class FailedStage { none, discovery, assets, render, names };

// Counts for the GrafanaAgent's status.
struct HierarchySummary {
  std::size_t metrics_instances = 0;
  std::size_t service_monitors = 0;  // summed over instances (a shared one counts twice)
  std::size_t pod_monitors = 0;
  std::size_t probes = 0;
  std::size_t logs_instances = 0;
  std::size_t pod_logs = 0;
  std::size_t integrations = 0;
};

struct RootPlan {
  bool paused = false;
  // What to watch so that any change reconciles the root again; filled also when a stage
  // failed and when paused (spec 6.8).
  Dependencies dependencies;
  HierarchySummary summary;
  // Problems of members (decode errors, skipped monitors, rejected Integrations, ...).
  std::vector<Problem> problems;
  // Steps to apply, in order; empty when paused or when discovery/assets failed.
  DesiredState desired;
  FailedStage failed = FailedStage::none;
  std::optional<Error> error;
};

RootPlan plan_root(const GrafanaAgent& agent, const ClusterView& view, const AssetSource& assets,
                   const Options& options);

HierarchySummary summarize(const Hierarchy& h);

}  // namespace aop::agent
