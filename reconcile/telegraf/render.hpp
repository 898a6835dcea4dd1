// The whole telegraf pipeline over a list of objects, for `agent-operator render`:
// Namespaces and Applications in, every desired object and every problem out, with no
// cluster. The controller runs the same steps per target namespace.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "reconcile/telegraf/options.hpp"
#include "reconcile/telegraf/sources.hpp"

namespace aop::telegraf {

struct RenderResult {
  // Target namespaces in name order; in each, ConfigMap, Secret (when configured),
  // Deployment. Built from the valid sources only: a target also held by an invalid
  // source is still printed (in a cluster it would be left as deployed).
  std::vector<boost::json::object> objects;
  // What would be Warning Events in a cluster: read problems in input order, then
  // conflicts by target namespace. Non-empty means `render` exits non-zero.
  std::vector<Problem> problems;
  // Objects that were skipped and why (other kinds, unwatched Application namespaces,
  // objects being deleted). Informational; they do not change the exit status.
  std::vector<std::string> notes;
};

RenderResult render(std::span<const boost::json::value> objects, const TelegrafOptions& options,
                    std::optional<std::string_view> token = std::nullopt);

}  // namespace aop::telegraf
