#include "reconcile/telegraf/sources.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <boost/json/object.hpp>
#include <boost/json/string.hpp>

#include "reconcile/telegraf/validation.hpp"

namespace aop::telegraf {
namespace json = boost::json;
namespace {

const json::object* child_object(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr ? v->if_object() : nullptr;
}

// The string at `key`, or nullopt when absent, null or not a string.
std::optional<std::string_view> child_string(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return std::string_view(v->get_string());
}

std::string_view kind_label(SourceKind k) {
  return k == SourceKind::namespace_ ? "Namespace" : "Application";
}

// What differs between two definitions of one endpoint, for the conflict message.
std::string difference(const Endpoint& a, const Endpoint& b) {
  if (a.url != b.url) return "url " + describe(a.url) + " here, " + describe(b.url) + " in ";
  std::vector<std::string_view> fields;
  if (a.interval != b.interval) fields.push_back("interval");
  if (a.metric_version != b.metric_version) fields.push_back("metric_version");
  if (a.tags != b.tags) fields.push_back("tags");
  std::string out = "same url, different ";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i != 0) out += i + 1 == fields.size() ? " and " : ", ";
    out += fields[i];
  }
  return out + " than ";
}

}  // namespace

std::string_view reason_name(ProblemReason reason) {
  switch (reason) {
    case ProblemReason::invalid_annotation:
      return "InvalidAnnotation";
    case ProblemReason::missing_destination:
      return "MissingDestination";
    case ProblemReason::endpoint_conflict:
      return "EndpointConflict";
    case ProblemReason::invalid_object:
      return "InvalidObject";
    case ProblemReason::not_owned:
      return "NotOwned";
  }
  return "Unknown";
}

std::string SourceRef::str() const {
  std::string out(kind_label(kind));
  out += '/';
  if (kind == SourceKind::application) {
    out += ns;
    out += '/';
  }
  out += name;
  return out;
}

bool SourceRef::operator<(const SourceRef& o) const {
  return std::tie(kind, ns, name) < std::tie(o.kind, o.ns, o.name);
}

