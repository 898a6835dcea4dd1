#include "reconcile/agent/names.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "reconcile/agent/kinds.hpp"

namespace aop::agent {
namespace {

namespace json = boost::json;

constexpr std::size_t kLabelMax = 63;
// A workload controller appends "-<hash>" to derived names; the hash is at most 10
// characters (a 32-bit FNV hash in the safe-encoding alphabet).
constexpr std::size_t kHashSuffix = 11;
constexpr std::size_t kSubdomainMax = 253;

bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool alnum(char c) {
  return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool dns1123_label(std::string_view s) {
  return !s.empty() && lower_alnum(s.front()) && lower_alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [](char c) { return lower_alnum(c) || c == '-'; });
}
// [a-z]([-a-z0-9]*[a-z0-9])?
bool dns1035_label(std::string_view s) {
  return dns1123_label(s) && s.front() >= 'a' && s.front() <= 'z';
}
// DNS-1123 labels joined by dots.
bool dns1123_subdomain(std::string_view s) {
  std::size_t start = 0;
  for (;;) {
    const auto dot = s.find('.', start);
    if (!dns1123_label(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}
// Empty, or (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])
bool label_value(std::string_view s) {
  if (s.empty()) return true;
  return alnum(s.front()) && alnum(s.back()) && std::all_of(s.begin(), s.end(), [](char c) {
           return alnum(c) || c == '-' || c == '_' || c == '.';
         });
}

struct Rule {
  bool (*syntax)(std::string_view);
  std::size_t max_length;
  const char* what;  // what the value must be, for messages
};

const Rule kServiceName{dns1035_label, kLabelMax,
                        "a Service name must be a DNS-1035 label (lower-case letters, digits and "
                        "'-', starting with a letter) of at most 63 characters"};
const Rule kStatefulSetName{
    dns1123_label, kLabelMax - kHashSuffix,
    "a StatefulSet name must be a DNS-1123 label of at most 52 characters: its pods carry the "
    "label controller-revision-hash=<name>-<10-character hash>, which must fit in 63"};
const Rule kWorkloadName{dns1123_subdomain, kSubdomainMax - kHashSuffix,
                         "a DaemonSet or Deployment name must be a DNS-1123 subdomain of at most "
                         "242 characters: its revisions are named <name>-<hash>, at most 253"};
const Rule kObjectName{dns1123_subdomain, kSubdomainMax,
                       "a name must be a DNS-1123 subdomain of at most 253 characters"};
const Rule kLabelValue{label_value, kLabelMax,
                       "a label value must be at most 63 characters of letters, digits, '-', '_' "
                       "and '.', beginning and ending with a letter or digit"};
const Rule kVolumeName{dns1123_label, kLabelMax,
                       "a volume name must be a DNS-1123 label of at most 63 characters"};

const Rule& name_rule(Kind kind) {
  switch (kind) {
    case Kind::service:
      return kServiceName;
    case Kind::stateful_set:
      return kStatefulSetName;
    case Kind::daemon_set:
    case Kind::deployment:
      return kWorkloadName;
    default:
      return kObjectName;
  }
}

const json::object* object_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}
const json::array* array_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}

class Checker {
 public:
  Checker(const Step& step, std::vector<NameProblem>& out) : step_(step), out_(out) {}

  void check(const std::string& field, std::string_view value, const Rule& rule) {
    if (value.size() <= rule.max_length && rule.syntax(value)) return;
    out_.push_back(NameProblem{step_.kind, step_.key.name, field, std::string(value), rule.what,
                               rule.max_length});
  }

  void labels(const json::object* labels, const std::string& at) {
    if (labels == nullptr) return;
    for (const auto& [k, v] : *labels) {
      if (v.is_string()) check(at + "[" + std::string(k) + "]", v.get_string(), kLabelValue);
    }
  }

  void pod_template(const json::object& spec) {
    if (const auto* sel = object_at(spec, "selector")) {
      labels(object_at(*sel, "matchLabels"), "spec.selector.matchLabels");
    }
    if (const auto* tmpl = object_at(spec, "template")) {
      if (const auto* md = object_at(*tmpl, "metadata")) {
        labels(object_at(*md, "labels"), "spec.template.metadata.labels");
      }
      if (const auto* pod = object_at(*tmpl, "spec")) {
        names(array_at(*pod, "volumes"), "spec.template.spec.volumes");
      }
    }
    if (const auto* claims = array_at(spec, "volumeClaimTemplates")) {
      for (std::size_t i = 0; i < claims->size(); ++i) {
        const auto* c = (*claims)[i].if_object();
        const auto* md = c != nullptr ? object_at(*c, "metadata") : nullptr;
        const auto* n = md != nullptr ? md->if_contains("name") : nullptr;
        if (n != nullptr && n->is_string()) {
          check("spec.volumeClaimTemplates[" + std::to_string(i) + "].metadata.name",
                n->get_string(), kVolumeName);
        }
      }
    }
  }

 private:
  void names(const json::array* items, const std::string& at) {
    if (items == nullptr) return;
    for (std::size_t i = 0; i < items->size(); ++i) {
      const auto* o = (*items)[i].if_object();
      const auto* n = o != nullptr ? o->if_contains("name") : nullptr;
      if (n != nullptr && n->is_string()) {
        check(at + "[" + std::to_string(i) + "].name", n->get_string(), kVolumeName);
      }
    }
  }

  const Step& step_;
  std::vector<NameProblem>& out_;
};

}  // namespace

std::vector<NameProblem> check_generated_names(const std::vector<Step>& steps) {
  std::vector<NameProblem> out;
  for (const auto& step : steps) {
    if (step.action != Step::Action::apply) continue;
    Checker c(step, out);
    c.check("metadata.name", step.key.name, name_rule(step.kind));
    if (const auto* md = object_at(step.object, "metadata")) {
      c.labels(object_at(*md, "labels"), "metadata.labels");
    }
    if (step.kind == Kind::stateful_set || step.kind == Kind::daemon_set ||
        step.kind == Kind::deployment) {
      if (const auto* spec = object_at(step.object, "spec")) c.pod_template(*spec);
    }
  }
  return out;
}

std::optional<Error> generated_names_error(const GrafanaAgent& agent,
                                           const std::vector<NameProblem>& problems) {
  if (problems.empty()) return std::nullopt;
  const std::string& name = agent.metadata.name;
  std::string message = "GrafanaAgent " + agent.metadata.ns + "/" + name +
                        ": the objects it generates would have names the API server refuses, "
                        "so nothing was created or changed: ";
  // The longest agent name that fits every limit a too-long value derived from it hit.
  std::optional<std::size_t> longest;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const auto& p = problems[i];
    if (i > 0) message += "; ";
    message += std::string(kind_name(p.kind)) + " " + p.object;
    if (p.field != "metadata.name") message += " " + p.field + " " + p.value;
    message += " (" + std::to_string(p.value.size()) + " characters): " + p.rule;
    if (p.value.size() > p.max_length && p.value.find(name) != std::string::npos) {
      const std::size_t extra = p.value.size() - name.size();
      const std::size_t fits = p.max_length > extra ? p.max_length - extra : 0;
      longest = longest ? std::min(*longest, fits) : fits;
    }
  }
  if (longest) {
    message += ". Shorten metadata.name to at most " + std::to_string(*longest) +
               " characters (it has " + std::to_string(name.size()) +
               "; a GrafanaAgent cannot be renamed: create it anew under the shorter name)";
  }
  return make_error(std::move(message));
}

}  // namespace aop::agent
