// The Kubernetes objects generated for one GrafanaAgent (the build-objects stage of
// pipeline.hpp): the assets Secret, config Secrets, the governing Service, metrics
// StatefulSets, the logs DaemonSet and the integrations Deployment/DaemonSet, as plain
// JSON objects in the order upstream applies them, together with what must be deleted
// when the hierarchy no longer needs it and the pruning of stale shards.
#pragma once

#include <string>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "reconcile/agent/config_text.hpp"
#include "reconcile/agent/fragments.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/options.hpp"
#include "reconcile/runtime/apply_plan.hpp"

namespace aop::agent {

inline constexpr std::string_view kManagedByKey = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kManagedByValue = "grafana-agent-operator";
inline constexpr std::string_view kAgentNameLabel = "operator.agent.grafana.com/name";
inline constexpr std::string_view kShardLabel = "operator.agent.grafana.com/shard";
inline constexpr std::string_view kTypeLabel = "operator.agent.grafana.com/type";
inline constexpr std::string_view kVersionLabel = "app.kubernetes.io/version";
// On every object of the Alloy backend (value `alloy`).
inline constexpr std::string_view kBackendLabel = "operator.agent.grafana.com/backend";

// A workload (StatefulSet, DaemonSet, Deployment) the root should have.
struct WorkloadRef {
  Kind kind = Kind::stateful_set;
  k8s::ObjectKey key;
  bool operator==(const WorkloadRef&) const = default;
};

struct DesiredObjects {
  // In upstream's order: the assets Secret; the metrics config Secret and governing
  // Service (or their deletion); the shards' StatefulSets and the pruning of stale
  // shards (only this agent's, in its namespace, controlled by its UID: a same-named
  // agent elsewhere keeps its own); the logs config and DaemonSet; the integrations
  // configs, Deployment and DaemonSet (or their deletions). When a config file failed
  // to assemble, the steps end before its Secret: what comes earlier still applies.
  runtime::ApplyPlan plan;
  // Every workload the hierarchy calls for, also those after a failed config file (the
  // root is not ready while one is missing).
  std::vector<WorkloadRef> workloads;

  // The object this plan applies of `kind` named `name` in the agent's namespace.
  const boost::json::object* find(Kind kind, std::string_view name) const;
};

// ---- building blocks, shared with the Alloy backend and exposed for tests --------------

// The assets Secret `<A>-secrets` (the same for both backends).
boost::json::object assets_secret(const GrafanaAgent& a, const AssetStore& assets);

// The static-mode integrations objects of `h`: the config Secrets of its integrations
// files (from `configs`, consumed) and the Deployment and DaemonSet, or the deletion of
// each that `h` does not need. False, after the steps before it, when a needed file is
// missing from `configs` (it failed to assemble).
bool append_integrations(const Hierarchy& h, ConfigTrees& configs, const Options& options,
                         runtime::ApplyPlan& steps);
// The integrations workloads `h` needs.
std::vector<WorkloadRef> integrations_workloads(const Hierarchy& h);

// Strategic-merge of user containers into generated ones by name.
boost::json::array merge_containers(boost::json::array generated, const boost::json::array& user);
// Strategic-merge-patch of one core/v1 Container.
boost::json::object strategic_merge_container(const boost::json::object& original,
                                              const boost::json::object& patch);

// `Labels.Merge`: `m` overlaid by the operator's `-labels` (flag labels win).
Labels merge_operator_labels(Labels m, const Options& options);

}  // namespace aop::agent
