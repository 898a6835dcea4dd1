// Operator-wide settings that shape the generated configuration and objects.
#pragma once

#include <string>
#include <string_view>

#include "reconcile/agent/kinds.hpp"
#include "reconcile/agent/types.hpp"

namespace aop::agent {

// The fixes of upstream output bugs sit behind this one switch (README: Compatibility
// with the Grafana Agent Operator). `upstream` (the default) reproduces upstream's
// output, quirks included; `fixed`:
//  * limit(): the lower of the user and the enforced sample/target limit;
//  * integration pods are privileged like the logs DaemonSet;
//  * config numbers ≥ 1e6 that are integral print as integers (no `1e+06`);
//  * OAuth2 client IDs from ConfigMaps are rendered;
//  * ServiceMonitor/PodMonitor endpoint `authorization`, `oauth2`, `followRedirects`
//    are rendered;
//  * monitor and Probe label limits are rendered;
//  * remote_write queue `retryOnRateLimit` is rendered as `retry_on_http_429`;
//  * Probe `metricRelabelings`, `sampleLimit`, `targetLimit`, `authorization`, `oauth2`,
//    `prober.proxyUrl` are rendered, and probes are sharded on `__param_target`;
//  * the governing Service selects only the metrics pods;
//  * `filterRunning` defaults to on (the prometheus-operator default).
enum class Compat { upstream, fixed };

// What a GrafanaAgent is deployed as: Grafana Agent static mode, or Grafana Alloy with the
// configuration translated (README: The Alloy backend).
enum class Backend { static_mode, alloy };
inline std::string_view backend_name(Backend backend) {
  return backend == Backend::alloy ? "alloy" : "static";
}

struct Options {
  // `-labels` flag: merged into most generated labels and selectors; these win.
  Labels operator_labels;
  // The operator's own build version; sanitized into `app.kubernetes.io/version` on pods.
  std::string operator_version;
  Compat compat = Compat::upstream;
  // --agent-backend: the backend of GrafanaAgents without the backend annotation.
  Backend backend = Backend::static_mode;
  // --alloy-image: the image of the Alloy containers.
  std::string alloy_image = "grafana/alloy:v1.18.1";
};

}  // namespace aop::agent
