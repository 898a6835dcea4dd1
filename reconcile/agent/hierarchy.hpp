// Hierarchy discovery (spec 2): from one GrafanaAgent to its MetricsInstances,
// LogsInstances, Integrations, their monitors and PodLogs, and the Secrets/ConfigMaps they
// reference; then resolution of those references into the asset store.
//
//   Discovery d = discover(agent, view, options);      // lists + Namespace lookups
//   if (!d.ok()) ...                                   // discovery error (3.12)
//   Result<AssetStore> a = resolve_assets(d.hierarchy, source);   // Secret/ConfigMap data
//
// Both steps are pure functions of their views. Discovery also describes what it read
// (Dependencies) so that the runtime can reconcile the root again when any of it changes,
// including after a failed discovery (spec 6.8).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "k8s/label_selector.hpp"
#include "k8s/resource.hpp"
#include "net/result.hpp"
#include "reconcile/agent/cluster_view.hpp"
#include "reconcile/agent/options.hpp"
#include "reconcile/agent/types.hpp"

namespace aop::agent {

struct MetricsEntry {
  MetricsInstance instance;
  std::vector<ServiceMonitor> service_monitors;
  std::vector<PodMonitor> pod_monitors;
  std::vector<Probe> probes;
};

struct LogsEntry {
  LogsInstance instance;
  std::vector<PodLogs> pod_logs;
};

enum class AssetKind { secret, config_map };

// One Secret/ConfigMap key referenced from the hierarchy (spec 2.6).
struct AssetRef {
  AssetKind kind = AssetKind::secret;
  std::string ns;
  std::string name;
  std::string key;
  // Where the reference was found (first occurrence), for error messages.
  Kind owner_kind = Kind::grafana_agent;
  k8s::ObjectKey owner;
  std::string field;

  // `/secrets/<ns>/<name>/<key>` or `/configMaps/<ns>/<name>/<key>`.
  std::string asset_key() const;
};

std::string secret_asset_key(std::string_view ns, const SecretKeySelector& sel);
std::string config_map_asset_key(std::string_view ns, const ConfigMapKeySelector& sel);

// The resolved hierarchy, each list sorted by (namespace, name) (spec 2.4). Renderers
// keep the order they are given.
struct Hierarchy {
  GrafanaAgent agent;
  std::vector<MetricsEntry> metrics;
  std::vector<LogsEntry> logs;
  std::vector<Integration> integrations;
  // Collected references, deduplicated by asset key, in discovery order.
  std::vector<AssetRef> asset_refs;
  // Members skipped or worth a warning (decode errors, filtered ServiceMonitors,
  // duplicate unique Integrations, ...). The rest of the hierarchy is still complete.
  std::vector<Problem> problems;
};

// ---- what a root depends on -----------------------------------------------------------

enum class NamespaceScope {
  one,       // objects in `ns` only
  selected,  // objects in namespaces whose labels match `namespace_selector`
  all,       // objects in every namespace (a `{}` namespace selector)
};

// One list performed by discovery: objects of `kind`, in the given namespaces, whose
// labels match `selector`. Any create/update/delete of such an object (old or new state
// matching), and for `selected` any label change of a Namespace, affects the root.
struct ListDependency {
  Kind kind = Kind::metrics_instance;
  NamespaceScope scope = NamespaceScope::one;
  std::string ns;                         // scope == one
  k8s::LabelSelector namespace_selector;  // scope == selected
  k8s::LabelSelector selector;
  bool operator==(const ListDependency&) const = default;
};

// One referenced Secret or ConfigMap.
struct ObjectDependency {
  Kind kind = Kind::secret;
  k8s::ObjectKey key;
  auto operator<=>(const ObjectDependency&) const = default;
};

struct Dependencies {
  std::vector<ListDependency> lists;      // deduplicated, in discovery order
  std::vector<ObjectDependency> objects;  // deduplicated, sorted
};

struct Discovery {
  Hierarchy hierarchy;        // complete only when ok()
  Dependencies dependencies;  // what was read so far, also after an error
  std::optional<Error> error;
  bool ok() const { return !error.has_value(); }
};

Discovery discover(const GrafanaAgent& agent, const ClusterView& view, const Options& options);

// Collects the Secret/ConfigMap references of a hierarchy (spec 2.6 collection and
// emptiness rules, namespace attribution). discover() calls this; exposed for tests and
// for callers that build a Hierarchy by hand.
std::vector<AssetRef> collect_asset_refs(const Hierarchy& h);

// ---- assets ---------------------------------------------------------------------------

struct AssetStore {
  std::map<std::string, std::string> values;  // unsanitized asset key → raw value
};

// Looks every reference up: an absent object stores nothing; a present object without
// the key is an error (`no key <key> in Secret <name>`), a discovery-stage failure.
Result<AssetStore> resolve_assets(const Hierarchy& h, const AssetSource& source);

// The assets Secret's data: SanitizeLabelName(asset key) → value. Distinct asset keys
// that sanitize to the same data key collide (the one sorting last wins); each collision
// is reported as a warning problem attributed to the agent when `problems` is given.
std::map<std::string, std::string> asset_secret_data(const AssetStore& store,
                                                     const GrafanaAgent& agent,
                                                     std::vector<Problem>* problems);

}  // namespace aop::agent
