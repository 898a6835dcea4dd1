// Validation of a hierarchy's Integrations beyond upstream (spec 6.1, issue 7). Upstream
// splices every Integration into the agent configuration as it is and leaves mistakes to
// the agent's runtime; here they are reported as Problems (status condition and Warning
// Event on the Integration) while the rest of the hierarchy still deploys.
//
// Rejected (left out of the hierarchy, so neither rendered nor mounted):
//  * an Integration whose `spec.config` is present but not an object;
//  * one with a volume or volume mount whose name in the workload
//    (integration_volume_name()) is longer than the 63 characters of a volume name: the
//    API server would refuse the whole workload;
//  * a second Integration with the same `spec.name` when either of the two has
//    `spec.type.unique: true` (the first in hierarchy order keeps working).
// Reported only (still rendered, the agent would fail on them at run time):
//  * `spec.config.autoscrape.metrics_instance` naming no MetricsInstance of the hierarchy;
//  * `spec.config.logs_instance` (or `autoscrape.logs_instance`) naming no LogsInstance.
// None of this changes the generated output of a valid hierarchy.
#pragma once

#include "reconcile/agent/hierarchy.hpp"

namespace aop::agent {

// Runs the checks over `h.integrations` (in hierarchy order), removes the rejected ones
// and appends a Problem for each finding to `h.problems`. Call after the metrics and
// logs instances are known and before asset references are collected.
void validate_integrations(Hierarchy& h);

// The name volume `volume` of an Integration gets in the integrations workload:
// <namespace>-<name>-<volume>, so that Integrations cannot collide.
std::string integration_volume_name(const ObjectMeta& integration, std::string_view volume);

}  // namespace aop::agent
