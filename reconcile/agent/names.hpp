// Names in the objects generated for a root, checked before anything is written against
// the rule the API server applies to each (and, for workloads, the names their
// controllers derive from them), so that a root whose name is too long is refused up
// front with one clear problem instead of half-applied and retried forever:
//
//   Service                      a DNS-1035 label, at most 63 characters
//   StatefulSet                  a DNS-1123 label of at most 52 characters: its pods are
//                                named <name>-<ordinal> and used as host names (labels),
//                                and labelled controller-revision-hash=<name>-<10-character
//                                hash>, which must fit the 63 of a label value
//   DaemonSet, Deployment        a DNS-1123 subdomain of at most 242 characters: their
//                                ControllerRevisions and ReplicaSets are <name>-<hash>
//   Secret, ConfigMap            a DNS-1123 subdomain of at most 253 characters
//   label values                 at most 63 characters of [A-Za-z0-9-_.], alphanumeric at
//                                both ends (metadata, selectors, pod templates)
//   volume names                 DNS-1123 labels (pod template volumes and
//                                volumeClaimTemplates)
//
// Generated names are never shortened: the names are upstream's (dashboards, alerts and
// users rely on them), and a name that works upstream is kept unchanged here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "net/result.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/types.hpp"

namespace aop::agent {

struct NameProblem {
  Kind kind = Kind::secret;  // the generated object
  std::string object;        // its name
  std::string field;         // metadata.name, metadata.labels[app.kubernetes.io/instance], ...
  std::string value;
  std::string rule;            // what the value must be
  std::size_t max_length = 0;  // the length limit of the rule
};

// What the API server or a workload controller would refuse among the names and label
// values of the `apply` steps' objects, in step order.
std::vector<NameProblem> check_generated_names(const std::vector<Step>& steps);

// The problems as one error naming the root, each offending name and its limit, and the
// longest name the root could have (when its name is what is too long); nullopt when
// there are none.
std::optional<Error> generated_names_error(const GrafanaAgent& agent,
                                           const std::vector<NameProblem>& problems);

}  // namespace aop::agent
