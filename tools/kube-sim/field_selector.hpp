// Field selectors (`?fieldSelector=metadata.name=foo,type!=Opaque`) with apimachinery's
// syntax: terms separated by commas, operators `=`, `==` and `!=`, backslash escapes.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "net/result.hpp"

namespace aop::sim {

struct FieldRequirement {
  std::string field;
  bool equals = true;  // false for !=
  std::string value;
};

class FieldSelector {
 public:
  bool empty() const { return requirements_.empty(); }
  const std::vector<FieldRequirement>& requirements() const { return requirements_; }
  // True when every requirement only looks at metadata.name / metadata.namespace.
  bool metadata_only() const;
  // The exact name required by `metadata.name=x`, if any (lets a watch skip other keys).
  std::string_view required_name() const;

  // `lookup(field)` returns the field's value ("" when absent).
  bool matches(const std::function<std::string(std::string_view)>& lookup) const;

 private:
  friend Result<FieldSelector> parse_field_selector(std::string_view);
  std::vector<FieldRequirement> requirements_;
};

Result<FieldSelector> parse_field_selector(std::string_view s);

}  // namespace aop::sim
