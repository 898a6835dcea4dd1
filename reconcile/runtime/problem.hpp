// Problems: what a controller's pure core reports about one object a root reads (a
// member it left out, a field that looks wrong) instead of logging it. The rest of the
// root still goes ahead; the controller turns problems into the root's status and into
// Warning Events on the objects they name.
#pragma once

#include <string>
#include <string_view>

#include "k8s/resource.hpp"

namespace aop::runtime {

enum class Severity {
  warning,  // still used as it is, but probably not what its author meant
  error,    // left out (or the root keeps its last good deployment)
};

// "Warning" or "Error".
std::string_view severity_name(Severity severity);

struct Problem {
  k8s::GroupVersionKind kind;  // of the object the problem is about
  k8s::ObjectKey object;
  std::string field;  // a JSON path inside the object (may be empty)
  std::string message;
  Severity severity = Severity::error;

  // "ServiceMonitor apps/web: spec.endpoints[0].tlsConfig.caFile: <message>"
  std::string str() const;
  bool operator==(const Problem&) const = default;
};

}  // namespace aop::runtime
