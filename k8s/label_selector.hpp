// Kubernetes label selectors: the API form (matchLabels + matchExpressions) and the
// string form used in `?labelSelector=` and by kubectl, with the exact validation and
// matching rules of apimachinery's LabelSelectorAsSelector / labels.Parse.
//
// Nil versus empty is the caller's decision and is easy to get wrong, so it is explicit
// here: a selector is either `nothing()` (what the Grafana Agent spec means by a nil
// label selector), or a list of requirements, where an empty list matches everything.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

#include "net/result.hpp"

namespace aop::k8s {

enum class SelectorOp {
  in,              // key In (v1, v2); also `key=v`, `key==v` in the string form
  not_in,          // key NotIn (...) : absent OR value not in set; also `key!=v`
  exists,          // key present
  does_not_exist,  // key absent (`!key`)
};

struct Requirement {
  std::string key;
  SelectorOp op = SelectorOp::exists;
  std::vector<std::string> values;  // as given (order kept for rendering)

  bool operator==(const Requirement&) const = default;
};

// Looks a label up by key; nullopt when absent.
class LabelView {
 public:
  virtual ~LabelView() = default;
  virtual std::optional<std::string_view> get(std::string_view key) const = 0;
};

// Adapters for the common label containers.
class MapLabels final : public LabelView {
 public:
  explicit MapLabels(const std::map<std::string, std::string, std::less<>>& m) : m_(m) {}
  std::optional<std::string_view> get(std::string_view key) const override;

 private:
  const std::map<std::string, std::string, std::less<>>& m_;
};

// A `metadata.labels` JSON object (or nullptr: no labels). Non-string values are absent.
class JsonLabels final : public LabelView {
 public:
  explicit JsonLabels(const boost::json::object* labels) : labels_(labels) {}
  std::optional<std::string_view> get(std::string_view key) const override;

 private:
  const boost::json::object* labels_;
};

class LabelSelector {
 public:
  // A selector that matches every object (`{}` in the API form, "" as a string).
  LabelSelector() = default;
  // A selector that matches no object (what a nil selector means where the spec says so).
  static LabelSelector nothing();

  bool matches(const LabelView& labels) const;
  bool matches_nothing() const { return nothing_; }
  bool matches_everything() const { return !nothing_ && requirements_.empty(); }

  // Requirements in the order they were given: matchLabels (keys sorted) first, then
  // matchExpressions in order. Empty for nothing().
  const std::vector<Requirement>& requirements() const { return requirements_; }

  // The string form accepted by the API server's `labelSelector` parameter.
  // nothing() has no string form; callers must not list with it (returns "").
  std::string to_string() const;

  bool operator==(const LabelSelector&) const = default;

 private:
  friend Result<LabelSelector> parse_label_selector(const boost::json::value&);
  friend Result<LabelSelector> parse_label_selector_string(std::string_view);
  friend LabelSelector selector_from_requirements(std::vector<Requirement>);
  bool nothing_ = false;
  std::vector<Requirement> requirements_;
};

// API form: `{matchLabels: {...}, matchExpressions: [{key, operator, values}]}`.
// Errors are apimachinery's messages, e.g. `"Foo" is not a valid label selector operator`,
// `values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty`.
// A JSON null is an error here: callers decide what nil means before calling.
Result<LabelSelector> parse_label_selector(const boost::json::value& v);

// String form: `a=b,c!=d,e in (f,g),h notin (i),j,!k`.
Result<LabelSelector> parse_label_selector_string(std::string_view s);

// Builds a selector from already-validated requirements.
LabelSelector selector_from_requirements(std::vector<Requirement> requirements);

// Validation helpers (apimachinery's rules), returning an error message or "".
std::string validate_label_key(std::string_view key);
std::string validate_label_value(std::string_view value);

}  // namespace aop::k8s
