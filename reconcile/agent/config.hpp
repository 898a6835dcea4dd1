// Serialization of the agent configuration files (`agent.yml`): the trees the assemble
// stage builds (fragments.hpp) become text like go-yaml v3 writes it, every number
// printed as Go float64 and one extra trailing newline.
//
// A render error (`key not provided: /secrets/ns/name/key`, malformed additional scrape
// configs, ...) fails the whole file, as upstream. Members that upstream would also fail
// the whole file on, but that are isolated here (a Probe without targets, a selector
// expression without values), are skipped and reported as problems instead.
#pragma once

#include <string>

#include <boost/json/value.hpp>

#include "reconcile/agent/options.hpp"

namespace aop::agent {

// Serializes a config tree: null trim, go-yaml v3 block style with 4-space indentation,
// numbers as Go float64 (or, with Compat::fixed, integral values as integers), and the
// trailing extra newline.
std::string emit_config(boost::json::value tree, const Options& options);

// Deletes every null map entry and null list element, recursively (upstream omits them).
// Integer numbers become float64, the config's only number type.
void null_trim(boost::json::value& v);

}  // namespace aop::agent
