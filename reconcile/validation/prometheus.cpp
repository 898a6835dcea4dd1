#include "reconcile/validation/prometheus.hpp"

#include <algorithm>
#include <array>

#include "reconcile/validation/regex.hpp"
#include "reconcile/validation/text.hpp"

namespace aop::validation {
namespace {

bool name_char(char c, bool first, bool colon) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':')) {
    return true;
  }
  return !first && c >= '0' && c <= '9';
}

// Prometheus' pattern for a replace target that references capture groups:
// ^(?:(?:[a-zA-Z_]|\$(?:\{\w+\}|\w+))+\w*)+$ — letters, `_`, `$name`, `${name}`, then word
// characters.
bool is_relabel_target(std::string_view s) {
  if (s.empty()) return false;
  const auto word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  std::size_t i = 0;
  bool atom = false;  // the last piece was a letter/`_` or a reference
  while (i < s.size()) {
    const char c = s[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
      atom = true;
      ++i;
    } else if (c == '$') {
      if (i + 1 < s.size() && s[i + 1] == '{') {
        std::size_t k = i + 2;
        while (k < s.size() && word(s[k])) ++k;
        if (k == i + 2 || k >= s.size() || s[k] != '}') return false;
        i = k + 1;
      } else {
        std::size_t k = i + 1;
        while (k < s.size() && word(s[k])) ++k;
        if (k == i + 1) return false;
        i = k;
      }
      atom = true;
    } else if (c >= '0' && c <= '9') {
      if (!atom) return false;  // digits only after a letter, `_` or a reference
      ++i;
    } else {
      return false;
    }
  }
  return atom;
}

constexpr std::array<std::string_view, 11> kActions = {
    "replace",   "keep",      "drop",      "hashmod",   "labelmap", "labeldrop",
    "labelkeep", "lowercase", "uppercase", "keepequal", "dropequal"};

}  // namespace

bool is_label_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!name_char(name[i], i == 0, false)) return false;
  }
  return true;
}

Complaint check_label_name(std::string_view name) {
  if (name.empty()) return "the label name is empty";
  if (!is_label_name(name)) {
    return describe(name) +
           " is not a valid Prometheus label name: use letters, digits and _, not starting "
           "with a digit (^[a-zA-Z_][a-zA-Z0-9_]*$)";
  }
  return std::nullopt;
}

Complaint check_label_value(std::string_view value) {
  if (value.size() > kMaxLabelValueBytes) {
    return "the label value is " + std::to_string(value.size()) + " bytes long; at most " +
           std::to_string(kMaxLabelValueBytes) + " are accepted";
  }
  if (!is_valid_utf8(value)) return "the label value is not valid UTF-8";
  return std::nullopt;
}

Complaint check_metric_name(std::string_view name) {
  bool ok = !name.empty();
  for (std::size_t i = 0; ok && i < name.size(); ++i) ok = name_char(name[i], i == 0, true);
  if (!ok) {
    return describe(name) +
           " is not a valid Prometheus metric name: use letters, digits, _ and :, not "
           "starting with a digit";
  }
  return std::nullopt;
}

Complaint check_relabel_action(std::string_view action) {
  if (action.empty()) return std::nullopt;
  if (is_one_of(ascii_lower(action), kActions)) return std::nullopt;
  return "unknown relabel action " + describe(action) + "; use one of " + list_of(kActions) +
         " (CamelCase such as LabelMap is accepted too)";
}

