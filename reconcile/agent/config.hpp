// Serialization of the agent configuration files (`agent.yml`): the trees the assemble
// stage builds (fragments.hpp) become text like go-yaml v3 writes it, every number
// printed as Go float64 and one extra trailing newline.
//
// A render error (`key not provided: /secrets/ns/name/key`, malformed additional scrape
// configs, ...) fails the whole file, as upstream. Members that upstream would also fail
// the whole file on, but that are isolated here (a Probe without targets, a selector
// expression without values), are skipped and reported as problems instead.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/agent/config_text.hpp"
#include "reconcile/agent/options.hpp"

namespace aop::agent {

// Serializes a config tree: null trim, go-yaml v3 block style with 4-space indentation,
// numbers as Go float64 (or, with Compat::fixed, integral values as integers), and the
// trailing extra newline.
std::string emit_config(boost::json::value tree, const Options& options);

// The same for a tree whose members' scrape configs are splice items referring to
// `members` (ConfigTrees::members, emitted by emit_scrape_configs()): the file in pieces
// (config_text.hpp), the text emit_config() writes for the tree with the members'
// configs in their places.
ConfigText emit_config_text(boost::json::value tree, const Options& options,
                            std::vector<std::shared_ptr<const MemberText>> members);

// The column of a scrape config's `- ` in every file that has members' scrape configs
// (metrics: configs[i].scrape_configs[j], and logs: the same): emit_config() writes them
// there.
inline constexpr int kScrapeConfigColumn = 12;

// One member's scrape configs (or PodLogs jobs) as emit_config() writes them under an
// instance's `scrape_configs:`, to splice into the files instead of the configs. The
// configs hold at least one item and no null item (emit_config() leaves a null item
// out, so a list of them would be an empty list there, not no list).
std::shared_ptr<const MemberText> emit_scrape_configs(boost::json::array configs,
                                                      const Options& options);

// Deletes every null map entry and null list element, recursively (upstream omits them).
// Integer numbers become float64, the config's only number type.
void null_trim(boost::json::value& v);

}  // namespace aop::agent
