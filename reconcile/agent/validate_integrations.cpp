// Integration checks of spec 6.1 and issue 7; see validate_integrations.hpp.
#include "reconcile/agent/validate_integrations.hpp"

#include <map>
#include <optional>
#include <set>

#include "k8s/decode.hpp"

namespace aop::agent {
namespace {

using boost::json::object;
using boost::json::value;

std::string ref(const ObjectMeta& m) {
  return m.ns + "/" + m.name;
}

void report(Hierarchy& h, const Integration& in, std::string field, std::string message,
            Severity severity) {
  h.problems.push_back(Problem{Kind::integration,
                               {in.metadata.ns, in.metadata.name},
                               std::move(field),
                               std::move(message),
                               severity});
}

// "ns/a, ns/b", for messages.
std::string known_list(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// One instance reference inside the config: a string naming `<namespace>/<name>` of an
// instance of the hierarchy. Anything else is reported, the Integration is kept.
void check_reference(Hierarchy& h, const Integration& in, const object& config,
                     std::string_view key, const std::string& field, std::string_view kind,
                     const std::set<std::string>& known) {
  const value* v = config.if_contains(key);
  if (v == nullptr || v->is_null()) return;
  if (!v->is_string()) {
    report(h, in, field,
           "expected a string <namespace>/<name> naming a " + std::string(kind) + ", got " +
               std::string(k8s::json_kind_name(*v)),
           Severity::warning);
    return;
  }
  const std::string name(v->get_string());
  if (name.empty() || known.count(name) != 0) return;
  const std::string what_to_do = known.empty()
                                     ? "this GrafanaAgent selects no " + std::string(kind)
                                     : "use <namespace>/<name> of one of: " + known_list(known);
  report(h, in, field,
         std::string(kind) + " \"" + name + "\" is not part of GrafanaAgent " +
             ref(h.agent.metadata) + ", so the agent cannot resolve it (" + what_to_do + ")",
         Severity::warning);
}

// The first volume or volume mount whose name in the workload is too long: {field, name}.
std::optional<std::pair<std::string, std::string>> long_volume_name(const Integration& in) {
  constexpr std::size_t kVolumeNameMax = 63;
  for (const auto& [list, what] : {std::pair{&in.spec.volumes, "volumes"},
                                   std::pair{&in.spec.volume_mounts, "volumeMounts"}}) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto* n = (*list)[i].if_contains("name");
      if (n == nullptr || !n->is_string()) continue;
      std::string name = integration_volume_name(in.metadata, n->get_string());
      if (name.size() > kVolumeNameMax) {
        return std::pair{"spec." + std::string(what) + "[" + std::to_string(i) + "].name",
                         std::move(name)};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::string integration_volume_name(const ObjectMeta& integration, std::string_view volume) {
  return integration.ns + "-" + integration.name + "-" + std::string(volume);
}

void validate_integrations(Hierarchy& h) {
  std::set<std::string> metrics_instances;
  for (const auto& e : h.metrics) metrics_instances.insert(ref(e.instance.metadata));
  std::set<std::string> logs_instances;
  for (const auto& e : h.logs) logs_instances.insert(ref(e.instance.metadata));

  // spec.name → the first accepted Integration of that name. When any accepted one is
  // unique it is the only accepted one, so comparing with the first suffices.
  std::map<std::string, std::size_t> first_by_name;
  std::vector<Integration> kept;
  kept.reserve(h.integrations.size());
  for (auto& in : h.integrations) {
    if (in.spec.config && !in.spec.config->is_null() && !in.spec.config->is_object()) {
      report(h, in, "spec.config",
             "expected an object (the integration's configuration block), got " +
                 std::string(k8s::json_kind_name(*in.spec.config)) +
                 "; this Integration is not deployed",
             Severity::error);
      continue;
    }
    if (auto long_name = long_volume_name(in)) {
      report(h, in, long_name->first,
             "the volume's name in the workload, " + long_name->second + ", has " +
                 std::to_string(long_name->second.size()) +
                 " characters, more than the 63 of a volume name (a DNS-1123 label), so the API "
                 "server would refuse the workload; this Integration is not deployed (shorten the "
                 "Integration's or the volume's name)",
             Severity::error);
      continue;
    }
    const auto it = first_by_name.find(in.spec.name);
    if (it != first_by_name.end()) {
      const Integration& first = kept[it->second];
      if (first.spec.unique || in.spec.unique) {
        const std::string which = in.spec.unique && first.spec.unique ? "both are"
                                  : in.spec.unique                    ? "this one is"
                                                                      : "that one is";
        report(h, in, "spec.name",
               "integration \"" + in.spec.name + "\" is already provided by Integration " +
                   ref(first.metadata) + " in GrafanaAgent " + ref(h.agent.metadata) + " and " +
                   which + " unique (spec.type.unique); this one is not deployed (remove or " +
                   "rename one of them, or clear spec.type.unique)",
               Severity::error);
        continue;
      }
    } else {
      first_by_name.emplace(in.spec.name, kept.size());
    }
    kept.push_back(std::move(in));
  }

  for (const auto& in : kept) {
    if (!in.spec.config || !in.spec.config->is_object()) continue;
    const object& config = in.spec.config->get_object();
    if (const value* a = config.if_contains("autoscrape"); a != nullptr && a->is_object()) {
      check_reference(h, in, a->get_object(), "metrics_instance",
                      "spec.config.autoscrape.metrics_instance", "MetricsInstance",
                      metrics_instances);
      check_reference(h, in, a->get_object(), "logs_instance",
                      "spec.config.autoscrape.logs_instance", "LogsInstance", logs_instances);
    }
    check_reference(h, in, config, "logs_instance", "spec.config.logs_instance", "LogsInstance",
                    logs_instances);
  }
  h.integrations = std::move(kept);
}

}  // namespace aop::agent
