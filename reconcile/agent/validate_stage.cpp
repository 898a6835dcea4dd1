// validate_hierarchy(): the validate stage over a discovered hierarchy (field_checks.hpp).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "reconcile/agent/field_checks.hpp"
#include "reconcile/agent/fragments.hpp"
#include "reconcile/validation/text.hpp"

namespace aop::agent {
namespace {

using validation::describe;

bool is_member(Kind kind) {
  return kind == Kind::service_monitor || kind == Kind::pod_monitor || kind == Kind::probe ||
         kind == Kind::pod_logs || kind == Kind::integration;
}

std::string kind_word(AssetKind k) {
  return k == AssetKind::secret ? "Secret" : "ConfigMap";
}

// The keys of the Secrets and ConfigMaps one validation reads, each looked up once: a
// root's monitors mostly reference the same few objects, and every lookup of the asset
// source copies (and decodes) the whole object.
class AssetKeys {
 public:
  explicit AssetKeys(const AssetSource& assets) : assets_(assets) {}

  // nullopt: it cannot be looked up now; an empty inner optional: it does not exist.
  using Keys = std::optional<std::optional<std::vector<std::string>>>;

  const Keys& keys(AssetKind kind, const std::string& ns, const std::string& name) {
    auto [it, fresh] = memo_.try_emplace({kind, ns, name});
    if (!fresh) return it->second;
    auto found =
        assets_.keys(kind == AssetKind::secret ? Kind::secret : Kind::config_map, ns, name);
    if (found) it->second = std::move(*found);
    return it->second;
  }

  const AssetSource& source() const { return assets_; }