void check_relabel_rule(Checker& c, const RelabelRule& r) {
  if (c.check("action", check_relabel_action(r.action))) return;
  const std::string action = r.action.empty() ? std::string("replace") : ascii_lower(r.action);
  for (std::size_t i = 0; i < r.source_labels.size(); ++i) {
    const auto s = c.field("sourceLabels");
    const auto is = c.index(i);
    c.check(check_label_name(r.source_labels[i]));
  }
  if (!r.regex.empty()) c.check("regex", check_regex(r.regex, RegexUse::prometheus_anchored));

  const bool needs_target =
      is_one_of(action, {"replace", "hashmod", "lowercase", "uppercase", "keepequal", "dropequal"});
  if (needs_target && r.target_label.empty()) {
    c.check("targetLabel", "the " + action + " action needs a targetLabel");
  } else if (action == "replace" && !r.target_label.empty()) {
    const bool refs = r.target_label.find('$') != std::string::npos;
    if (refs ? !is_relabel_target(r.target_label) : !is_label_name(r.target_label)) {
      c.check("targetLabel",
              describe(r.target_label) +
                  " is not a valid targetLabel for replace: a label name, optionally with "
                  "capture-group references such as $1 or ${1}");
    }
  } else if (needs_target) {
    c.check("targetLabel",
            is_label_name(r.target_label)
                ? Complaint()
                : Complaint(describe(r.target_label) + " is not a valid targetLabel for " + action +
                            ": it must be a label name"));
  }
  if (action == "hashmod" && r.modulus == 0) {
    c.check("modulus", "the hashmod action needs a modulus greater than 0");
  }
  const bool default_replacement = r.replacement.empty() || r.replacement == "$1";
  if (is_one_of(action, {"lowercase", "uppercase", "keepequal", "dropequal"}) &&
      !default_replacement) {
    c.check("replacement", "the " + action + " action takes no replacement; remove it");
  }
  if (action == "keepequal" || action == "dropequal") {
    for (const auto& [field, set] : {std::pair<const char*, bool>{"regex", !r.regex.empty()},
                                     {"modulus", r.modulus != 0},
                                     {"separator", !r.separator.empty() && r.separator != ";"}}) {
      if (set) {
        c.check(field, "the " + action +
                           " action takes only sourceLabels and targetLabel; remove " + field);
      }
    }
  }
  if (action == "labeldrop" || action == "labelkeep") {
    for (const auto& [field, set] :
         {std::pair<const char*, bool>{"sourceLabels", !r.source_labels.empty()},
          {"targetLabel", !r.target_label.empty()},
          {"modulus", r.modulus != 0},
          {"separator", !r.separator.empty() && r.separator != ";"},
          {"replacement", !default_replacement}}) {
      if (set) {
        c.check(field, "the " + action + " action takes only regex; remove " + field);
      }
    }
  }
  if (action == "labelmap" && !r.replacement.empty() && !is_relabel_target(r.replacement)) {
    c.check("replacement", describe(r.replacement) +
                               " is not a valid labelmap replacement: a label name, optionally "
                               "with capture-group references such as $1");
  }
}

Complaint check_remote_write_header(std::string_view name, std::string_view value) {
  if (auto c = check_header_name(name)) return c;
  const std::string l = ascii_lower(name);
  if (l == "authorization") {
    return "the Authorization header cannot be set in headers; use basicAuth, bearerToken, "
           "oauth2 or sigv4";
  }
  if (is_one_of(l, {"host", "content-encoding", "content-length", "content-type", "user-agent",
                    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                    "www-authenticate", "accept-encoding", "x-prometheus-remote-write-version",
                    "x-prometheus-remote-read-version", "x-amz-date", "x-amz-security-token",
                    "x-amz-content-sha256"})) {
    return "header " + describe(name) + " is reserved: Prometheus sets it itself";
  }
  if (auto c = check_header_value(value)) return c;
  return std::nullopt;
}

Complaint check_scheme(std::string_view scheme) {
  if (scheme.empty() || scheme == "http" || scheme == "https") return std::nullopt;
  return "scheme " + describe(scheme) + " is not supported; use http or https";
}

Complaint check_metrics_path(std::string_view path) {
  if (path.empty()) return std::nullopt;
  if (auto c = check_single_line(path)) return "the path " + *c;
  if (path.front() != '/') return "the path " + describe(path) + " must start with /";
  return std::nullopt;
}

}  // namespace aop::validation
