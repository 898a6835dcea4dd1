// The kinds the Grafana Agent controller reads and writes, with their API identities.
#pragma once

#include <string_view>

#include "k8s/resource.hpp"

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

inline constexpr std::string_view kGrafanaGroup = "monitoring.grafana.com";
inline constexpr std::string_view kGrafanaVersion = "v1alpha1";

}  // namespace aop::agent
