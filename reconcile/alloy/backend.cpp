#include "reconcile/alloy/backend.hpp"

#include <algorithm>

#include "reconcile/agent/names.hpp"
#include "reconcile/alloy/integrations.hpp"
#include "reconcile/alloy/logs.hpp"
#include "reconcile/alloy/metrics.hpp"
#include "reconcile/alloy/objects.hpp"
#include "reconcile/alloy/pack.hpp"

namespace aop::alloy {
namespace {

using agent::ConfigFile;
using agent::Kind;

constexpr std::size_t kRecordsInMessage = 10;

std::string record(const TranslationProblem& p) {
  return p.kind + " " + p.ns + "/" + p.name + ": " + p.message;
}

// A translation record as a problem of the member it names. Its message starts with the
// field path, which the problem holds on its own.
agent::Problem problem_of(const TranslationProblem& p) {
  agent::Problem out;
  std::optional<Kind> kind;
  for (int k = 0; k <= static_cast<int>(Kind::deployment); ++k) {
    if (agent::kind_name(static_cast<Kind>(k)) == p.kind) kind = static_cast<Kind>(k);
  }
  out.kind = agent::gvk(kind.value_or(Kind::grafana_agent));
  out.object = {p.ns, p.name};
  out.field = p.field;
  out.message = p.message;
  if (!p.field.empty() && out.message.rfind(p.field + ": ", 0) == 0) {
    out.message.erase(0, p.field.size() + 2);
  }
  out.severity = (p.cls == ProblemClass::a || p.cls == ProblemClass::b) ? agent::Severity::error
                                                                        : agent::Severity::warning;
  return out;
}

std::string listing(const std::vector<const TranslationProblem*>& list) {
  std::string out;
  for (std::size_t i = 0; i < list.size() && i < kRecordsInMessage; ++i) {
    if (i > 0) out += "; ";
    out += record(*list[i]);
  }
  if (list.size() > kRecordsInMessage) {
    out += "; and " + std::to_string(list.size() - kRecordsInMessage) + " more";
  }
  return out;
}

TranslationCondition condition_of(const std::vector<TranslationProblem>& problems) {
  std::vector<const TranslationProblem*> by_class[4];
  for (const auto& p : problems) by_class[static_cast<int>(p.cls)].push_back(&p);
  const auto& a = by_class[static_cast<int>(ProblemClass::a)];
  const auto& b = by_class[static_cast<int>(ProblemClass::b)];
  const auto& c = by_class[static_cast<int>(ProblemClass::c)];
  const auto& kept = by_class[static_cast<int>(ProblemClass::kept)];
  if (!b.empty()) return {"False", "Failed", listing(b)};
  if (!a.empty() || !kept.empty()) {
    std::vector<const TranslationProblem*> both(a);
    both.insert(both.end(), kept.begin(), kept.end());
    return {"False", "Incomplete", listing(both)};
  }
  if (!c.empty()) return {"True", "CompleteWithWarnings", listing(c)};
  return {"True", "Complete", "every member is translated"};
}

void add_problems(std::vector<TranslationProblem>& all,
                  const std::vector<TranslationProblem>& more) {
  // The instances an integrations configuration sends to are translated there again: the
  // same records, once.
  for (const auto& p : more) {
    if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(p);
  }
}

// The hierarchy with only the Integrations kept on static.
agent::Hierarchy kept_hierarchy(const agent::Hierarchy& h,
                                const std::vector<KeptIntegration>& kept) {
  agent::Hierarchy out = h;
  std::erase_if(out.integrations, [&](const agent::Integration& in) {
    return std::none_of(kept.begin(), kept.end(), [&](const KeptIntegration& k) {
      return k.ns == in.metadata.ns && k.name == in.metadata.name;
    });
  });
  return out;
}

}  // namespace

agent::Outcome<AlloyDesired> build_root(const agent::Hierarchy& h, const agent::AssetStore& assets,
                                        agent::ConfigTrees configs, const agent::Options& options) {
  agent::Outcome<AlloyDesired> out;
  const agent::GrafanaAgent& a = h.agent;
  const std::string& ns = a.metadata.ns;
  const std::string& name = a.metadata.name;
  runtime::ApplyPlan& steps = out.value.desired.plan;
  steps.apply(agent::assets_secret(a, assets));
  for (const ConfigFile file : agent::kConfigFiles) {
    // It failed to assemble (the assemble stage reports it): nothing to translate.
    if (agent::config_needed(h, file) && !configs[file]) return out;
  }

  const bool integers = options.compat == agent::Compat::fixed;
  std::set<std::string> agent_clients;
  for (const auto& e : h.logs) {
    if (e.instance.spec.clients.empty()) {
      agent_clients.insert(e.instance.metadata.ns + "/" + e.instance.metadata.name);
    }
  }
  std::vector<TranslationProblem> problems;
  std::vector<File> metrics_files;
  std::vector<File> logs_files;
  if (const auto& tree = configs[ConfigFile::metrics]) {
    MetricsRoot root{ns, name, a.spec.metrics.replica_external_label_name.value_or("__replica__"),
                     integers};
    AlloyConfig c = translate_metrics(*tree, root);
    add_problems(problems, c.problems);
    metrics_files = std::move(c.files);
  }
  if (const auto& tree = configs[ConfigFile::logs]) {
    AlloyConfig c = translate_logs(*tree, LogsRoot{ns, name, integers, agent_clients});
    add_problems(problems, c.problems);
    logs_files = std::move(c.files);
  }
  std::vector<IntegrationMember> members;
  for (const auto& in : h.integrations) {
    members.push_back({in.metadata.ns, in.metadata.name, in.spec.name, in.spec.all_nodes,
                       in.spec.config.value_or(boost::json::value())});
  }
  IntegrationsConfig subsets[2];
  std::vector<KeptIntegration> kept;
  for (const bool all_nodes : {false, true}) {
    const auto& tree =
        configs[all_nodes ? ConfigFile::integrations_ds : ConfigFile::integrations_deploy];
    if (!tree) continue;
    auto& c = subsets[all_nodes ? 1 : 0];
    c = translate_integrations(*tree, members, all_nodes,
                               IntegrationsRoot{ns, name, integers, agent_clients});
    add_problems(problems, c.problems);
    kept.insert(kept.end(), c.kept.begin(), c.kept.end());
  }

  ObjectsInput input;
  input.image = alloy_image(a, options.alloy_image);
  std::optional<std::string> pack_error;
  auto pack = [&](const std::string& base, const std::vector<File>& files) {
    if (files.empty() || pack_error) return std::vector<ConfigSecret>();
    auto packed = pack_config(ns, name, base, files);
    if (!packed) {
      pack_error = packed.error().message;
      return std::vector<ConfigSecret>();
    }
    return std::move(*packed);
  };
  if (!translation_failed(problems)) {
    input.metrics = pack(metrics_config_base(name), metrics_files);
    input.logs = pack(logs_config_base(name), logs_files);
    input.integrations_deploy = pack(integrations_config_base(name, false), subsets[0].files);
    input.integrations_ds = pack(integrations_config_base(name, true), subsets[1].files);
  }
  AlloyObjects objects = build_objects(a, input, options);
  add_problems(problems, objects.problems);
  for (const auto& p : problems) out.problems.push_back(problem_of(p));
  out.value.condition = condition_of(problems);
  if (translation_failed(problems) || pack_error) {
    std::string message =
        "GrafanaAgent " + ns + "/" + name + ": the Alloy configuration was not applied: ";
    if (pack_error) {
      out.value.condition = {"False", "Failed", *pack_error};
      message += *pack_error;
    } else {
      message += out.value.condition.message;
    }
    out.failure = agent::StageFailure{agent::Stage::translate, runtime::Errc::translation_failed,
                                      std::move(message)};
    return out;
  }

  // 2.–6. The Alloy objects.
  std::vector<agent::WorkloadRef>& workloads = out.value.desired.workloads;
  for (auto& o : objects.in_apply_order()) {
    const std::string_view kind = o.at("kind").as_string();
    const auto* md = &o.at("metadata").as_object();
    const k8s::ObjectKey key{ns, std::string(md->at("name").as_string())};
    if (kind == "StatefulSet") workloads.push_back({Kind::stateful_set, key});
    if (kind == "DaemonSet") workloads.push_back({Kind::daemon_set, key});
    if (kind == "Deployment") workloads.push_back({Kind::deployment, key});
    steps.apply(std::move(o));
  }

  // 7. The Integrations kept on static run on the static integrations workloads.
  const agent::Hierarchy hybrid = kept_hierarchy(h, kept);
  agent::ConfigTrees static_configs;
  if (!hybrid.integrations.empty()) {
    auto fragments = agent::render_fragments(hybrid, assets, options);
    for (const ConfigFile file : {ConfigFile::integrations_deploy, ConfigFile::integrations_ds}) {
      if (!agent::config_needed(hybrid, file)) continue;
      auto tree = agent::assemble_file(fragments.value, hybrid, file);
      if (!tree.ok()) {
        out.failure = std::move(tree.failure);
        break;
      }
      static_configs[file] = std::move(tree.value);
    }
  }
  for (auto& w : agent::integrations_workloads(hybrid)) workloads.push_back(std::move(w));
  const auto hybrid_from = static_cast<std::ptrdiff_t>(steps.steps.size());
  const bool hybrid_complete = agent::append_integrations(hybrid, static_configs, options, steps);
  // Static integrations objects the hybrid rule does not need are the static backend's old
  // objects: they go with the rest once every Alloy workload is ready, not before.
  steps.steps.erase(std::remove_if(steps.steps.begin() + hybrid_from, steps.steps.end(),
                                   [](const runtime::ApplyStep& s) {
                                     return s.action ==
                                            runtime::ApplyStep::Action::delete_if_managed;
                                   }),
                    steps.steps.end());
  if (!hybrid_complete) return out;

  // 8. The root's Alloy objects this pass does not build.
  if (!a.metadata.uid.empty()) {  // never prune without an owner to scope by
    runtime::PruneScope prune;
    prune.kinds = {agent::gvk(Kind::secret), agent::gvk(Kind::service),
                   agent::gvk(Kind::stateful_set), agent::gvk(Kind::daemon_set),
                   agent::gvk(Kind::deployment)};
    prune.owner_uid = a.metadata.uid;
    prune.namespaces = {ns};
    prune.match_labels = {{std::string(agent::kManagedByKey), std::string(agent::kManagedByValue)},
                          {std::string(agent::kAgentNameLabel), name},
                          {std::string(kBackendLabel), "alloy"}};
    steps.prune(std::move(prune));
  }

  if (auto e = agent::generated_names_error(a, agent::check_generated_names(steps.steps))) {
    out.failure = agent::StageFailure{agent::Stage::build_objects, runtime::Errc::invalid_name,
                                      std::move(*e)};
    steps.steps.clear();
  }
  return out;
}

}  // namespace aop::alloy
