// Hierarchy discovery (spec 2.1–2.5). Order of work follows upstream: MetricsInstances,
// LogsInstances, Integrations; then per MetricsInstance its ServiceMonitors, PodMonitors,
// Probes; then per LogsInstance its PodLogs; finally the asset references. Every list
// is sorted by (namespace, name) because upstream's cache order is undefined (2.4).
#include <algorithm>
#include <set>

#include "k8s/label_selector.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/validate_integrations.hpp"

namespace aop::agent {
namespace {

using boost::json::object;

std::string object_ref(Kind kind, const ObjectMeta& m) {
  return std::string(kind_name(kind)) + " " + m.ns + "/" + m.name;
}

const object* labels_of(const object& o) {
  const auto* md = o.if_contains("metadata");
  if (md == nullptr || !md->is_object()) return nullptr;
  const auto* labels = md->get_object().if_contains("labels");
  return (labels != nullptr && labels->is_object()) ? &labels->get_object() : nullptr;
}

std::string namespace_of(const object& o) {
  const auto* md = o.if_contains("metadata");
  if (md == nullptr || !md->is_object()) return {};
  const auto* ns = md->get_object().if_contains("namespace");
  return (ns != nullptr && ns->is_string()) ? std::string(ns->get_string()) : std::string();
}

std::string name_of(const object& o) {
  const auto* md = o.if_contains("metadata");
  if (md == nullptr || !md->is_object()) return {};
  const auto* n = md->get_object().if_contains("name");
  return (n != nullptr && n->is_string()) ? std::string(n->get_string()) : std::string();
}

template <class T>
void sort_by_key(std::vector<T>& v) {
  std::stable_sort(v.begin(), v.end(), [](const T& a, const T& b) {
    if (a.metadata.ns != b.metadata.ns) return a.metadata.ns < b.metadata.ns;
    return a.metadata.name < b.metadata.name;
  });
}

class Discoverer {
 public:
  Discoverer(const ClusterView& view, Discovery& out) : view_(view), out_(out) {}

  // Lists the children of one edge of spec 2.1. `owner`/`field` locate the selector in
  // error messages (`GrafanaAgent ns/a: spec.metrics.instanceSelector: ...`).
  template <class T, class DecodeFn>
  Result<std::vector<T>> select(Kind kind, const std::string& parent_ns,
                                const std::optional<LabelSelectorSpec>& selector,
                                const std::optional<LabelSelectorSpec>& ns_selector,
                                const std::string& owner, const std::string& field,
                                const std::string& ns_field, DecodeFn&& decode) {
    std::vector<T> out;
    if (!selector) return out;  // nil label selector: nothing (2.2)
    auto sel = k8s::parse_label_selector(selector->raw);
    if (!sel) return make_error(owner + ": " + field + ": " + sel.error().message);
    ListDependency dep;
    dep.kind = kind;
    dep.selector = *sel;
    if (ns_selector) {
      auto nsel = k8s::parse_label_selector(ns_selector->raw);
      if (!nsel) return make_error(owner + ": " + ns_field + ": " + nsel.error().message);
      dep.scope = nsel->matches_everything() ? NamespaceScope::all : NamespaceScope::selected;
      dep.namespace_selector = *nsel;
    } else {
      dep.scope = NamespaceScope::one;
      dep.ns = parent_ns;
    }
    add_dependency(dep);

    std::optional<Error> failure;
    auto listed = view_.list(
        kind, dep.scope == NamespaceScope::one ? std::string_view(parent_ns) : std::string_view(),
        dep.selector, [&](const object& o) {
          if (failure) return;
          if (!dep.selector.matches(k8s::JsonLabels(labels_of(o)))) return;
          const std::string ns = namespace_of(o);
          if (dep.scope == NamespaceScope::one) {
            if (ns != parent_ns) return;
          } else {
            auto labels = namespace_labels(ns);
            if (!labels) {
              failure = make_error(owner + ": looking up Namespace " + ns + " for " +
                                   std::string(kind_name(kind)) + " " + ns + "/" + name_of(o) +
                                   ": " + labels.error().message);
              return;
            }
            if (!dep.namespace_selector.matches(k8s::MapLabels(*labels))) return;
          }
          auto decoded = decode(boost::json::value(o));
          if (!decoded) {
            problem(kind, {ns, name_of(o)}, "", decoded.error().message, Severity::error);
            return;
          }
          out.push_back(std::move(*decoded));
        });
    if (!listed) {
      return make_error(owner + ": listing " + std::string(kind_name(kind)) +
                        " objects: " + listed.error().message);
    }
    if (failure) return *failure;
    sort_by_key(out);
    return out;
  }

  void problem(Kind kind, k8s::ObjectKey key, std::string field, std::string message,
               Severity severity) {
    out_.hierarchy.problems.push_back(
        Problem{kind, std::move(key), std::move(field), std::move(message), severity});
  }

 private:
  void add_dependency(const ListDependency& dep) {
    auto& lists = out_.dependencies.lists;
    if (std::find(lists.begin(), lists.end(), dep) == lists.end()) lists.push_back(dep);
  }

  Result<Labels> namespace_labels(const std::string& ns) {
    const auto it = ns_cache_.find(ns);
    if (it != ns_cache_.end()) return it->second;
    auto labels = view_.namespace_labels(ns);
    if (labels) ns_cache_.emplace(ns, *labels);
    return labels;
  }

