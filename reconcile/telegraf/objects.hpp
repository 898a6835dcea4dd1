// The objects the controller wants in one target namespace: ConfigMap
// `rubin-telegraf`, Secret `rubin-telegraf-token`, Deployment `rubin-telegraf`, as
// boost::json objects with apiVersion, kind and metadata, ready for the apply engine.
//
// The pod template carries a SHA-256 of the generated configuration, so the Deployment
// rolls when the configuration changes; a new source that adds nothing rewrites
// metadata only. (The live controller adds a hash of the token, so a rotated token
// rolls the pods too: see controller.hpp.)
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "reconcile/runtime/apply_plan.hpp"
#include "reconcile/telegraf/options.hpp"
#include "reconcile/telegraf/sources.hpp"

namespace aop::telegraf {

struct DesiredObjects {
  std::string config;       // telegraf.conf
  std::string config_hash;  // lower-case hex SHA-256 of config
  boost::json::object config_map;
  // Present when the options name a token Secret.
  std::optional<boost::json::object> secret;
  boost::json::object deployment;

  // ConfigMap, Secret (when present), Deployment: the order to create them in.
  std::vector<boost::json::object> all() const;
};

// Builds the objects of one plan; nullopt when the plan has no endpoints (nothing to
// run: the controller deletes what it created there, unless the plan is held).
//
// `token` is the InfluxDB token read by the controller from the Secret the options
// name. It goes only into the Secret's data (base64), never into the ConfigMap, a
// message or a log. When the options name a Secret but no token is supplied (render
// without a cluster), the Secret is built without data.
std::optional<DesiredObjects> build_objects(const TargetPlan& plan, const TelegrafOptions& options,
                                            std::optional<std::string_view> token);

// The labels on everything the controller creates: managed-by, name=telegraf,
// instance=rubin-telegraf.
boost::json::object managed_labels(const TelegrafOptions& options);

// `Namespace/<name>,Application/<ns>/<name>`: the value of the sources annotation.
std::string sources_annotation(std::span<const SourceRef> sources);

// Lower-case hex SHA-256 (the runtime's).
using runtime::sha256_hex;

}  // namespace aop::telegraf
