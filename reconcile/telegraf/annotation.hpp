// The telegraf annotation (README: telegraf controller): a YAML document listing Prometheus
// endpoints, in one of three shapes:
//
//   - name: http://host:port/metrics          # 1. a list of single-key maps
//   name: http://host:port/metrics            # 2. one map
//   name: {url: http://…, interval: 30s,      # 3. either, with option maps
//          metric_version: 1, tags: {k: v}}   #    instead of URL strings
//
// Parsed with yaml-cpp directly rather than through a YAML→JSON conversion: a JSON
// object cannot hold the duplicate keys that rule "names are unique" must catch, and
// yaml-cpp keeps line numbers for the messages. Plain scalar values resolve as in
// YAML 1.1 (what Kubernetes tooling does), so `tier: on` is a boolean, not the tag
// value "on", and the user is told to quote it rather than getting a guess. Map keys
// (endpoint names, tag keys) are taken as written.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aop::telegraf {

inline constexpr std::size_t kMaxEndpoints = 256;
inline constexpr std::size_t kMaxAnnotationBytes = 64 * 1024;
// The tag the generated configuration sets on every input; an endpoint may not set it.
inline constexpr std::string_view kAppTag = "prometheus_app";

struct Endpoint {
  std::string name;
  std::string url;
  std::optional<std::string> interval;  // a Go duration, only when the endpoint sets one
  int metric_version = 2;
  // Sorted by key, keys unique: tag order carries no meaning in telegraf, so reordering
  // them in the annotation must not roll the Deployment.
  std::vector<std::pair<std::string, std::string>> tags;

  bool operator==(const Endpoint&) const = default;
};

struct AnnotationParse {
  std::vector<Endpoint> endpoints;  // annotation order; empty when there are errors
  // Each names the endpoint (or list item) and line, and the rule that failed, e.g.
  // `endpoint "redis" (line 3): url "ftp://x": scheme "ftp" is not allowed; use http or https`.
  std::vector<std::string> errors;

  bool ok() const { return errors.empty(); }
  // The errors joined with "; ", at most `limit` of them, then "(and N more)".
  std::string summary(std::size_t limit = 5) const;
};

// Parses and validates one annotation value. Every rule is checked and every failure
// reported; an annotation with any error yields no endpoints (all or nothing, so a
// typo never silently drops an endpoint).
AnnotationParse parse_annotation(std::string_view value);

}  // namespace aop::telegraf
