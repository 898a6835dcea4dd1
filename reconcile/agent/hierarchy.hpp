// The hierarchy of one GrafanaAgent, as discovery finds it: the agent, its
// MetricsInstances, LogsInstances and Integrations, their monitors and PodLogs, and the
// Secret/ConfigMap keys they reference (assets). The stages that produce and consume
// these values are declared in pipeline.hpp; these are the values.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "k8s/resource.hpp"
#include "reconcile/agent/kinds.hpp"
#include "reconcile/agent/types.hpp"
#include "reconcile/runtime/dependencies.hpp"

namespace aop::agent {

// Members are shared, immutable, with the decode cache and every other hierarchy that
// holds them (a reconcile neither copies nor frees the hundreds of structs a large root
// has); a list of them is edited by leaving members out, never by changing one.
template <class T>
using Shared = std::shared_ptr<const T>;
template <class T>
Shared<T> share(T value) {
  return std::make_shared<const T>(std::move(value));
}

struct MetricsEntry {
  MetricsInstance instance;
  std::vector<Shared<ServiceMonitor>> service_monitors;
  std::vector<Shared<PodMonitor>> pod_monitors;
  std::vector<Shared<Probe>> probes;
};

struct LogsEntry {
  LogsInstance instance;
  std::vector<Shared<PodLogs>> pod_logs;
};

enum class AssetKind { secret, config_map };

// One Secret/ConfigMap key referenced from the hierarchy.
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

// The discovered hierarchy, each list sorted by (namespace, name): upstream's cache
// order is undefined, so the generated output would otherwise depend on it. Renderers
// keep the order they are given.
struct Hierarchy {
  GrafanaAgent agent;
  std::vector<MetricsEntry> metrics;
  std::vector<LogsEntry> logs;
  std::vector<Integration> integrations;
};

// Collects the Secret/ConfigMap references of a hierarchy, deduplicated by asset key, in
// hierarchy order. Follows upstream's collection rules: a selector held by value counts
// only when both its name and key are set, one held by pointer (or in a list) whenever
// present; a reference belongs to the namespace of the object that holds it. With
// `every_occurrence`, a reference is listed for every object and field that holds it
// (the validate stage reports each), not once per asset key.
std::vector<AssetRef> collect_asset_refs(const Hierarchy& h, bool every_occurrence = false);

// The Secrets and ConfigMaps those references name, deduplicated and sorted: what the
// root must be reconciled again for when it changes.
std::vector<runtime::ObjectDependency> asset_dependencies(const std::vector<AssetRef>& refs);
inline std::vector<runtime::ObjectDependency> asset_dependencies(const Hierarchy& h) {
  return asset_dependencies(collect_asset_refs(h));
}

// ---- assets ---------------------------------------------------------------------------

struct AssetStore {
  std::map<std::string, std::string> values;  // unsanitized asset key → raw value
};

// The assets Secret's data: sanitize_label_name(asset key) → value. Distinct asset keys that
// sanitize to the same data key collide (the one sorting last wins); each collision is reported as
// a warning problem attributed to the agent when `problems` is given.
std::map<std::string, std::string> asset_secret_data(const AssetStore& store,
                                                     const GrafanaAgent& agent,
                                                     std::vector<Problem>* problems);

}  // namespace aop::agent
