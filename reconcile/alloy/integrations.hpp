// The integrations configurations of an Alloy root (one for the Deployment subset, one for
// the DaemonSet subset), translated from each Integration's config and the static
// integrations config tree (for the `server` block, `metrics.global` and the instances an
// Integration references).
//
// An Integration Alloy has an exporter for becomes
//
//   prometheus.exporter.<c> → discovery.relabel → prometheus.scrape
//     → [prometheus.relabel + report-series prometheus.relabel] → prometheus.remote_write
//
// where discovery.relabel gives the targets the labels static mode's integrations had
// (job `integrations/<name>`, agent_hostname, instance, the `__meta_agent_integration_*`
// labels, extra_labels, then the user's autoscrape relabel rules); without autoscrape only
// the exporter runs, as in static mode. `eventhandler` becomes
// loki.source.kubernetes_events → loki.relabel → the LogsInstance's loki.write.
//
// An Integration whose name has no Alloy component, or whose config holds a key or value
// the translation does not cover, is kept on static: it is listed in `kept` (and as a
// problem of class `kept`) for the static integrations workloads of the hybrid root.
//
// Files, in packing order: main.alloy, the remote write file of each MetricsInstance an
// Integration sends to, the client file of each LogsInstance an eventhandler sends to
// (both in hierarchy order), then one file per Integration.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "reconcile/alloy/problems.hpp"
#include "reconcile/alloy/syntax.hpp"

namespace aop::alloy {

// One Integration of the hierarchy, in hierarchy order.
struct IntegrationMember {
  std::string ns;
  std::string name;
  std::string integration;    // spec.name
  bool all_nodes = false;     // spec.type.allNodes
  boost::json::value config;  // spec.config as decoded (absent or null: none)
};

struct IntegrationsRoot {
  std::string ns;    // the GrafanaAgent's namespace
  std::string name;  // the GrafanaAgent's name
  // The static config wrote integral numbers as integers (compat `fixed`); see MetricsRoot.
  bool integer_numbers = false;
  // `<ns>/<name>` of the LogsInstances whose clients are the GrafanaAgent's; see LogsRoot.
  std::set<std::string> agent_clients;
};

// An Integration that stays on the static integrations workloads.
struct KeptIntegration {
  std::string ns;
  std::string name;
  std::string integration;  // spec.name
  std::string field;        // spec.name, spec.config.<key>, ...
  std::string reason;       // `<field>: <what>`
};

struct IntegrationsConfig {
  // Empty when no Integration of the subset is translated, or on a class-B failure.
  std::vector<File> files;
  std::vector<TranslationProblem> problems;
  std::vector<KeptIntegration> kept;  // of this subset, in hierarchy order
};

// The configuration of the Integrations with `spec.type.allNodes == all_nodes`.
IntegrationsConfig translate_integrations(const boost::json::value& static_tree,
                                          const std::vector<IntegrationMember>& integrations,
                                          bool all_nodes, const IntegrationsRoot& root);

}  // namespace aop::alloy
