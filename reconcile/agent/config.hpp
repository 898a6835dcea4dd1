// The agent configuration files (`agent.yml`, spec 4): metrics (4.1–4.8), logs
// (4.9–4.11) and integrations (4.12).
//
// Each renderer builds the configuration as a JSON tree (strings, float64 numbers,
// bools, maps, lists), null-trims it, and emits it like go-yaml v3 with every number
// printed as Go float64 and one extra trailing newline. Input is pure data: the resolved
// hierarchy in the order to render, the asset store, and the operator options.
//
// A render error (`key not provided: /secrets/ns/name/key`, malformed additional scrape
// configs, ...) fails the whole file, as upstream. Members that upstream would also fail
// the whole file on, but that spec 6.12 isolates (a Probe without targets, a selector
// expression without values), are skipped and reported in `problems` instead.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "net/result.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/options.hpp"

namespace aop::agent {

struct RenderedConfig {
  std::string text;               // the agent.yml bytes
  std::vector<Problem> problems;  // members skipped while rendering
};

// Trees, for tests and for callers that post-process.
Result<boost::json::value> metrics_config_tree(const Hierarchy& h, const AssetStore& assets,
                                               const Options& options,
                                               std::vector<Problem>* problems);
Result<boost::json::value> logs_config_tree(const Hierarchy& h, const AssetStore& assets,
                                            const Options& options, std::vector<Problem>* problems);
// `all_nodes` selects the Integration subset (true: DaemonSet file, false: Deployment).
Result<boost::json::value> integrations_config_tree(const Hierarchy& h, const AssetStore& assets,
                                                    const Options& options, bool all_nodes,
                                                    std::vector<Problem>* problems);

Result<RenderedConfig> render_metrics_config(const Hierarchy& h, const AssetStore& assets,
                                             const Options& options);
Result<RenderedConfig> render_logs_config(const Hierarchy& h, const AssetStore& assets,
                                          const Options& options);
Result<RenderedConfig> render_integrations_config(const Hierarchy& h, const AssetStore& assets,
                                                  const Options& options, bool all_nodes);

// Serializes a config tree: null trim, go-yaml v3 block style with 4-space indentation,
// numbers as Go float64 (or, with Compat::fixed, integral values as integers), and the
// trailing extra newline.
std::string emit_config(boost::json::value tree, const Options& options);

// Deletes every null map entry and null list element, recursively (spec 0). Integer
// numbers become float64, the config's only number type.
void null_trim(boost::json::value& v);

}  // namespace aop::agent