  const ClusterView& view_;
  Discovery& out_;
  std::map<std::string, Labels> ns_cache_;
};

// 2.5: a ServiceMonitor that could read files of the agent's filesystem.
std::optional<std::string> fs_access_reason(const ServiceMonitor& sm) {
  for (std::size_t i = 0; i < sm.spec.endpoints.size(); ++i) {
    const auto& e = sm.spec.endpoints[i];
    const std::string at = "spec.endpoints[" + std::to_string(i) + "]";
    if (!e.bearer_token_file.empty()) return at + ".bearerTokenFile";
    if (e.tls_config) {
      if (!e.tls_config->ca_file.empty()) return at + ".tlsConfig.caFile";
      if (!e.tls_config->cert_file.empty()) return at + ".tlsConfig.certFile";
      if (!e.tls_config->key_file.empty()) return at + ".tlsConfig.keyFile";
    }
  }
  return std::nullopt;
}

void add_object_dependencies(Discovery& d) {
  std::set<ObjectDependency> deps;
  for (const auto& ref : d.hierarchy.asset_refs) {
    deps.insert(ObjectDependency{ref.kind == AssetKind::secret ? Kind::secret : Kind::config_map,
                                 {ref.ns, ref.name}});
  }
  d.dependencies.objects.assign(deps.begin(), deps.end());
}

}  // namespace

Discovery discover(const GrafanaAgent& agent, const ClusterView& view, const Options&) {
  Discovery d;
  Hierarchy& h = d.hierarchy;
  h.agent = agent;
  Discoverer disc(view, d);
  const std::string& ans = agent.metadata.ns;
  const std::string owner = object_ref(Kind::grafana_agent, agent.metadata);
  const auto& spec = agent.spec;

  auto fail = [&](Error e) {
    d.error = std::move(e);
    return std::move(d);
  };

  auto metrics = disc.select<MetricsInstance>(
      Kind::metrics_instance, ans, spec.metrics.instance_selector,
      spec.metrics.instance_namespace_selector, owner, "spec.metrics.instanceSelector",
      "spec.metrics.instanceNamespaceSelector", decode_metrics_instance);
  if (!metrics) return fail(metrics.error());
  auto logs = disc.select<LogsInstance>(
      Kind::logs_instance, ans, spec.logs.instance_selector, spec.logs.instance_namespace_selector,
      owner, "spec.logs.instanceSelector", "spec.logs.instanceNamespaceSelector",
      decode_logs_instance);
  if (!logs) return fail(logs.error());
  auto integrations = disc.select<Integration>(
      Kind::integration, ans, spec.integrations.selector, spec.integrations.namespace_selector,
      owner, "spec.integrations.selector", "spec.integrations.namespaceSelector",
      decode_integration);
  if (!integrations) return fail(integrations.error());

  for (auto& mi : *metrics) {
    MetricsEntry entry;
    const std::string inst = object_ref(Kind::metrics_instance, mi.metadata);
    const std::string& ins = mi.metadata.ns;
    auto sms = disc.select<ServiceMonitor>(
        Kind::service_monitor, ins, mi.spec.service_monitor_selector,
        mi.spec.service_monitor_namespace_selector, inst, "spec.serviceMonitorSelector",
        "spec.serviceMonitorNamespaceSelector", decode_service_monitor);
    if (!sms) return fail(sms.error());
    for (auto& sm : *sms) {
      if (spec.metrics.deny_arbitrary_fs_access) {
        if (auto reason = fs_access_reason(sm)) {
          disc.problem(Kind::service_monitor, {sm.metadata.ns, sm.metadata.name}, *reason,
                       "skipped: GrafanaAgent " + ans + "/" + agent.metadata.name +
                           " denies file system access through ServiceMonitors "
                           "(spec.metrics.arbitraryFSAccessThroughSMs.deny)",
                       Severity::warning);
          continue;
        }
      }
      entry.service_monitors.push_back(std::move(sm));
    }
    auto pms = disc.select<PodMonitor>(Kind::pod_monitor, ins, mi.spec.pod_monitor_selector,
                                       mi.spec.pod_monitor_namespace_selector, inst,
                                       "spec.podMonitorSelector",
                                       "spec.podMonitorNamespaceSelector", decode_pod_monitor);
    if (!pms) return fail(pms.error());
    entry.pod_monitors = std::move(*pms);
    auto probes = disc.select<Probe>(Kind::probe, ins, mi.spec.probe_selector,
                                     mi.spec.probe_namespace_selector, inst, "spec.probeSelector",
                                     "spec.probeNamespaceSelector", decode_probe);
    if (!probes) return fail(probes.error());
    entry.probes = std::move(*probes);
    entry.instance = std::move(mi);
    h.metrics.push_back(std::move(entry));
  }
  for (auto& li : *logs) {
    LogsEntry entry;
    const std::string inst = object_ref(Kind::logs_instance, li.metadata);
    auto pls =
        disc.select<PodLogs>(Kind::pod_logs, li.metadata.ns, li.spec.pod_logs_selector,
                             li.spec.pod_logs_namespace_selector, inst, "spec.podLogsSelector",
                             "spec.podLogsNamespaceSelector", decode_pod_logs);
    if (!pls) return fail(pls.error());
    entry.pod_logs = std::move(*pls);
    entry.instance = std::move(li);
    h.logs.push_back(std::move(entry));
  }
  h.integrations = std::move(*integrations);
  validate_integrations(h);  // 6.1 and issue 7: rejected ones are left out

  h.asset_refs = collect_asset_refs(h);
  add_object_dependencies(d);
  return d;
}

}  // namespace aop::agent
