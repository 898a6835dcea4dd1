// Rules of the Prometheus code inside the agent (static mode, Prometheus 2.4x) for what
// the operator writes into `metrics:` sections: label names, relabel rules, remote_write
// headers, schemes. Each is the check Prometheus runs when it loads the configuration;
// a value that fails it makes the agent refuse the whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reconcile/validation/report.hpp"

namespace aop::validation {

// `^[a-zA-Z_][a-zA-Z0-9_]*$` (model.LabelName.IsValid before UTF-8 names).
bool is_label_name(std::string_view name);
Complaint check_label_name(std::string_view name);
// Label values: valid UTF-8, at most kMaxLabelValueBytes (Prometheus sets no bound, but
// every series carries the value: remote-write receivers refuse far shorter ones, Mimir
// 2,048 bytes by default, and a multi-megabyte value costs each reconcile its copies).
inline constexpr std::size_t kMaxLabelValueBytes = 64 * 1024;
Complaint check_label_value(std::string_view value);
// `^[a-zA-Z_:][a-zA-Z0-9_:]*$`.
Complaint check_metric_name(std::string_view name);

// The eleven relabel actions; Prometheus accepts any letter case (it lower-cases the
// value), the CRDs allow the lower-case and CamelCase spellings (`labelmap`/`LabelMap`).
// Empty means the default, replace.
Complaint check_relabel_action(std::string_view action);

// One relabel rule as the operator writes it: empty strings and a zero modulus are left
// out of the configuration, so Prometheus applies its defaults (action replace,
// separator ";", regex "(.*)", replacement "$1").
struct RelabelRule {
  std::vector<std::string> source_labels;
  std::string separator;
  std::string target_label;
  std::string regex;
  std::uint64_t modulus = 0;
  std::string replacement;
  std::string action;
};

// Prometheus' relabel config validation: the action; source label names; the regex
// (anchored, RE2); replace/hashmod/lowercase/uppercase/keepequal/dropequal need a
// target_label (a label name, or for replace a name with $1/${1} references);
// hashmod needs a modulus > 0; lowercase/uppercase/keepequal/dropequal take no
// replacement; keepequal/dropequal take only source_labels and target_label;
// labeldrop/labelkeep take only regex; labelmap's replacement must be a label name
// pattern. Violations are reported against the rule's field names (`targetLabel`...).
void check_relabel_rule(Checker& c, const RelabelRule& rule);

// remote_write `headers`: names are HTTP tokens; Authorization and the headers
// Prometheus sets itself (Host, Content-Type, User-Agent, X-Prometheus-Remote-Write-
// Version, ...) are refused, as Prometheus refuses them.
Complaint check_remote_write_header(std::string_view name, std::string_view value);

// Scrape and prober schemes: http or https (empty: the default, http).
Complaint check_scheme(std::string_view scheme);

// A scrape `metrics_path`: empty, or starting with `/`; single line.
Complaint check_metrics_path(std::string_view path);

}  // namespace aop::validation
