// The kinds the Grafana Agent controller reads and writes, with their API identities.
#pragma once

#include <optional>
#include <string_view>

#include "k8s/resource.hpp"
#include "reconcile/runtime/problem.hpp"

namespace aop::agent {

enum class Kind {
  grafana_agent,
  metrics_instance,
  logs_instance,
  pod_logs,
  integration,
  service_monitor,
  pod_monitor,
  probe,
  secret,
  config_map,
  namespace_,
  service,
  stateful_set,
  daemon_set,
  deployment,
};

// apiVersion group/version and kind, e.g. {monitoring.grafana.com, v1alpha1, GrafanaAgent}.
k8s::GroupVersionKind gvk(Kind kind);
// The Kubernetes kind name ("ServiceMonitor").
std::string_view kind_name(Kind kind);
// The Kind of an API kind (any version of its group); nullopt for kinds this controller
// neither reads nor writes.
std::optional<Kind> kind_of(const k8s::GroupVersionKind& gvk);

// Problems are the runtime's (reconcile/runtime/problem.hpp); here, about these kinds.
using runtime::Problem;
using runtime::Severity;
inline Problem make_problem(Kind kind, k8s::ObjectKey object, std::string field,
                            std::string message, Severity severity = Severity::error) {
  return Problem{gvk(kind), std::move(object), std::move(field), std::move(message), severity};
}

inline constexpr std::string_view kGrafanaGroup = "monitoring.grafana.com";
inline constexpr std::string_view kGrafanaVersion = "v1alpha1";

}  // namespace aop::agent
