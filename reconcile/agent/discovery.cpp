// The discover stage (pipeline.hpp). Order of work follows upstream: MetricsInstances,
// LogsInstances, Integrations; then per MetricsInstance its ServiceMonitors, PodMonitors,
// Probes; then per LogsInstance its PodLogs. Every list is sorted by (namespace, name)
// because upstream's cache order is undefined.
#include <algorithm>

#include "k8s/label_selector.hpp"
#include "reconcile/agent/field_checks.hpp"
#include "reconcile/agent/pipeline.hpp"

namespace aop::agent {
namespace {

std::string object_ref(Kind kind, const ObjectMeta& m) {
  return std::string(kind_name(kind)) + " " + m.ns + "/" + m.name;
}

template <class T>
void sort_by_key(std::vector<Shared<T>>& v) {
  std::stable_sort(v.begin(), v.end(), [](const Shared<T>& a, const Shared<T>& b) {
    if (a->metadata.ns != b->metadata.ns) return a->metadata.ns < b->metadata.ns;
    return a->metadata.name < b->metadata.name;
  });
}

// Instances and Integrations are held by value (validation edits an instance's
// additional scrape configs).
template <class T>
std::vector<T> copies(std::vector<Shared<T>> shared) {
  std::vector<T> out;
  out.reserve(shared.size());
  for (const auto& s : shared) out.push_back(*s);
  return out;
}

class Discoverer {
 public:
  Discoverer(const ClusterView& view, DecodeCache& cache, Outcome<Discovered>& out)
      : view_(view), cache_(cache), out_(out) {}

