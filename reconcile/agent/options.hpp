// Operator-wide settings that shape the generated configuration and objects, plus the
// problem records the pure core reports instead of logging.
#pragma once

#include <string>
#include <vector>

#include "k8s/resource.hpp"
#include "reconcile/agent/kinds.hpp"
#include "reconcile/agent/types.hpp"

namespace aop::agent {

// Output-changing fixes of spec 6.13 sit behind this one switch. `upstream` (the
// default) reproduces upstream's output, quirks included; `fixed`:
//  * limit(): the lower of the user and the enforced sample/target limit;
//  * integration pods are privileged like the logs DaemonSet;
//  * config numbers ≥ 1e6 that are integral print as integers (no `1e+06`);
//  * OAuth2 client IDs from ConfigMaps are rendered;
//  * ServiceMonitor/PodMonitor endpoint `authorization` and `oauth2` are rendered;
//  * remote_write queue `retryOnRateLimit` is rendered as `retry_on_http_429`;
//  * Probe `metricRelabelings`, `sampleLimit`, `targetLimit` are rendered;
//  * the governing Service selects only the metrics pods;
//  * `filterRunning` defaults to on (the prometheus-operator default).
enum class Compat { upstream, fixed };

struct Options {
  // `-labels` flag: merged into most generated labels and selectors; these win (3.2).
  Labels operator_labels;
  // The operator's own build version; sanitized into `app.kubernetes.io/version` on pods.
  std::string operator_version;
  Compat compat = Compat::upstream;
};

enum class Severity { warning, error };

// A problem with one member of a hierarchy, for status conditions and Warning Events.
// `field` is a JSON path inside the object (may be empty).
struct Problem {
  Kind kind = Kind::grafana_agent;
  k8s::ObjectKey object;
  std::string field;
  std::string message;
  Severity severity = Severity::error;

  // "ServiceMonitor apps/web: spec.endpoints[0].tlsConfig.caFile: ..."
  std::string str() const;
  bool operator==(const Problem&) const = default;
};

}  // namespace aop::agent