SourceRead read_source(const json::value& value, const TelegrafOptions& options) {
  SourceRead out;
  const json::object* obj = value.if_object();
  if (obj == nullptr) {
    out.ignored = "not a JSON object";
    return out;
  }
  const auto api_version = child_string(*obj, "apiVersion").value_or("");
  const auto kind = child_string(*obj, "kind").value_or("");
  SourceRef ref;
  if (api_version == "v1" && kind == "Namespace") {
    ref.kind = SourceKind::namespace_;
  } else if (api_version.rfind("argoproj.io/", 0) == 0 && kind == "Application") {
    ref.kind = SourceKind::application;
  } else {
    out.ignored = std::string(kind.empty() ? "an object without kind" : kind) + " (apiVersion " +
                  std::string(api_version) +
                  "): only v1 Namespaces and argoproj.io Applications "
                  "are read";
    return out;
  }
  const json::object* meta = child_object(*obj, "metadata");
  const auto name = meta != nullptr ? child_string(*meta, "name") : std::nullopt;
  const auto ns = meta != nullptr ? child_string(*meta, "namespace") : std::nullopt;
  ref.name = std::string(name.value_or(""));
  if (ref.kind == SourceKind::application) ref.ns = std::string(ns.value_or(""));
  if (meta != nullptr) ref.uid = std::string(child_string(*meta, "uid").value_or(""));

  const json::object* annotations = meta != nullptr ? child_object(*meta, "annotations") : nullptr;
  const json::value* annotation =
      annotations != nullptr ? annotations->if_contains(options.annotation_key) : nullptr;
  if (annotation == nullptr) return out;  // not a source, nothing worth saying
  if (ref.name.empty() || (ref.kind == SourceKind::application && ref.ns.empty())) {
    out.problems.push_back(
        {ref, ProblemReason::invalid_object,
         ref.str() + ": metadata.name" +
             (ref.kind == SourceKind::application ? " and metadata.namespace are" : " is") +
             " required"});
    return out;
  }
  if (ref.kind == SourceKind::namespace_ && !is_dns_label(ref.name)) {
    out.problems.push_back(
        {ref, ProblemReason::invalid_object,
         ref.str() + ": " + describe(ref.name) + " is not a valid namespace name"});
    return out;
  }
  if (ref.kind == SourceKind::application && !options.watches_application_namespace(ref.ns)) {
    out.ignored = ref.str() + " is in namespace " + ref.ns +
                  ", which is not among the watched Application namespaces";
    return out;
  }
  if (meta->if_contains("deletionTimestamp") != nullptr &&
      !meta->at("deletionTimestamp").is_null()) {
    out.ignored = ref.str() + " is being deleted";
    return out;
  }

  Source source;
  source.ref = ref;
  source.application_name = ref.name;
  if (ref.kind == SourceKind::namespace_) {
    source.target_namespace = ref.name;
  } else {
    const json::object* spec = child_object(*obj, "spec");
    const json::object* dest = spec != nullptr ? child_object(*spec, "destination") : nullptr;
    const auto target = dest != nullptr ? child_string(*dest, "namespace") : std::nullopt;
    if (!target || target->empty()) {
      out.problems.push_back(
          {ref, ProblemReason::missing_destination,
           ref.str() + ": spec.destination.namespace is empty, so there is no namespace to "
                       "run telegraf in; set it, or annotate the Namespace instead"});
    } else if (!is_dns_label(*target)) {
      out.problems.push_back({ref, ProblemReason::missing_destination,
                              ref.str() + ": spec.destination.namespace " + describe(*target) +
                                  " is not a valid namespace name"});
    } else {
      source.target_namespace = std::string(*target);
    }
  }

  if (!annotation->is_string()) {
    out.problems.push_back(
        {ref, ProblemReason::invalid_annotation,
         ref.str() + ": annotation " + options.annotation_key + " must be a string holding YAML"});
  } else {
    AnnotationParse parsed = parse_annotation(annotation->get_string());
    if (parsed.ok()) {
      source.valid = true;
      source.endpoints = std::move(parsed.endpoints);
    } else {
      std::string message =
          ref.str() + ": invalid annotation " + options.annotation_key + ": " + parsed.summary();
      if (!source.target_namespace.empty()) {
        message += "; telegraf in namespace " + source.target_namespace +
                   " keeps its last good configuration";
      }
      out.problems.push_back({ref, ProblemReason::invalid_annotation, std::move(message)});
    }
  }
  out.source = std::move(source);
  return out;
}

std::optional<std::string> target_namespace_of(const json::value& value) {
  const json::object* obj = value.if_object();
  if (obj == nullptr) return std::nullopt;
  const auto api_version = child_string(*obj, "apiVersion").value_or("");
  const auto kind = child_string(*obj, "kind").value_or("");
  std::optional<std::string_view> target;
  if (api_version == "v1" && kind == "Namespace") {
    const json::object* meta = child_object(*obj, "metadata");
    if (meta != nullptr) target = child_string(*meta, "name");
  } else if (api_version.rfind("argoproj.io/", 0) == 0 && kind == "Application") {
    const json::object* spec = child_object(*obj, "spec");
    const json::object* dest = spec != nullptr ? child_object(*spec, "destination") : nullptr;
    if (dest != nullptr) target = child_string(*dest, "namespace");
  }
  if (!target || !is_dns_label(*target)) return std::nullopt;
  return std::string(*target);
}

std::optional<std::vector<SourceRef>> parse_sources_annotation(std::string_view value) {
  std::vector<SourceRef> out;
  while (!value.empty()) {
    const auto comma = value.find(',');
    const std::string_view item = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
    SourceRef ref;
    const auto first = item.find('/');
    if (first == std::string_view::npos) return std::nullopt;
    const std::string_view kind = item.substr(0, first);
    const std::string_view rest = item.substr(first + 1);
    if (kind == "Namespace") {
      if (!is_dns_label(rest)) return std::nullopt;
      ref.name = std::string(rest);
    } else if (kind == "Application") {
      const auto second = rest.find('/');
      if (second == std::string_view::npos) return std::nullopt;
      ref.kind = SourceKind::application;
      ref.ns = std::string(rest.substr(0, second));
      ref.name = std::string(rest.substr(second + 1));
      if (!is_dns_label(ref.ns) || ref.name.empty() || ref.name.find('/') != std::string::npos) {
        return std::nullopt;
      }
    } else {
      return std::nullopt;
    }
    out.push_back(std::move(ref));
  }
  return out;
}

