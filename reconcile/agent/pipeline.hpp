// The Grafana Agent controller's work for one root, as a pipeline of named stages. Each
// stage is a pure function over values (no I/O, no clock, no logging) with one outcome
// type: the value it computed, the problems it found (members left out or suspect; the
// rest goes ahead), or a failure naming the stage and an error code
// (reconcile/runtime/errors.hpp). The live controller (controller.hpp) and
// `agent-operator render` both run plan_root(), so for the same cluster state they
// produce the same objects.
//
//   GrafanaAgent object
//     │ decode            the root into its struct (the members are decoded as discovery
//     ▼                   lists them, through the same DecodeCache)
//   GrafanaAgent
//     │ discover          its MetricsInstances, LogsInstances, Integrations, their
//     ▼                   monitors and PodLogs, and what was listed to find them
//   Discovered
//     │ validate          members that cannot work are left out, with a problem each
//     ▼
//   Hierarchy
//     │ choose backend    static, or Alloy (annotation, else --agent-backend)
//     ▼
//   BackendChoice
//     │ resolve assets    the referenced Secret and ConfigMap keys
//     ▼
//   AssetStore
//     │ render fragments  one fragment per member (fragments.hpp)
//     ▼
//   Fragments
//     │ assemble          the static-mode config files, as JSON trees
//     ▼
//   ConfigTrees
//     │ build objects     config Secrets, Service, StatefulSets, DaemonSets, Deployments
//     │                   (Alloy: translate the trees first, reconcile/alloy/backend.hpp)
//     ▼
//   DesiredObjects
//     │ plan apply        the apply engine's plan, with content hashes
//     ▼
//   runtime::ApplyPlan
//     │ old objects       the other backend's objects of the root (a switch in
//     ▼                   progress) and the plan deleting them once E is ready
//   OldObjects
//
// Where a root stops (the failure's stage and code):
//   decode / invalid_spec                   nothing is touched; only an edit of the root
//   validate / validation_failed            (or of what it references) fixes the first
//                                           two;
//   discover / discovery_failed             the others are retried
//   resolve_assets / asset_resolution_failed  when something the root read changes
//   choose_backend / invalid_backend        nothing is touched; only an edit of the root
//   assemble / render_failed                the steps before the failing file's Secret
//                                           still apply; retried with backoff
//   translate / translation_failed          (Alloy) the assets Secret alone is applied
//   build_objects / invalid_name            nothing is touched; only an edit of the root
//                                           (or of the operator's flags) fixes it
//   old_objects / discovery_failed          E's objects apply, nothing of O is deleted;
//                                           retried
// A paused root (spec.paused) is discovered (so it stays watched) and nothing else.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reconcile/agent/cluster_view.hpp"
#include "reconcile/agent/decode_cache.hpp"
#include "reconcile/agent/fragment_cache.hpp"
#include "reconcile/agent/fragments.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/options.hpp"
#include "reconcile/runtime/apply_plan.hpp"
#include "reconcile/runtime/dependencies.hpp"
#include "reconcile/runtime/errors.hpp"

namespace aop::agent {

// ---- the outcome of a stage -----------------------------------------------------------

enum class Stage {
  decode,
  discover,
  choose_backend,
  validate,
  resolve_assets,
  render_fragments,
  assemble,
  translate,
  build_objects,
  plan_apply,
  old_objects,
};
std::string_view stage_name(Stage stage);  // "resolve assets"

struct StageFailure {
  Stage stage = Stage::decode;
  runtime::Errc code = runtime::Errc::invalid_spec;
  std::string message;  // what failed, where, and what to do; never secret data
  bool operator==(const StageFailure&) const = default;
};

template <class T>
struct Outcome {
  // What the stage computed. After a failure, only what the stage documents as kept
  // (e.g. discover: what was listed so far; assemble: the files before the failing one).
  T value{};
  std::vector<Problem> problems;
  std::optional<StageFailure> failure;

