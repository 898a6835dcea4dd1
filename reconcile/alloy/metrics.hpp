// The metrics configuration of an Alloy root, translated from the static metrics config
// tree (the JSON tree the static backend renders into `agent.yml`: null-trimmed, numbers
// as doubles, every discovery, selection, ordering, asset and compat rule already applied).
//
// Every static scrape job becomes an explicit pipeline
//
//   discovery.kubernetes (shared) → discovery.relabel → prometheus.scrape
//     → [prometheus.relabel + report-series prometheus.relabel] → prometheus.remote_write
//
// rather than a prometheus.operator.* component: the static tree already implements the
// Prometheus Operator rules (namespace label selectors, enforced labels, limits, compat
// switches) that those components cannot express, and an explicit pipeline is a pure
// function of the hierarchy, equivalent to the static job rule by rule.
//
// Files, in packing order: main.alloy (logging), one file per MetricsInstance with its
// prometheus.remote_write, discovery.alloy (every shared discovery.kubernetes, sorted by
// label), then one file per scrape job.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "reconcile/alloy/problems.hpp"
#include "reconcile/alloy/syntax.hpp"

namespace aop::alloy {

struct MetricsRoot {
  std::string ns;    // the GrafanaAgent's namespace
  std::string name;  // the GrafanaAgent's name
  // Name of the replica external label (`__replica__` by default, empty when disabled):
  // its static value `replica-$(STATEFULSET_ORDINAL_NUMBER)` becomes
  // `"replica-" + sys.env("REPLICA_GROUP")`, one value per replica group.
  std::string replica_label = "__replica__";
  // The static config wrote integral numbers as integers (compat `fixed`) rather than as
  // Go float64 text (`1e+06`). Matters where a number sits in a string field (a label
  // value or parameter in an additional scrape config): the static agent read that text.
  bool integer_numbers = false;
};

struct AlloyConfig {
  std::vector<File> files;  // empty when translation_failed(problems)
  std::vector<TranslationProblem> problems;
};

AlloyConfig translate_metrics(const boost::json::value& static_tree, const MetricsRoot& root);

}  // namespace aop::alloy