namespace {

// `pointing_here`: the sources whose target is `ns`, in input order.
TargetPlan plan_from(std::string_view ns, const std::vector<const Source*>& pointing_here) {
  TargetPlan plan;
  plan.ns = std::string(ns);

  // One per identity (the later copy wins), sorted.
  std::map<SourceRef, const Source*> unique;
  for (const Source* s : pointing_here) unique.insert_or_assign(s->ref, s);
  std::vector<const Source*> valid;
  for (const auto& [ref, s] : unique) {
    if (s->valid) {
      valid.push_back(s);
      plan.sources.push_back(s->ref);
    } else {
      plan.held_by.push_back(s->ref);
    }
  }

  plan.application = std::string(ns);
  bool matches_namespace = false;
  const Source* first_application = nullptr;
  for (const Source* s : valid) {
    if (s->ref.kind == SourceKind::namespace_ && !s->ref.uid.empty()) plan.owner = s->ref;
    if (s->application_name == ns) matches_namespace = true;
    if (s->ref.kind == SourceKind::application && first_application == nullptr) {
      first_application = s;
    }
  }
  if (!matches_namespace && first_application != nullptr) {
    plan.application = first_application->application_name;
  }

  // Merge: first appearance decides the position; a name defined differently by two
  // sources is left out and reported on each source defining it.
  struct Definition {
    const Source* source;
    const Endpoint* endpoint;
  };
  std::vector<std::string_view> order;
  std::map<std::string_view, std::vector<Definition>> by_name;
  for (const Source* s : valid) {
    for (const Endpoint& ep : s->endpoints) {
      auto& defs = by_name[ep.name];
      if (defs.empty()) order.push_back(ep.name);
      defs.push_back({s, &ep});
    }
  }
  for (std::string_view name : order) {
    const auto& defs = by_name[name];
    const bool agree = std::all_of(defs.begin(), defs.end(), [&](const Definition& d) {
      return *d.endpoint == *defs.front().endpoint;
    });
    if (agree) {
      plan.endpoints.push_back(*defs.front().endpoint);
      continue;
    }
    for (const Definition& mine : defs) {
      // The first definition from another source that differs from this one.
      const Definition* other = nullptr;
      std::set<std::string> others;
      for (const Definition& d : defs) {
        if (d.source == mine.source) continue;
        others.insert(d.source->ref.str());
        if (other == nullptr && !(*d.endpoint == *mine.endpoint)) other = &d;
      }
      if (other == nullptr) continue;  // agrees with all the others; they report it
      std::string with;
      for (const auto& o : others) with += (with.empty() ? "" : ", ") + o;
      plan.problems.push_back(
          {mine.source->ref, ProblemReason::endpoint_conflict,
           mine.source->ref.str() + ": endpoint " + describe(name) + " is also defined by " + with +
               " (" + difference(*mine.endpoint, *other->endpoint) + other->source->ref.str() +
               "); it is left out of telegraf in namespace " + plan.ns +
               " until the definitions agree"});
    }
  }
  return plan;
}

}  // namespace

TargetPlan plan_target(std::string_view ns, std::span<const Source> sources) {
  std::vector<const Source*> pointing_here;
  for (const Source& s : sources) {
    if (s.target_namespace == ns) pointing_here.push_back(&s);
  }
  return plan_from(ns, pointing_here);
}

std::vector<TargetPlan> plan_targets(std::span<const Source> sources) {
  std::map<std::string_view, std::vector<const Source*>> by_target;
  for (const Source& s : sources) {
    if (!s.target_namespace.empty()) by_target[s.target_namespace].push_back(&s);
  }
  std::vector<TargetPlan> plans;
  plans.reserve(by_target.size());
  for (const auto& [ns, pointing_here] : by_target) plans.push_back(plan_from(ns, pointing_here));
  return plans;
}

}  // namespace aop::telegraf
