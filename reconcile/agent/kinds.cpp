#include "reconcile/agent/kinds.hpp"

namespace aop::agent {

k8s::GroupVersionKind gvk(Kind kind) {
  const std::string grafana(kGrafanaGroup);
  const std::string grafana_v(kGrafanaVersion);
  switch (kind) {
    case Kind::grafana_agent:
      return {grafana, grafana_v, "GrafanaAgent"};
    case Kind::metrics_instance:
      return {grafana, grafana_v, "MetricsInstance"};
    case Kind::logs_instance:
      return {grafana, grafana_v, "LogsInstance"};
    case Kind::pod_logs:
      return {grafana, grafana_v, "PodLogs"};
    case Kind::integration:
      return {grafana, grafana_v, "Integration"};
    case Kind::service_monitor:
      return {"monitoring.coreos.com", "v1", "ServiceMonitor"};
    case Kind::pod_monitor:
      return {"monitoring.coreos.com", "v1", "PodMonitor"};
    case Kind::probe:
      return {"monitoring.coreos.com", "v1", "Probe"};
    case Kind::secret:
      return {"", "v1", "Secret"};
    case Kind::config_map:
      return {"", "v1", "ConfigMap"};
    case Kind::namespace_:
      return {"", "v1", "Namespace"};
    case Kind::service:
      return {"", "v1", "Service"};
    case Kind::stateful_set:
      return {"apps", "v1", "StatefulSet"};
    case Kind::daemon_set:
      return {"apps", "v1", "DaemonSet"};
    case Kind::deployment:
      return {"apps", "v1", "Deployment"};
  }
  return {};
}

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::grafana_agent:
      return "GrafanaAgent";
    case Kind::metrics_instance:
      return "MetricsInstance";
    case Kind::logs_instance:
      return "LogsInstance";
    case Kind::pod_logs:
      return "PodLogs";
    case Kind::integration:
      return "Integration";
    case Kind::service_monitor:
      return "ServiceMonitor";
    case Kind::pod_monitor:
      return "PodMonitor";
    case Kind::probe:
      return "Probe";
    case Kind::secret:
      return "Secret";
    case Kind::config_map:
      return "ConfigMap";
    case Kind::namespace_:
      return "Namespace";
    case Kind::service:
      return "Service";
    case Kind::stateful_set:
      return "StatefulSet";
    case Kind::daemon_set:
      return "DaemonSet";
    case Kind::deployment:
      return "Deployment";
  }
  return {};
}

std::optional<Kind> kind_of(const k8s::GroupVersionKind& g) {
  for (const Kind k : {Kind::grafana_agent, Kind::metrics_instance, Kind::logs_instance,
                       Kind::pod_logs, Kind::integration, Kind::service_monitor, Kind::pod_monitor,
                       Kind::probe, Kind::secret, Kind::config_map, Kind::namespace_, Kind::service,
                       Kind::stateful_set, Kind::daemon_set, Kind::deployment}) {
    const auto known = gvk(k);
    if (known.group == g.group && known.kind == g.kind) return k;
  }
  return std::nullopt;
}

}  // namespace aop::agent
