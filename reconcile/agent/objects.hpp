// The Kubernetes objects generated for one GrafanaAgent (spec 3.2–3.10): the assets
// Secret, config Secrets, the governing Service, metrics StatefulSets, the logs DaemonSet
// and the integrations Deployment/DaemonSet, as plain JSON objects, in the order upstream
// applies them (3.1 step 6), together with what must be deleted when absent.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "net/result.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/options.hpp"

namespace aop::agent {

// Configs larger than this many bytes are stored gzip-compressed (spec 3.4).
inline constexpr std::size_t kGzipThreshold = 102400;

inline constexpr std::string_view kManagedByKey = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kManagedByValue = "grafana-agent-operator";
inline constexpr std::string_view kAgentNameLabel = "operator.agent.grafana.com/name";
inline constexpr std::string_view kShardLabel = "operator.agent.grafana.com/shard";
inline constexpr std::string_view kTypeLabel = "operator.agent.grafana.com/type";
inline constexpr std::string_view kVersionLabel = "app.kubernetes.io/version";

// Deletes every object of `kind` in `ns` whose labels include `match_labels`, that is
// controlled by the GrafanaAgent with `owner_uid`, and whose name is not in `keep`
// (stale shards, 3.6, scoped per spec 6.7).
struct PruneRule {
  Kind kind = Kind::stateful_set;
  std::string ns;
  Labels match_labels;
  std::string owner_uid;
  std::vector<std::string> keep;
};

// One step of the reconcile, in order (3.1 step 6).
struct Step {
  enum class Action {
    apply,              // create or update `object`
    delete_if_managed,  // delete `kind` ns/name if it exists and carries the managed-by label
    prune,              // `prune`
  };
  Action action = Action::apply;
  boost::json::object object;  // apply
  Kind kind = Kind::secret;    // apply, delete_if_managed
  k8s::ObjectKey key;          // apply, delete_if_managed
  PruneRule prune;             // prune
};

struct DesiredState {
  // Steps up to (not including) the first failing one.
  std::vector<Step> steps;
  // The render error that stopped the steps, if any (3.12: earlier steps still apply;
  // the reconcile is retried with backoff).
  std::optional<Error> error;
  std::vector<Problem> problems;

  // The applied object of `kind` named `name`, or nullptr.
  const boost::json::object* find(Kind kind, std::string_view name) const;
};

// The whole desired state of one root. A paused agent (spec.paused) yields no steps.
DesiredState build_objects(const Hierarchy& h, const AssetStore& assets, const Options& options);

// ---- building blocks, exposed for tests -----------------------------------------------

// Strategic-merge of user containers into generated ones by name (spec 3.9).
boost::json::array merge_containers(boost::json::array generated, const boost::json::array& user);
// Strategic-merge-patch of one core/v1 Container.
boost::json::object strategic_merge_container(const boost::json::object& original,
                                              const boost::json::object& patch);

// `Labels.Merge`: `m` overlaid by the operator's `-labels` (flag labels win).
Labels merge_operator_labels(Labels m, const Options& options);

// A config Secret's data value: the text, gzip-compressed above kGzipThreshold.
std::string config_secret_payload(const std::string& text);

}  // namespace aop::agent
