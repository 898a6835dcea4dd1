// The pipeline of pipeline.hpp: plan_root() runs the stages in order and gathers what
// each found. The stages live next to what they work on (discovery.cpp, assets.cpp,
// fragments.cpp, assemble.cpp, objects.cpp); the small ones are here.
#include "reconcile/agent/pipeline.hpp"

#include "reconcile/agent/validate_integrations.hpp"

namespace aop::agent {

std::string_view stage_name(Stage stage) {
  switch (stage) {
    case Stage::decode:
      return "decode";
    case Stage::discover:
      return "discover";
    case Stage::validate:
      return "validate";
    case Stage::resolve_assets:
      return "resolve assets";
    case Stage::render_fragments:
      return "render fragments";
    case Stage::assemble:
      return "assemble";
    case Stage::build_objects:
      return "build objects";
    case Stage::plan_apply:
      return "plan apply";
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

Outcome<Hierarchy> validate(Hierarchy hierarchy) {
  Outcome<Hierarchy> out;
  out.problems = validate_integrations(hierarchy);
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
  return !paused && (!failure || failure->stage == Stage::assemble);
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
      plan.dependencies.objects =
          asset_dependencies(validate(std::move(discovered.value.hierarchy)).value);
    }
    return plan;
  }
  gather(plan, discovered);
  if (plan.failure) return plan;

  auto validated = validate(std::move(discovered.value.hierarchy));
  gather(plan, validated);
  const Hierarchy& h = validated.value;
  const std::vector<AssetRef> refs = collect_asset_refs(h);
  plan.dependencies.objects = asset_dependencies(refs);
  plan.summary = summarize(h);

  auto assets = resolve_assets(h, refs, in.assets);
  gather(plan, assets);
  if (plan.failure) return plan;

  auto fragments = render_fragments(h, assets.value, in.options);
  gather(plan, fragments);
  auto configs = assemble(std::move(fragments.value), h);
  gather(plan, configs);  // a render failure: the steps before the failing file still run
  auto objects = build_objects(h, assets.value, std::move(configs.value), in.options);
  // Refused names stop the steps a render failure lets run: that failure goes first.
  if (!objects.ok()) plan.failure.reset();
  gather(plan, objects);
  plan.workloads = objects.value.workloads;
  auto applied = plan_apply(std::move(objects.value), plan.root, in.hash_annotation);
  gather(plan, applied);
  plan.apply = std::move(applied.value);
  return plan;
}

}  // namespace aop::agent
