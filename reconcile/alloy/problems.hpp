// What a translation to Alloy could not carry over. Nothing of a static configuration is
// dropped without one of these records:
//
//   A     one member's pipeline would be rejected by Alloy (the static agent rejected it
//         too): the member is skipped, everything else is rendered;
//   B     the configuration does something Alloy cannot express, or a root- or
//         instance-level setting Alloy rejects: the Alloy render fails as a whole and
//         nothing of it is applied;
//   C     a field without effect in Alloy or a documented behaviour difference: the
//         render proceeds with a warning;
//   kept  an Integration without Alloy translation keeps running on static workloads.
//
// Messages read `<field path>: <what> (<consequence>)` and never contain a value that
// could be secret.
#pragma once

#include <string>
#include <vector>

namespace aop::alloy {

enum class ProblemClass { a, b, c, kept };

struct TranslationProblem {
  ProblemClass cls = ProblemClass::c;
  std::string kind;  // the object the problem belongs to: ServiceMonitor, MetricsInstance, ...
  std::string ns;
  std::string name;
  std::string field;    // path inside that object, e.g. spec.endpoints[0]
  std::string message;  // `<field path>: <what> (<consequence>)`

  bool operator==(const TranslationProblem&) const = default;
};

// True when a class-B problem makes the whole Alloy render fail.
bool translation_failed(const std::vector<TranslationProblem>& problems);

}  // namespace aop::alloy