  // Lists the children of one edge of the hierarchy. `owner`/`field` locate the selector
  // in error messages (`GrafanaAgent ns/a: spec.metrics.instanceSelector: ...`).
  template <class T>
  Result<std::vector<Shared<T>>> select(Kind kind, const std::string& parent_ns,
                                        const std::optional<LabelSelectorSpec>& selector,
                                        const std::optional<LabelSelectorSpec>& ns_selector,
                                        const std::string& owner, const std::string& field,
                                        const std::string& ns_field) {
    std::vector<Shared<T>> out;
    if (!selector) return out;  // a nil label selector selects nothing, as upstream
    auto sel = k8s::parse_label_selector(selector->raw);
    if (!sel) return make_error(owner + ": " + field + ": " + sel.error().message);
    runtime::KindSelection dep;
    dep.kind = runtime::GroupKind::of(gvk(kind));
    dep.selector = *sel;
    if (ns_selector) {
      auto nsel = k8s::parse_label_selector(ns_selector->raw);
      if (!nsel) return make_error(owner + ": " + ns_field + ": " + nsel.error().message);
      dep.scope = nsel->matches_everything() ? runtime::NamespaceScope::all
                                             : runtime::NamespaceScope::selected;
      dep.namespace_selector = *nsel;
    } else {
      dep.scope = runtime::NamespaceScope::one;
      dep.ns = parent_ns;
    }
    add_dependency(dep);

    const bool one_namespace = dep.scope == runtime::NamespaceScope::one;
    std::optional<Error> failure;
    auto listed = view_.list(kind, one_namespace ? std::string_view(parent_ns) : std::string_view(),
                             dep.selector, [&](const ListedObject& item) {
                               const k8s::Object& o = item.compact;
                               if (failure) return;
                               if (!dep.selector.matches(o.labels())) return;
                               const std::string ns(o.ns());
                               if (one_namespace) {
                                 if (ns != parent_ns) return;
                               } else {
                                 auto labels = namespace_labels(ns);
                                 if (!labels) {
                                   failure = make_error(owner + ": looking up Namespace " + ns +
                                                        " for " + std::string(kind_name(kind)) +
                                                        " " + ns + "/" + std::string(o.name()) +
                                                        ": " + labels.error().message);
                                   return;
                                 }
                                 if (!dep.namespace_selector.matches(k8s::MapLabels(*labels)))
                                   return;
                               }
                               auto decoded = cache_.decode_shared<T>(o, item.json);
                               if (!decoded) {
                                 problem(kind, {ns, std::string(o.name())}, "",
                                         decoded.error().message, Severity::error);
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
    out_.problems.push_back(
        make_problem(kind, std::move(key), std::move(field), std::move(message), severity));
  }

 private:
  void add_dependency(const runtime::KindSelection& dep) {
    auto& lists = out_.value.selections;
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
  DecodeCache& cache_;
  Outcome<Discovered>& out_;
  std::map<std::string, Labels> ns_cache_;
};

// A ServiceMonitor that could read files of the agent's file system: the field that
// would.
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

}  // namespace

Outcome<Discovered> discover(const GrafanaAgent& agent, const ClusterView& view,
                             DecodeCache& cache) {
  Outcome<Discovered> d;
  Hierarchy& h = d.value.hierarchy;
  h.agent = agent;
  Discoverer disc(view, cache, d);
  const std::string& ans = agent.metadata.ns;
  const std::string owner = object_ref(Kind::grafana_agent, agent.metadata);
  const auto& spec = agent.spec;

  auto fail = [&](const Error& e) {
    d.failure = StageFailure{Stage::discover, runtime::Errc::discovery_failed, e.message};
    return std::move(d);
  };

  auto metrics = disc.select<MetricsInstance>(
      Kind::metrics_instance, ans, spec.metrics.instance_selector,
      spec.metrics.instance_namespace_selector, owner, "spec.metrics.instanceSelector",
      "spec.metrics.instanceNamespaceSelector");
  if (!metrics) return fail(metrics.error());
  auto logs = disc.select<LogsInstance>(
      Kind::logs_instance, ans, spec.logs.instance_selector, spec.logs.instance_namespace_selector,
      owner, "spec.logs.instanceSelector", "spec.logs.instanceNamespaceSelector");
  if (!logs) return fail(logs.error());
  auto integrations = disc.select<Integration>(
      Kind::integration, ans, spec.integrations.selector, spec.integrations.namespace_selector,
      owner, "spec.integrations.selector", "spec.integrations.namespaceSelector");
  if (!integrations) return fail(integrations.error());

  // A member selector of an instance that does not parse: the instance's own checks name
  // the field (pipeline.cpp turns them into the root's refusal).
  auto fail_instance = [&](const Error& e, std::vector<Problem> checked) {
    for (auto& p : checked) {
      if (p.severity == Severity::error) d.problems.push_back(std::move(p));
    }
    return fail(e);
  };

  for (auto& mi : copies(std::move(*metrics))) {
    MetricsEntry entry;
    const std::string inst = object_ref(Kind::metrics_instance, mi.metadata);
    const std::string& ins = mi.metadata.ns;
    auto sms = disc.select<ServiceMonitor>(
        Kind::service_monitor, ins, mi.spec.service_monitor_selector,
        mi.spec.service_monitor_namespace_selector, inst, "spec.serviceMonitorSelector",
        "spec.serviceMonitorNamespaceSelector");
    if (!sms) return fail_instance(sms.error(), check_metrics_instance(mi));
    for (auto& sm : *sms) {
      if (spec.metrics.deny_arbitrary_fs_access) {
        if (auto reason = fs_access_reason(*sm)) {
          disc.problem(Kind::service_monitor, {sm->metadata.ns, sm->metadata.name}, *reason,
                       "skipped: GrafanaAgent " + ans + "/" + agent.metadata.name +
                           " denies file system access through ServiceMonitors "
                           "(spec.metrics.arbitraryFSAccessThroughSMs.deny)",
                       Severity::warning);
          continue;
        }
      }
      entry.service_monitors.push_back(std::move(sm));
    }
    auto pms =
        disc.select<PodMonitor>(Kind::pod_monitor, ins, mi.spec.pod_monitor_selector,
                                mi.spec.pod_monitor_namespace_selector, inst,
                                "spec.podMonitorSelector", "spec.podMonitorNamespaceSelector");
    if (!pms) return fail_instance(pms.error(), check_metrics_instance(mi));
    entry.pod_monitors = std::move(*pms);
    auto probes = disc.select<Probe>(Kind::probe, ins, mi.spec.probe_selector,
                                     mi.spec.probe_namespace_selector, inst, "spec.probeSelector",
                                     "spec.probeNamespaceSelector");
    if (!probes) return fail_instance(probes.error(), check_metrics_instance(mi));
    entry.probes = std::move(*probes);
    entry.instance = std::move(mi);
    h.metrics.push_back(std::move(entry));
  }
  for (auto& li : copies(std::move(*logs))) {
    LogsEntry entry;
    const std::string inst = object_ref(Kind::logs_instance, li.metadata);
    auto pls = disc.select<PodLogs>(Kind::pod_logs, li.metadata.ns, li.spec.pod_logs_selector,
                                    li.spec.pod_logs_namespace_selector, inst,
                                    "spec.podLogsSelector", "spec.podLogsNamespaceSelector");
    if (!pls) return fail_instance(pls.error(), check_logs_instance(li));
    entry.pod_logs = std::move(*pls);
    entry.instance = std::move(li);
    h.logs.push_back(std::move(entry));
  }
  h.integrations = copies(std::move(*integrations));
  return d;
}

}  // namespace aop::agent
