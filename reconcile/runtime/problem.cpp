#include "reconcile/runtime/problem.hpp"

namespace aop::runtime {

std::string_view severity_name(Severity severity) {
  return severity == Severity::warning ? "Warning" : "Error";
}

std::string Problem::str() const {
  std::string out = kind.kind + " " + object.str() + ": ";
  if (!field.empty()) out += field + ": ";
  return out + message;
}

}  // namespace aop::runtime