  bool ok() const { return !failure.has_value(); }
};

// ---- the stages, in order -------------------------------------------------------------

// decode: the root object into its struct ("GrafanaAgent ns/name: <path>: <error>").
Outcome<GrafanaAgent> decode_root(const k8s::Object& root, DecodeCache& cache);

// discover: the hierarchy under the agent, each list sorted by (namespace, name), with
// what was listed to find it (also after a failure: a fix must reconcile the root). A
// member that does not decode is left out with a problem; an invalid selector or a
// failed list or Namespace lookup fails the stage. A ServiceMonitor that reads files of
// the agent's file system is left out when the agent denies that.
struct Discovered {
  Hierarchy hierarchy;
  std::vector<runtime::KindSelection> selections;
};
Outcome<Discovered> discover(const GrafanaAgent& agent, const ClusterView& view,
                             DecodeCache& cache);

// choose backend: the root's effective backend, its `operator.agent.grafana.com/backend`
// annotation (`static` or `alloy`) or else --agent-backend. Any other annotation value
// fails the stage (invalid backend): nothing is applied or deleted for the root.
struct BackendChoice {
  Backend backend = Backend::static_mode;  // effective
  bool operator==(const BackendChoice&) const = default;
};
inline constexpr std::string_view kBackendAnnotation = "operator.agent.grafana.com/backend";
Outcome<BackendChoice> choose_backend(const GrafanaAgent& agent, const Options& options);

// validate: every value the hierarchy copies into a configuration or an object is checked
// with the rule of the component that reads it (field_checks.hpp, reconcile/validation),
// references to Secrets and ConfigMaps are looked up, additional scrape configs parsed
// with the YAML limits, Integrations checked (validate_integrations.hpp). A member that
// cannot work is left out of the hierarchy (a problem each, naming the member and the
// field), and so is an invalid additional scrape config; suspect ones stay, with a
// warning. A root-level value that fails (the GrafanaAgent, a MetricsInstance or
// LogsInstance) fails the stage: nothing is applied, the last good deployment stays.
// Runs before the assets are resolved, so a member left out references nothing. With
// `memo`, an unchanged member's field checks are taken from it (decode_cache.hpp).
Outcome<Hierarchy> validate(Hierarchy hierarchy, const AssetSource& assets, const Options& options,
                            DecodeCache* memo = nullptr);

// resolve assets: every referenced Secret/ConfigMap key looked up. An absent object
// stores nothing; a present object without the key fails the stage (asset resolution
// failed, naming the reference), as does a failed lookup. Problems: distinct keys that
// collide in the assets Secret.
Outcome<AssetStore> resolve_assets(const Hierarchy& hierarchy, const AssetSource& source);
// The same with the references collected already (collect_asset_refs(hierarchy)).
Outcome<AssetStore> resolve_assets(const Hierarchy& hierarchy, const std::vector<AssetRef>& refs,
                                   const AssetSource& source);

// render fragments: one fragment per member, each rendered on its own (fragments.hpp).
// Errors stay in the fragments; the stage itself never fails. With `kept`, the root's use
// of the fragment cache (fragment_cache.hpp), a member whose kept fragment was rendered
// from the same inputs is not rendered again; the fragments are the same either way.
// `as_text` (the static backend, whose files are text): members' scrape configs are
// handed on as their emitted text (ScrapeFragment::text), which the files splice in; the
// files' bytes are the same either way.
Outcome<Fragments> render_fragments(const Hierarchy& hierarchy, const AssetStore& assets,
                                    const Options& options, FragmentCache::Use* kept = nullptr,
                                    bool as_text = false);

// assemble: the config files the hierarchy needs, in order, from the fragments
// (consumed). The first file that includes a fragment with an error fails the stage
// ("rendering <secret>: <error>") and ends it: the files before it are kept. Problems:
// those of the fragments of the files assembled.
Outcome<ConfigTrees> assemble(Fragments fragments, const Hierarchy& hierarchy);
// The same for one file, whether or not the hierarchy needs it (tests and tools of other
// backends that translate the static trees).
Outcome<boost::json::value> assemble_file(Fragments fragments, const Hierarchy& hierarchy,
                                          ConfigFile file);

// build objects: the objects to apply, in order, from the hierarchy and its config
// files (consumed; each emitted as go-yaml text, gzipped above kGzipThreshold: in chunks,
// with `kept` those that did not change taken from the root's last encoding,
// config_text.hpp). Steps end before the Secret of a needed file that is missing (it
// failed to assemble). A generated name, label value or volume name the API server would
// refuse (names.hpp) fails the stage (invalid name, naming the root, each name, its limit
// and the longest root name that fits) with no steps at all.
Outcome<DesiredObjects> build_objects(const Hierarchy& hierarchy, const AssetStore& assets,
                                      ConfigTrees configs, const Options& options,
                                      FragmentCache::Use* kept = nullptr);

// plan apply: the apply engine's plan for root key `root`, each object with its content
// hash under `hash_annotation` (none when empty: the engine computes them). Never fails.
Outcome<runtime::ApplyPlan> plan_apply(DesiredObjects desired, std::string root,
                                       std::string_view hash_annotation);

// old objects: what the other backend (O) left of the root, found in `view`, and the plan
// that deletes it. A root switches backend by running both side by side: the plan of
// the effective backend creates its objects next to the old ones, and the old ones go
// only once every workload of the effective backend is ready (the controller runs
// `plan` then, never before). O's objects: with O = static, the config Secrets
// `<A>-config`, `<A>-logs-config`, `<A>-integrations-{deploy,ds}-config`, the Service
// `<A>-operated`, the DaemonSets `<A>-logs`, `<A>-integrations-ds`, the Deployment
// `<A>-integrations-deploy` and every StatefulSet labelled with the root's name and not
// as Alloy's; with O = alloy, every object labelled as the root's Alloy object. Always
// with the managed-by label and an ownerReference to the root's UID (a controller
// reference for workloads), and never what `desired` applies (the static integrations
// workloads of a hybrid Alloy root). `plan` deletes them workloads first, then Services,
// then Secrets, each with a UID precondition and background propagation. A root without
// a UID has none (nothing is deleted without an owner to scope by). A failed list fails
// the stage.
inline constexpr std::string_view kOldObjectsSuffix = "#old";  // root key of `plan`
struct OldObjects {
  Backend backend = Backend::static_mode;  // O
  std::vector<std::pair<Kind, k8s::ObjectKey>> objects;
  runtime::ApplyPlan plan;  // root key `<root>#old`
  bool empty() const { return objects.empty(); }
};
Outcome<OldObjects> find_old_objects(const GrafanaAgent& agent, Backend effective,
                                     const ClusterView& view, const runtime::ApplyPlan& desired);

// ---- the whole pipeline ---------------------------------------------------------------

// Counts for the GrafanaAgent's status.
struct HierarchySummary {
  std::size_t metrics_instances = 0;
  std::size_t service_monitors = 0;  // summed over instances (a shared one counts twice)
  std::size_t pod_monitors = 0;
  std::size_t probes = 0;
  std::size_t logs_instances = 0;
  std::size_t pod_logs = 0;
  std::size_t integrations = 0;
};
HierarchySummary summarize(const Hierarchy& h);

struct RootPlan {
  std::string root;  // "namespace/name"
  std::int64_t generation = 0;
  bool paused = false;
  // What to watch so that any change reconciles the root again: filled also when a
  // stage failed and when paused.
  runtime::RootDependencies dependencies;
  // Set once discovery succeeded.
  std::optional<HierarchySummary> summary;
  // Every stage's problems, in stage order.
  std::vector<Problem> problems;
  // The steps to run (up to a render failure); empty when paused or failed earlier.
  runtime::ApplyPlan apply;
  // Every workload the root should have (empty unless objects were built).
  std::vector<WorkloadRef> workloads;
  // The backend chosen (status.backend, condition Backend), when the stage ran.
  std::optional<BackendChoice> backend;
  // The other backend's objects still there (set with `backend`; after a failure, no
  // deletion plan).
  OldObjects old_objects;
  // With the Alloy backend: the AlloyTranslation condition (status, reason, message).
  std::optional<std::array<std::string, 3>> alloy_translation;
  std::optional<StageFailure> failure;

  // Whether `apply` is to run: not paused, and nothing failed before the objects were
  // built.
  bool applies() const;
};

struct PipelineInputs {
  const ClusterView& view;
  const AssetSource& assets;
  const Options& options;
  DecodeCache& decode_cache;
  std::string_view hash_annotation;         // plan apply; empty: no hashes
  FragmentCache* fragment_cache = nullptr;  // render fragments; null: render every member
};

RootPlan plan_root(const k8s::Object& root, const PipelineInputs& in);

// The same without a decode cache or hashes, over one view that is also the asset
// source (`render`, tests).
template <class View>
RootPlan plan_root(const k8s::Object& root, const View& view, const Options& options) {
  DecodeCache uncached(false);
  return plan_root(root, PipelineInputs{view, view, options, uncached, {}});
}

}  // namespace aop::agent
