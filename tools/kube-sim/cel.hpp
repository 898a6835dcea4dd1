// A subset of CEL (the Common Expression Language of x-kubernetes-validations) large
// enough for the cross-field rules CRDs write in practice: `self` and field selection,
// has(), literals (int, string, bool, null, lists), ! && || ?:, == != < <= > >= in,
// + - * / %, size(), and the string functions matches() (RE2, as the API server's),
// startsWith(), endsWith(), contains(); the list macros all() and exists() over lists and
// map keys. A rule outside this subset does not parse and is not evaluated (kube-sim
// accepts what it does not understand; tools/kube-sim/README.md lists what is missing).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace aop::sim::cel {

class Program;

// A parsed rule; nullptr with `error` set when the text is outside the subset.
std::shared_ptr<const Program> compile(std::string_view rule, std::string* error = nullptr);

// Evaluates a parsed rule with `self` bound. True/false, or an evaluation error (no such
// key, a type mismatch, division by zero), which the API server reports as invalid.
struct Outcome {
  bool value = false;
  std::optional<std::string> error;
};
Outcome evaluate(const Program& program, const boost::json::value& self);

}  // namespace aop::sim::cel
