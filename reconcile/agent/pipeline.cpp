// The pipeline of pipeline.hpp: plan_root() runs the stages in order and gathers what
// each found. The stages live next to what they work on (discovery.cpp, assets.cpp,
// fragments.cpp, assemble.cpp, objects.cpp); the small ones are here.
#include "reconcile/agent/pipeline.hpp"

#include <algorithm>
#include <set>

#include <boost/json/serialize.hpp>

#include "reconcile/agent/field_checks.hpp"
#include "reconcile/agent/validate_integrations.hpp"
#include "reconcile/alloy/backend.hpp"

namespace aop::agent {

std::string_view stage_name(Stage stage) {
  switch (stage) {
    case Stage::decode:
      return "decode";
    case Stage::discover:
      return "discover";
    case Stage::choose_backend:
      return "choose backend";
    case Stage::validate:
      return "validate";
    case Stage::resolve_assets:
      return "resolve assets";
    case Stage::render_fragments:
      return "render fragments";
    case Stage::assemble:
      return "assemble";
    case Stage::translate:
      return "translate";
    case Stage::build_objects:
      return "build objects";
    case Stage::plan_apply:
      return "plan apply";
    case Stage::old_objects:
      return "old objects";
  }
  return "unknown";
}

Outcome<GrafanaAgent> decode_root(const k8s::Object& root, DecodeCache& cache) {
  Outcome<GrafanaAgent> out;
  auto agent = cache.decode<GrafanaAgent>(root);
  if (!agent) {
    out.failure = StageFailure{Stage::decode, runtime::Errc::invalid_spec,
                               "GrafanaAgent " + root.key().str() + ": " + agent.error().message};
    return out;
  }
  out.value = std::move(*agent);
  return out;
}

namespace {

// The validate stage's refusal of a root: the first root-level errors, quoted.
StageFailure root_refusal(const std::vector<Problem>& problems, bool references_only) {
  std::string message;
  std::size_t n = 0;
  for (const auto& p : problems) {
    const auto kind = kind_of(p.kind);
    if (p.severity != Severity::error || !kind ||
        (*kind != Kind::grafana_agent && *kind != Kind::metrics_instance &&
         *kind != Kind::logs_instance) ||
        p.field.starts_with("spec.additionalScrapeConfigs")) {
      continue;
    }
    if (n++ < 3) message += (message.empty() ? "" : "; ") + p.str();
  }
  if (n > 3) message += "; and " + std::to_string(n - 3) + " more (see status.problems)";
  // A reference that does not resolve keeps the reason it had before references were
  // checked here (AssetResolutionFailed): the fix is in a Secret or ConfigMap.
  return StageFailure{
      Stage::validate,
      references_only ? runtime::Errc::asset_resolution_failed : runtime::Errc::validation_failed,
      message +
          "; nothing is applied until it is fixed (the last good deployment "
          "stays)"};
}

}  // namespace

Outcome<BackendChoice> choose_backend(const GrafanaAgent& agent, const Options& options) {
  Outcome<BackendChoice> out;
  out.value.backend = options.backend;
  const auto it = agent.metadata.annotations.find(kBackendAnnotation);
  if (it == agent.metadata.annotations.end()) return out;
  if (it->second == "static") {
    out.value.backend = Backend::static_mode;
  } else if (it->second == "alloy") {
    out.value.backend = Backend::alloy;
  } else {
    out.failure = StageFailure{Stage::choose_backend, runtime::Errc::invalid_backend,
                               "annotation " + std::string(kBackendAnnotation) + ": " +
                                   boost::json::serialize(boost::json::value(it->second)) +
                                   " is not static or alloy"};
  }
  return out;
}

namespace {

bool is_label(const k8s::Object& o, std::string_view key, std::string_view value) {
  return o.label(key) == std::optional<std::string_view>(value);
}

// Whether `o` (of `kind`) is one of the objects backend `old` keeps for the root named
// `n` with UID `uid` (pipeline.hpp, old objects), desired or not.
bool belongs_to_backend(const std::string& uid, const std::string& n, Backend old, Kind kind,
                        const k8s::Object& o) {
  if (!is_label(o, kManagedByKey, kManagedByValue)) return false;
  const bool workload =
      kind == Kind::stateful_set || kind == Kind::daemon_set || kind == Kind::deployment;
  const auto refs = o.owner_references();
  const bool owned = std::any_of(refs.begin(), refs.end(), [&](const auto& ref) {
    return ref.uid == uid && (ref.controller || !workload);
  });
  if (!owned) return false;
  const bool alloy = is_label(o, kBackendLabel, "alloy");
  if (old == Backend::alloy) return alloy && is_label(o, kAgentNameLabel, n);
  if (alloy) return false;
  const std::string_view name = o.name();
  switch (kind) {
    case Kind::secret:
      return name == n + "-config" || name == n + "-logs-config" ||
             name == n + "-integrations-deploy-config" || name == n + "-integrations-ds-config";
    case Kind::service:
      return name == n + "-operated";
    case Kind::daemon_set:
      return name == n + "-logs" || name == n + "-integrations-ds";
    case Kind::deployment:
      return name == n + "-integrations-deploy";
    case Kind::stateful_set:
      return is_label(o, kAgentNameLabel, n);
    default:
      return false;
  }
}

}  // namespace

Outcome<OldObjects> find_old_objects(const GrafanaAgent& agent, Backend effective,
                                     const ClusterView& view, const runtime::ApplyPlan& desired) {
  Outcome<OldObjects> out;
  OldObjects& old = out.value;
  old.backend = effective == Backend::alloy ? Backend::static_mode : Backend::alloy;
  old.plan.root = desired.root + std::string(kOldObjectsSuffix);
  if (agent.metadata.uid.empty()) return out;
  const std::string& ns = agent.metadata.ns;
  const k8s::LabelSelector any;
  // Deletion order: the workloads first (their pods stop reading the rest), then the
  // Services, then the config Secrets.
  const std::string& uid = agent.metadata.uid;
  const std::string& name = agent.metadata.name;
  for (const Kind kind :
       {Kind::stateful_set, Kind::daemon_set, Kind::deployment, Kind::service, Kind::secret}) {
    const auto gk = runtime::GroupKind::of(gvk(kind));
    std::set<std::string, std::less<>> found;
    auto listed = view.list(kind, ns, any, [&](const ListedObject& l) {
      const k8s::Object& o = l.compact;
      if (o.ns() != ns || !belongs_to_backend(uid, name, old.backend, kind, o)) return;
      k8s::ObjectKey key{ns, std::string(o.name())};
      if (desired.find(gk, key) != nullptr) return;
      found.insert(key.name);
      old.objects.emplace_back(kind, std::move(key));
    });
    if (!listed) {
      out.failure = StageFailure{
          Stage::old_objects, runtime::Errc::discovery_failed,
          "listing the objects of the root's other backend: " + listed.error().message};
      old.plan.steps.clear();
      return out;
    }
    if (found.empty()) continue;
    runtime::PruneScope scope;
    scope.kinds = {gvk(kind)};
    scope.owner_uid = uid;
    scope.namespaces = {ns};
    scope.match_labels = {{std::string(kManagedByKey), std::string(kManagedByValue)}};
    // Exactly what was found, the rule checked again on the object the engine deletes.
    scope.owned = [found = std::move(found), uid, name, backend = old.backend,
                   kind](const k8s::Object& o) {
      return found.contains(o.name()) && belongs_to_backend(uid, name, backend, kind, o);
    };
    old.plan.prune(std::move(scope));
  }
  return out;
}

Outcome<Hierarchy> validate(Hierarchy hierarchy, const AssetSource& assets, const Options& options,
                            DecodeCache* memo) {
  Outcome<Hierarchy> out;
  // Integrations first (a config that is not an object, a second unique name): one
  // left out there is not reported again for its fields.
  out.problems = validate_integrations(hierarchy);
  Validation v = validate_hierarchy(hierarchy, assets, options, memo);
  for (auto& p : v.problems) out.problems.push_back(std::move(p));
  if (v.root_invalid) out.failure = root_refusal(out.problems, v.root_references_only);
  out.value = std::move(hierarchy);
  return out;
}

Outcome<runtime::ApplyPlan> plan_apply(DesiredObjects desired, std::string root,
                                       std::string_view hash_annotation) {
  Outcome<runtime::ApplyPlan> out;
  out.value = std::move(desired.plan);
  out.value.root = std::move(root);
  if (hash_annotation.empty()) return out;
  for (auto& step : out.value.steps) {
    if (step.action == runtime::ApplyStep::Action::apply) {
      step.hash = runtime::content_hash(step.object, hash_annotation);
    }
  }
  return out;
}

HierarchySummary summarize(const Hierarchy& h) {
  HierarchySummary s;
  s.metrics_instances = h.metrics.size();
  for (const auto& m : h.metrics) {
    s.service_monitors += m.service_monitors.size();
    s.pod_monitors += m.pod_monitors.size();
    s.probes += m.probes.size();
  }
  s.logs_instances = h.logs.size();
  for (const auto& l : h.logs) s.pod_logs += l.pod_logs.size();
  s.integrations = h.integrations.size();
  return s;
}

bool RootPlan::applies() const {
  return !paused && (!failure || failure->stage == Stage::assemble ||
                     failure->stage == Stage::translate || failure->stage == Stage::old_objects);
}

namespace {

template <class T>
void gather(RootPlan& plan, Outcome<T>& stage) {
  plan.problems.insert(plan.problems.end(), std::make_move_iterator(stage.problems.begin()),
                       std::make_move_iterator(stage.problems.end()));
  if (stage.failure && !plan.failure) plan.failure = std::move(stage.failure);
}

}  // namespace

RootPlan plan_root(const k8s::Object& root, const PipelineInputs& in) {
  RootPlan plan;
  plan.root = root.key().str();
  plan.generation = root.generation();

  auto agent = decode_root(root, in.decode_cache);
  if (!agent.ok()) {
    gather(plan, agent);
    return plan;
  }

  auto discovered = discover(agent.value, in.view, in.decode_cache);
  plan.dependencies.selections = std::move(discovered.value.selections);
  if (agent.value.spec.paused) {
    // Left alone, but watched: a change (unpausing included) reconciles it again.
    plan.paused = true;
    if (discovered.ok()) {
      plan.dependencies.objects = asset_dependencies(discovered.value.hierarchy);
    }
    return plan;
  }
  if (!discovered.ok()) {
    // A hierarchy that cannot be discovered may be so because of a root-level field (an
    // invalid selector operator): the GrafanaAgent's own checks name the field exactly.
    Outcome<Hierarchy> checked;
    checked.problems = check_grafana_agent(agent.value);
    // Discovery keeps the checks of an instance whose member selector failed.
    for (auto& p : discovered.problems) {
      const auto kind = kind_of(p.kind);
      if (p.severity == Severity::error && kind &&
          (*kind == Kind::metrics_instance || *kind == Kind::logs_instance)) {
        checked.problems.push_back(std::move(p));
      }
    }
    if (std::any_of(checked.problems.begin(), checked.problems.end(),
                    [](const Problem& p) { return p.severity == Severity::error; })) {
      checked.failure = root_refusal(checked.problems, false);
      gather(plan, checked);
      return plan;
    }
  }
  gather(plan, discovered);
  if (plan.failure) return plan;

  // What the root read, before members are left out: fixing a member's missing Secret
  // must reconcile the root again.
  plan.dependencies.objects = asset_dependencies(discovered.value.hierarchy);

  auto backend = choose_backend(agent.value, in.options);
  gather(plan, backend);
  if (plan.failure) return plan;
  plan.backend = backend.value;

  auto validated =
      validate(std::move(discovered.value.hierarchy), in.assets, in.options, &in.decode_cache);
  gather(plan, validated);
  const Hierarchy& h = validated.value;
  plan.summary = summarize(h);
  if (plan.failure) return plan;

  const std::vector<AssetRef> refs = collect_asset_refs(h);
  auto assets = resolve_assets(h, refs, in.assets);
  gather(plan, assets);
  if (plan.failure) return plan;

  // The root's use of the fragment cache, until the files are encoded.
  std::optional<FragmentCache::Use> kept;
  if (in.fragment_cache != nullptr && in.fragment_cache->enabled() &&
      !agent.value.metadata.uid.empty()) {
    kept.emplace(*in.fragment_cache, agent.value.metadata.uid);
  }
  FragmentCache::Use* const use = kept ? &*kept : nullptr;
  // The static backend writes the files as text, members' texts spliced in. (Alloy
  // translates the trees.)
  const bool as_text = backend.value.backend == Backend::static_mode;
  auto fragments = render_fragments(h, assets.value, in.options, use, as_text);
  gather(plan, fragments);
  auto configs = assemble(std::move(fragments.value), h);
  gather(plan, configs);  // a render failure: the steps before the failing file still run
  Outcome<DesiredObjects> objects;
  if (backend.value.backend == Backend::alloy) {
    auto alloy = alloy::build_root(h, assets.value, std::move(configs.value), in.options);
    plan.alloy_translation = {alloy.value.condition.status, alloy.value.condition.reason,
                              alloy.value.condition.message};
    objects = {std::move(alloy.value.desired), std::move(alloy.problems), std::move(alloy.failure)};
  } else {
    objects = build_objects(h, assets.value, std::move(configs.value), in.options, use);
  }
  kept.reset();
  // Refused names stop the steps a render failure lets run: that failure goes first.
  if (objects.failure && objects.failure->stage == Stage::build_objects) plan.failure.reset();
  gather(plan, objects);
  plan.workloads = objects.value.workloads;
  auto applied = plan_apply(std::move(objects.value), plan.root, in.hash_annotation);
  gather(plan, applied);
  plan.apply = std::move(applied.value);
  // Only objects carrying an ownerReference to this GrafanaAgent are updated or deleted,
  // by the apply and by the deletion of the other backend's objects alike.
  plan.apply.owner_uid = agent.value.metadata.uid;

  // Found also after a failure (the status tells what is kept); deleted only after none.
  auto old = find_old_objects(agent.value, backend.value.backend, in.view, plan.apply);
  gather(plan, old);
  plan.old_objects = std::move(old.value);
  plan.old_objects.plan.owner_uid = agent.value.metadata.uid;
  if (plan.failure) plan.old_objects.plan.steps.clear();
  return plan;
}

}  // namespace aop::agent