 private:
  const AssetSource& assets_;
  std::map<std::tuple<AssetKind, std::string, std::string>, Keys> memo_;
};

// The Problem for one reference, or nothing when it resolves (or cannot be looked up now).
std::optional<Problem> check_reference(const AssetRef& ref, AssetKeys& assets) {
  if (ref.name.empty() || ref.key.empty()) return std::nullopt;  // reported by the field checks
  const std::string what = kind_word(ref.kind) + " " + ref.ns + "/" + ref.name;
  const AssetKeys::Keys& found = assets.keys(ref.kind, ref.ns, ref.name);
  if (!found) return std::nullopt;
  const std::optional<std::vector<std::string>>& keys = *found;  // nullopt: does not exist
  const bool has_key = keys && std::find(keys->begin(), keys->end(), ref.key) != keys->end();
  Problem p = make_problem(ref.owner_kind, ref.owner, ref.field, "");
  if (!keys) {
    p.field += ".name";
    p.message = what + " not found";
    const Kind other = ref.kind == AssetKind::secret ? Kind::config_map : Kind::secret;
    if (auto e = assets.source().exists(other, ref.ns, ref.name); e && *e) {
      p.message += "; a " + std::string(other == Kind::secret ? "Secret" : "ConfigMap") +
                   " of that name exists, but this field takes a " + kind_word(ref.kind);
    } else {
      p.message +=
          " (references resolve in the namespace of the object holding them); create "
          "it or correct the name";
    }
    return p;
  }
  if (!has_key) {
    p.field += ".key";
    p.message = what + " has no key " + describe(ref.key);
    if (keys->empty()) {
      p.message += " (it has no keys)";
    } else {
      p.message += "; its keys are:";
      for (std::size_t i = 0; i < keys->size() && i < 10; ++i) {
        p.message += (i == 0 ? " " : ", ") + (*keys)[i];
      }
      if (keys->size() > 10) p.message += ", ...";
    }
    return p;
  }
  return std::nullopt;
}

std::optional<std::string> secret_value(const AssetSource& assets, const std::string& ns,
                                        const SecretKeySelector& sel) {
  auto s = assets.secret(ns, sel.name);
  if (!s || !*s) return std::nullopt;
  const auto it = (*s)->data.find(sel.key);
  if (it == (*s)->data.end()) return std::nullopt;
  return it->second;
}

// The key of a member in the sets below (the fragments' key).
MemberKey key_of(Kind kind, const ObjectMeta& m) {
  return {kind, k8s::ObjectKey{m.ns, m.name}};
}

template <class T>
void remove_invalid(std::vector<T>& list, Kind kind, const std::set<MemberKey>& invalid) {
  std::erase_if(list, [&](const T& x) {
    if constexpr (requires { x->metadata; }) {
      return invalid.contains(key_of(kind, x->metadata));
    } else {
      return invalid.contains(key_of(kind, x.metadata));
    }
  });
}

}  // namespace

Validation validate_hierarchy(Hierarchy& h, const AssetSource& assets, const Options& options,
                              DecodeCache* memo) {
  Validation out;
  std::set<std::string> seen;
  std::set<MemberKey> invalid;
  // Instances whose additional scrape configs are left out (a reference to them that
  // does not resolve is a problem of that member, not of the instance).
  std::set<MemberKey> drop_additional;
  auto add = [&](std::vector<Problem> problems, bool references = false) {
    for (auto& p : problems) {
      const Kind kind = kind_of(p.kind).value_or(Kind::grafana_agent);
      if (p.severity == Severity::error) {
        if (is_member(kind)) {
          invalid.insert({kind, p.object});
        } else if ((kind == Kind::metrics_instance || kind == Kind::logs_instance) &&
                   p.field.starts_with("spec.additionalScrapeConfigs")) {
          drop_additional.insert({kind, p.object});
          p.message += " (these additional scrape configs are left out)";
        } else {
          out.root_invalid = true;
          out.root_references_only = out.root_references_only && references;
        }
      }
      if (seen.insert(p.str()).second) out.problems.push_back(std::move(p));
    }
  };

  add(check_grafana_agent(h.agent));
  // A member's checks read the member and the root's global scrape interval alone.
  const std::string& interval = h.agent.spec.metrics.scrape_interval;
  const auto member_checks = [&](const ObjectMeta& m, auto&& check) {
    return memo != nullptr ? memo->checks(m, interval, check) : check();
  };
  std::set<MemberKey> checked;
  const auto once = [&](Kind kind, const ObjectMeta& m) {
    return checked.insert(key_of(kind, m)).second;
  };
  for (const auto& e : h.metrics) {
    if (once(Kind::metrics_instance, e.instance.metadata)) add(check_metrics_instance(e.instance));
    for (const auto& sm : e.service_monitors) {
      if (once(Kind::service_monitor, sm->metadata)) {
        add(member_checks(sm->metadata, [&] { return check_service_monitor(*sm, h.agent); }));
      }
    }
    for (const auto& pm : e.pod_monitors) {
      if (once(Kind::pod_monitor, pm->metadata)) {
        add(member_checks(pm->metadata, [&] { return check_pod_monitor(*pm, h.agent); }));
      }
    }
    for (const auto& p : e.probes) {
      if (once(Kind::probe, p->metadata)) {
        add(member_checks(p->metadata, [&] { return check_probe(*p, h.agent); }));
      }
    }
  }
  for (const auto& e : h.logs) {
    if (once(Kind::logs_instance, e.instance.metadata)) add(check_logs_instance(e.instance));
    for (const auto& pl : e.pod_logs) {
      if (once(Kind::pod_logs, pl->metadata)) {
        add(member_checks(pl->metadata, [&] { return check_pod_logs(*pl); }));
      }
    }
  }
  for (const auto& in : h.integrations) {
    if (once(Kind::integration, in.metadata)) add(check_integration(in));
  }

  // References: every occurrence, attributed to the object that holds it. Those of the
  // blocks upstream does not render (monitor and Probe oauth2/authorization) are only
  // read by upstream, not needed: a warning, unless --agent-compat=fixed renders them.
  AssetKeys keys(assets);
  for (const auto& ref : collect_asset_refs(h, true)) {
    auto p = check_reference(ref, keys);
    if (!p) continue;
    const bool monitor = ref.owner_kind == Kind::service_monitor ||
                         ref.owner_kind == Kind::pod_monitor || ref.owner_kind == Kind::probe;
    if (monitor && options.compat != Compat::fixed &&
        (ref.field.find(".oauth2.") != std::string::npos ||
         ref.field.find(".authorization.") != std::string::npos ||
         ref.field.starts_with("spec.oauth2.") || ref.field.starts_with("spec.authorization."))) {
      p->severity = Severity::warning;
      p->message += " (not rendered unless --agent-compat=fixed)";
    }
    add({std::move(*p)}, true);
  }

  // Members that failed are left out of every instance that selected them.
  for (auto& e : h.metrics) {
    remove_invalid(e.service_monitors, Kind::service_monitor, invalid);
    remove_invalid(e.pod_monitors, Kind::pod_monitor, invalid);
    remove_invalid(e.probes, Kind::probe, invalid);
  }
  for (auto& e : h.logs) remove_invalid(e.pod_logs, Kind::pod_logs, invalid);
  remove_invalid(h.integrations, Kind::integration, invalid);

  // Additional scrape configs: an invalid one is left out (reported on the instance),
  // the instance's other scrape configs still deploy.
  const auto additional = [&](auto& instance, Kind kind, bool metrics,
                              const std::vector<std::string>& jobs) {
    auto& sel = instance.spec.additional_scrape_configs;
    if (drop_additional.contains(key_of(kind, instance.metadata))) {
      sel.reset();
      return;
    }
    if (!sel || sel->name.empty() || sel->key.empty()) return;
    const auto value = secret_value(assets, instance.metadata.ns, *sel);
    if (!value) return;  // a missing Secret or key is reported above
    auto problems = check_additional_scrape_configs(*value, kind, instance.metadata,
                                                    "spec.additionalScrapeConfigs", metrics, jobs);
    const bool bad = std::any_of(problems.begin(), problems.end(),
                                 [](const Problem& p) { return p.severity == Severity::error; });
    for (auto& p : problems) {
      if (p.severity == Severity::error)
        p.message += " (these additional scrape configs are left out)";
      if (seen.insert(p.str()).second) out.problems.push_back(std::move(p));
    }
    if (bad) sel.reset();
  };
  for (auto& e : h.metrics) {
    std::vector<std::string> jobs;
    for (const auto& sm : e.service_monitors) {
      for (std::size_t i = 0; i < sm->spec.endpoints.size(); ++i) {
        jobs.push_back("serviceMonitor/" + sm->metadata.ns + "/" + sm->metadata.name + "/" +
                       std::to_string(i));
      }
    }
    for (const auto& pm : e.pod_monitors) {
      for (std::size_t i = 0; i < pm->spec.pod_metrics_endpoints.size(); ++i) {
        jobs.push_back("podMonitor/" + pm->metadata.ns + "/" + pm->metadata.name + "/" +
                       std::to_string(i));
      }
    }
    for (const auto& p : e.probes)
      jobs.push_back("probe/" + p->metadata.ns + "/" + p->metadata.name);
    additional(e.instance, Kind::metrics_instance, true, jobs);
  }
  for (auto& e : h.logs) {
    std::vector<std::string> jobs;
    for (const auto& pl : e.pod_logs) {
      jobs.push_back("podLogs/" + pl->metadata.ns + "/" + pl->metadata.name);
    }
    additional(e.instance, Kind::logs_instance, false, jobs);
  }

  // The work budget: a hierarchy above it refuses the root (the last good deployment
  // stays) instead of rendering a configuration no agent could load.
  std::size_t jobs = h.integrations.size();
  for (const auto& e : h.metrics) {
    for (const auto& sm : e.service_monitors) jobs += sm->spec.endpoints.size();
    for (const auto& pm : e.pod_monitors) jobs += pm->spec.pod_metrics_endpoints.size();
    jobs += e.probes.size();
  }
  for (const auto& e : h.logs) jobs += e.pod_logs.size();
  if (jobs > kMaxJobsPerRoot) {
    Problem p;
    p.kind = gvk(Kind::grafana_agent);
    p.object = {h.agent.metadata.ns, h.agent.metadata.name};
    p.message = "its hierarchy renders " + std::to_string(jobs) +
                " scrape and log jobs (ServiceMonitor and PodMonitor endpoints, Probes, "
                "PodLogs and Integrations, once per instance that selects them); at most " +
                std::to_string(kMaxJobsPerRoot) +
                " per GrafanaAgent: narrow the instances' selectors or split the members "
                "across GrafanaAgents";
    add({std::move(p)});
  }
  return out;
}

}  // namespace aop::agent
