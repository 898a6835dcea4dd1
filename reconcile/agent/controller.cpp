// The live Grafana Agent controller: caches and handlers (who gets reconciled when
// something changes), and the reconcile of one GrafanaAgent:
//
//   read     the root from its cache; the caches must show this root's last writes
//   compute  plan_root() (pipeline.hpp) on the compute pool over the live caches,
//            fetching referenced Secret/ConfigMap contents it did not have; record what
//            it read in the dependency index
//   apply    the plan through the apply engine
//   status   root_status() of what happened, written with its Events
#include "reconcile/agent/controller.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>

#include "k8s/informer_factory.hpp"
#include "k8s/timestamp.hpp"
#include "net/log.hpp"
#include "net/metrics.hpp"
#include "reconcile/agent/live_view.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/pipeline.hpp"
#include "reconcile/agent/root_events.hpp"
#include "reconcile/agent/root_status.hpp"
#include "reconcile/runtime/apply.hpp"
#include "reconcile/runtime/dependency_index.hpp"
#include "reconcile/runtime/object_cache.hpp"
#include "reconcile/runtime/on_pool.hpp"
#include "reconcile/runtime/status.hpp"

namespace aop::agent {

namespace asio = boost::asio;
namespace json = boost::json;
namespace log = net::log;
using runtime::GroupKind;
using runtime::ReconcileResult;

namespace {

// The controller's name (metrics label, queue name, logs).
const std::string& controller_name() {
  static const std::string name = "grafana-agent";
  return name;
}
// Planning passes per reconcile. Each pass GETs the referenced contents the previous one
// did not have; needing more than two means they keep changing while being read.
constexpr int kMaxPlanPasses = 3;
// How soon a root is looked at again while the owned caches still lag its own writes
// (the watch usually delivers them within milliseconds).
constexpr auto kCatchUpRetry = std::chrono::milliseconds(20);

constexpr std::array kMemberKinds = {
    Kind::metrics_instance, Kind::logs_instance, Kind::pod_logs, Kind::integration,
    Kind::service_monitor,  Kind::pod_monitor,   Kind::probe};
constexpr std::array kOwnedKinds = {Kind::secret, Kind::service, Kind::stateful_set,
                                    Kind::daemon_set, Kind::deployment};

GroupKind group_kind(Kind kind) {
  return GroupKind::of(gvk(kind));
}

GroupKind agent_group_kind() {
  return group_kind(Kind::grafana_agent);
}

k8s::ObjectKey split_key(const std::string& key) {
  const auto slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

std::string managed_by_selector() {
  return std::string(kManagedByKey) + "=" + std::string(kManagedByValue);
}

bool is_workload(Kind kind) {
  return kind == Kind::stateful_set || kind == Kind::daemon_set || kind == Kind::deployment;
}

// "5m3s".
std::string short_duration(std::chrono::seconds d) {
  const auto s = d.count();
  std::string out;
  if (s >= 3600) out += std::to_string(s / 3600) + "h";
  if (s >= 60) out += std::to_string(s / 60 % 60) + "m";
  return out + std::to_string(s % 60) + "s";
}

// What the root's status says of a switch in progress: the Backend condition it has, and
// how long it has been Switching (at `now`). From the cluster, not from memory: an
// operator restarted, or a new leader, picks up where the last one was.
SwitchProgress switch_progress(const k8s::Object& root, net::WallTime now) {
  SwitchProgress out;
  const auto conditions = root.at({"status", "conditions"});
  if (!conditions || !conditions->is_array()) return out;
  for (const auto& c : conditions->get_array()) {
    const auto* o = c.if_object();
    if (o == nullptr || o->if_contains("type") == nullptr || o->at("type") != "Backend") continue;
    auto text = [&](std::string_view k) {
      const auto* v = o->if_contains(k);
      return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    out.previous_reason = text("reason");
    out.previous_message = text("message");
    if (out.previous_reason != "Switching") break;
    const std::string since = text("lastTransitionTime");
    if (const auto t = k8s::parse_rfc3339(since)) {
      const auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - *t);
      out.waited = "since " + since + ", " + short_duration(std::max(waited, {})) + " ago";
    }
    break;
  }
  return out;
}

// What the read-and-compute step came to.
struct Planned {
  RootPlan plan;
  std::optional<std::string> read_error;  // reading referenced Secrets/ConfigMaps failed
};

// One planning pass, as the compute pool returns it.
struct PlanPass {
  RootPlan plan;
  bool missed = false;  // contents of referenced Secrets/ConfigMaps to read first
};

}  // namespace

// ---------------------------------------------------------------------------------------

struct AgentController::Impl {
  Impl(const runtime::ModuleContext& c, AgentModuleOptions o);

  bool selected(const k8s::Object& agent) const { return agent_selector.matches(agent.labels()); }
  void enqueue(const std::string& root) { controller->enqueue(root); }
  void register_handlers();
  void count(const std::string& key);
  void forget(const std::string& key);

  asio::awaitable<ReconcileResult> reconcile(std::string key);
  asio::awaitable<Planned> read_and_plan(const std::string& key, const k8s::ObjectPtr& root);
  std::vector<WorkloadState> workload_states(const RootPlan& plan,
                                             const runtime::ApplyReport* applied) const;
  asio::awaitable<ReconcileResult> write_status(const std::string& key, const k8s::ObjectPtr& root,
                                                const RootPlan& plan, RootStatus status);

  runtime::ModuleContext ctx;
  AgentModuleOptions options;
  k8s::LabelSelector agent_selector;

  k8s::KindCache* agents = nullptr;
  LiveCaches caches;
  std::map<Kind, k8s::KindCache*> owned;
  std::vector<k8s::KindCache*> all_caches;  // for readiness
  runtime::KindCacheView object_cache;      // the owned kinds, as the apply engine reads them
  LiveClusterView view{caches};
  AssetContents contents;
  DecodeCache decode_cache;
  FragmentCache fragment_cache{options.incremental_render};
  runtime::DependencyIndex index;
  std::unique_ptr<runtime::ApplyEngine> engine;
  std::unique_ptr<runtime::StatusWriter> status;
  std::function<net::WallTime()> wall_now;  // the status writer's (lastTransitionTime)
  std::unique_ptr<RootEvents> events;
  std::unique_ptr<runtime::Controller> controller;

  mutable std::mutex roots_mutex;  // owns reconciles_by_root
  std::map<std::string, std::uint64_t> reconciles_by_root;
  std::atomic<std::uint64_t> reconciles{0};

  // Planning (discovery, rendering, gzip, hashing) runs here, never on the io threads,
  // so watch events and API answers do not wait behind renders. Declared last: it joins
  // before the members its work reads are destroyed. As many threads as can plan at
  // once: one per worker, at most one per core.
  asio::thread_pool compute{static_cast<std::size_t>(std::clamp(
      ctx.workers, 1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))))};
};

AgentController::Impl::Impl(const runtime::ModuleContext& c, AgentModuleOptions o)
    : ctx(c), options(std::move(o)) {
  auto parsed = k8s::parse_label_selector_string(options.agent_selector);
  if (!parsed) {
    throw std::invalid_argument("--agent-selector: " + parsed.error().message);
  }
  agent_selector = std::move(*parsed);
  if (ctx.informers == nullptr || ctx.client == nullptr) {
    throw std::invalid_argument("the Grafana Agent controller needs an API client and informers");
  }

  auto& factory = *ctx.informers;
  auto cache = [&](Kind kind, bool namespaced, bool metadata_only, std::string selector) {
    k8s::CacheSpec spec;
    spec.gvk = gvk(kind);
    spec.namespaced = namespaced;
    spec.transform.metadata_only = metadata_only;
    spec.label_selector = std::move(selector);
    k8s::KindCache* kc = &factory.cache(spec);
    all_caches.push_back(kc);
    return kc;
  };
  // --agent-selector filters on our side: a server-side filter would make an agent that
  // is relabelled out of the selector vanish without the old labels being seen.
  agents = cache(Kind::grafana_agent, true, false, "");
  // Discovery selects members by label (instances by matchLabels, monitors mostly by
  // `In`): indexed, a selector reads its candidates instead of every object of the kind.
  for (const Kind k : kMemberKinds) {
    caches.members[k] = cache(k, true, false, "");
    caches.members[k]->add_label_index();
  }
  caches.namespaces = cache(Kind::namespace_, false, true, "");
  caches.secrets = cache(Kind::secret, true, true, "");
  caches.config_maps = cache(Kind::config_map, true, true, "");
  // Owned kinds: only the objects this operator manages. The apply engine needs no more
  // than metadata (the hash annotation) of Secrets; Services carry clusterIP over and
  // workloads report readiness, so those are cached whole.
  for (const Kind k : kOwnedKinds) {
    k8s::KindCache* kc = cache(k, true, k == Kind::secret, managed_by_selector());
    kc->add_index(std::string(runtime::kOwnerUidIndex), runtime::owner_uid_index());
    owned[k] = kc;
    if (k != Kind::secret) caches.workloads[k] = kc;
    object_cache.add(gvk(k), *kc);
  }

  auto& fragments = net::metrics::registry().counter(
      "agent_operator_render_fragments_total",
      "Member fragments (a ServiceMonitor's, PodMonitor's, Probe's or PodLogs' part of a "
      "configuration) a render needed, by where they came from: reused from the root's "
      "last render, shared from another root's, or rendered.",
      {"result"});
  fragment_cache.set_observer(
      [reused = &fragments.with({"reused"}), shared = &fragments.with({"shared"}),
       rendered = &fragments.with({"rendered"})](const FragmentCache::UseCounts& c) {
        reused->inc(static_cast<double>(c.reused));
        shared->inc(static_cast<double>(c.shared));
        rendered->inc(static_cast<double>(c.rendered));
      });

  runtime::ApplyOptions apply;
  apply.controller = controller_name();
  apply.managed_by_label = std::string(kManagedByKey);
  apply.managed_by_value = std::string(kManagedByValue);
  apply.may_write = ctx.may_write;
  engine = std::make_unique<runtime::ApplyEngine>(*ctx.client, object_cache, std::move(apply),
                                                  ctx.time());

  runtime::StatusWriterOptions so;
  so.may_write = ctx.may_write;
  wall_now = so.now;
  status = std::make_unique<runtime::StatusWriter>(*ctx.client, std::move(so));
  events = std::make_unique<RootEvents>(ctx.events, controller_name());

  runtime::ControllerOptions co;
  co.name = controller_name();
  co.workers = ctx.workers;
  co.resync_period = ctx.resync_period;
  co.progress_period = ctx.progress_period;
  co.queue = ctx.queue;
  co.queue.name = controller_name();
  controller = std::make_unique<runtime::Controller>(
      ctx.executor, std::move(co), [this](std::string key) { return reconcile(std::move(key)); },
      [this] {
        std::vector<std::string> keys;
        for (const auto& a : agents->list()) {
          if (a && selected(*a)) keys.push_back(a->key().str());
        }
        return keys;
      },
      ctx.time());
  register_handlers();
}

void AgentController::Impl::register_handlers() {
  auto enqueue_fn = [this](const std::string& root) { enqueue(root); };

  // The roots. A status write (ours) changes neither spec nor metadata: no reconcile.
  k8s::EventHandler on_agent;
  on_agent.on_add = [this](const k8s::ObjectPtr& o) {
    if (o && selected(*o)) enqueue(o->key().str());
  };
  on_agent.on_update = [this](const k8s::ObjectPtr& old_obj, const k8s::ObjectPtr& new_obj) {
    if (!old_obj || !new_obj) return;
    if (!selected(*old_obj) && !selected(*new_obj)) return;
    const bool changed =
        old_obj->uid() != new_obj->uid() || old_obj->generation() != new_obj->generation() ||
        old_obj->being_deleted() != new_obj->being_deleted() ||
        old_obj->at({"spec"}) != new_obj->at({"spec"}) ||
        old_obj->at({"metadata", "labels"}) != new_obj->at({"metadata", "labels"}) ||
        old_obj->at({"metadata", "annotations"}) != new_obj->at({"metadata", "annotations"});
    if (changed) enqueue(new_obj->key().str());
  };
  // Always: a deleted (or filtered-out) root forgets what it watched.
  on_agent.on_delete = [this](const k8s::ObjectPtr& o) {
    if (!o) return;
    decode_cache.forget(o->uid());
    fragment_cache.forget(o->uid());
    enqueue(o->key().str());
  };
  agents->add_handler(on_agent);

  // Members and referenced objects: exactly the roots whose recorded reads they fall in.
  // A deleted member's decoded form goes with it.
  k8s::EventHandler forget_decoded;
  forget_decoded.on_delete = [this](const k8s::ObjectPtr& o) {
    if (o) decode_cache.forget(o->uid());
  };
  for (const Kind k : kMemberKinds) {
    caches.members[k]->add_handler(
        runtime::dependents_event_handler(index, group_kind(k), enqueue_fn));
    caches.members[k]->add_handler(forget_decoded);
  }
  caches.namespaces->add_handler(runtime::namespace_event_handler(index, enqueue_fn));
  for (const Kind k : {Kind::secret, Kind::config_map}) {
    k8s::KindCache* kc = caches.of(k);
    kc->add_handler(runtime::dependents_event_handler(index, group_kind(k), enqueue_fn));
    k8s::EventHandler drop;
    drop.on_delete = [this, k](const k8s::ObjectPtr& o) {
      if (!o) return;
      contents.forget(AssetObject{k == Kind::secret ? AssetKind::secret : AssetKind::config_map,
                                  std::string(o->ns()), std::string(o->name())});
    };
    kc->add_handler(drop);
  }

  // Owned objects: their owner. Updates include workloads' readiness and edits by others
  // (drift); deletions by hand are repaired. The echoes of our own writes are dropped
  // (the reconcile that wrote knew what it wrote: the Ready condition of a workload it
  // has just written is read from the API server's answer), so a root is reconciled once
  // per change, not once more by its own writes. Adds by others matter only for
  // workloads (their readiness).
  for (const Kind k : kOwnedKinds) {
    // Secrets carry a non-controller owner reference, as upstream writes them.
    k8s::EventHandler h = runtime::owner_event_handler(agent_group_kind(), true, k != Kind::secret,
                                                       enqueue_fn, *engine, group_kind(k));
    if (!is_workload(k)) h.on_add = nullptr;
    owned[k]->add_handler(h);
  }
}

void AgentController::Impl::count(const std::string& key) {
  ++reconciles;
  const std::lock_guard lock(roots_mutex);
  ++reconciles_by_root[key];
}

void AgentController::Impl::forget(const std::string& key) {
  index.remove(key);
  contents.release(key);
  events->forget(key);
}

asio::awaitable<ReconcileResult> AgentController::Impl::reconcile(std::string key) {
  count(key);
  // Read.
  const k8s::ObjectPtr root = agents->get(split_key(key));
  if (!root || root->being_deleted() || !selected(*root)) {
    // Gone: its objects go with it (ownerReferences). Filtered out: left alone.
    forget(key);
    co_return ReconcileResult::ok();
  }
  // Our own last writes must be visible in the owned caches before deciding again, or a
  // reconcile triggered by those very writes would create what exists (409 AlreadyExists)
  // or update from a stale resourceVersion (409 Conflict).
  if (!engine->caches_caught_up(key) ||
      !engine->caches_caught_up(key + std::string(kOldObjectsSuffix))) {
    co_return ReconcileResult::requeue(kCatchUpRetry);
  }

  // Compute.
  Planned planned = co_await read_and_plan(key, root);
  RootPlan& plan = planned.plan;

  // Apply.
  std::optional<runtime::ApplyReport> applied;
  if (!planned.read_error && plan.applies()) {
    applied = co_await engine->apply(plan.apply);
    events->applied(*root, *applied);
    // Not leading (or shutting down): nothing more to write, and nothing to report.
    if (applied->write_blocked) co_return ReconcileResult::ok();
    add_ownership_problems(plan, *applied);
  }

  const runtime::ApplyReport* report = applied ? &*applied : nullptr;
  const std::vector<WorkloadState> workloads = workload_states(plan, report);

  // Switch: the other backend's objects go once every workload of this one is ready
  // (readiness as the Ready condition judges it), never before.
  std::optional<runtime::ApplyReport> retired;
  if (applied && applied->ok() && !plan.old_objects.plan.steps.empty() &&
      readiness(workloads).ready) {
    retired = co_await engine->apply(plan.old_objects.plan);
    events->applied(*root, *retired);
    if (retired->write_blocked) co_return ReconcileResult::ok();
  }

  // Status.
  SwitchProgress progress = switch_progress(*root, wall_now());
  progress.retired = retired ? &*retired : nullptr;
  RootStatus status = root_status(plan, report, workloads, planned.read_error, progress);
  for (auto& e : status.events) events->normal(*root, std::move(e.reason), std::move(e.message));
  co_return co_await write_status(key, root, plan, std::move(status));
}

asio::awaitable<Planned> AgentController::Impl::read_and_plan(const std::string& key,
                                                              const k8s::ObjectPtr& root) {
  Planned out;
  // Events from here to index.set() are matched against the dependencies this plan
  // records, too (a member created while it renders is not lost).
  auto window = index.open_read_window();
  // Contents of referenced Secrets/ConfigMaps not at hand are read and the plan made
  // again (live_view.hpp).
  for (int pass = 1;; ++pass) {
    std::function<PlanPass()> make_plan = [&] {
      PlanPass p;
      PlanningAssets assets(caches, contents);
      p.plan = plan_root(*root, PipelineInputs{view, assets, options.agent, decode_cache,
                                               engine->options().hash_annotation, &fragment_cache});
      p.missed = assets.missed();
      return p;
    };
    PlanPass pass_result = co_await runtime::on_pool<PlanPass>(compute, std::move(make_plan));
    out.plan = std::move(pass_result.plan);
    if (!pass_result.missed) break;
    if (pass >= kMaxPlanPasses) {
      out.read_error = "referenced Secrets or ConfigMaps changed while being read; will retry";
      break;
    }
    auto fetched = co_await contents.fetch(*ctx.client, caches, out.plan.dependencies.objects);
    if (!fetched) {
      out.read_error = fetched.error().message;
      break;
    }
  }
  // Watch what was read, also after a failure and while paused: the fix of a problem is
  // a change of something read.
  if (index.set(key, out.plan.dependencies, std::move(window)).missed_event) enqueue(key);
  std::set<AssetObject> used;
  for (const auto& d : out.plan.dependencies.objects) {
    if (auto id = asset_object(d)) used.insert(std::move(*id));
  }
  contents.retain(key, std::move(used));
  co_return out;
}

std::vector<WorkloadState> AgentController::Impl::workload_states(
    const RootPlan& plan, const runtime::ApplyReport* applied) const {
  std::vector<WorkloadState> out;
  out.reserve(plan.workloads.size());
  for (const auto& w : plan.workloads) {
    const GroupKind gk = group_kind(w.kind);
    const runtime::ObjectOutcome* o = applied != nullptr ? applied->find(gk, w.key) : nullptr;
    // What this reconcile wrote is fresher than the cache (whose echo of the write
    // reconciles nothing); otherwise the cache.
    const k8s::ObjectPtr live = o != nullptr && o->written.is_object()
                                    ? k8s::Object::from_json(o->written)
                                    : object_cache.get(gk, w.key);
    WorkloadState s = workload_state(w, live.get());
    s.apply_failed = o != nullptr && o->result == runtime::ObjectResult::failed;
    out.push_back(std::move(s));
  }
  return out;
}

asio::awaitable<ReconcileResult> AgentController::Impl::write_status(const std::string& key,
                                                                     const k8s::ObjectPtr& root,
                                                                     const RootPlan& plan,
                                                                     RootStatus status) {
  // Events and the invalid-objects gauge first: whoever sees the new status sees them
  // agree with it.
  events->report(key, *root, status.problems_known ? &plan.problems : nullptr, status.error);
  auto written = co_await this->status->update(gvk(Kind::grafana_agent), root, status.update);
  if (written) co_return status.result;
  // The status must tell what happened, also after an error (a terminal one included, which
  // would otherwise never be written): a failed write is retried.
  std::string message =
      "writing the status of GrafanaAgent " + key + ": " + written.error().describe();
  log::warn("status update failed", {{"controller", controller_name()}, {"error", message}});
  if (status.error) message = status.error->message + "; " + message;
  if (written.error().server_failure()) co_return ReconcileResult::api_failed(std::move(message));
  co_return ReconcileResult::failed(std::move(message));
}

// ---------------------------------------------------------------------------------------

AgentController::AgentController(const runtime::ModuleContext& ctx, AgentModuleOptions options)
    : impl_(std::make_unique<Impl>(ctx, std::move(options))) {}

AgentController::~AgentController() {
  if (impl_->controller) impl_->controller->shut_down();
}

const std::string& AgentController::name() const {
  return controller_name();
}

std::string AgentController::not_ready_reason() const {
  std::set<std::string> waiting;
  for (const auto* c : impl_->all_caches) {
    if (!c->has_synced()) waiting.insert(c->spec().gvk.kind);
  }
  if (waiting.empty()) return {};
  std::string why = "waiting for caches:";
  for (const auto& k : waiting) why += " " + k;
  return why;
}

void AgentController::start_reconciling() {
  impl_->controller->start();
}

void AgentController::stop_reconciling() {
  impl_->controller->shut_down();
}

asio::awaitable<bool> AgentController::stop(runtime::Duration deadline) {
  co_return co_await impl_->controller->stop(deadline);
}

runtime::Controller& AgentController::controller() {
  return *impl_->controller;
}

std::uint64_t AgentController::reconciles() const {
  return impl_->reconciles.load();
}

std::uint64_t AgentController::reconciles(const std::string& root) const {
  const std::lock_guard lock(impl_->roots_mutex);
  const auto it = impl_->reconciles_by_root.find(root);
  return it == impl_->reconciles_by_root.end() ? 0 : it->second;
}

bool AgentController::idle() {
  auto& q = impl_->controller->queue();
  return q.len() == 0 && q.processing() == 0 && q.waiting() == 0;
}

bool AgentController::caches_caught_up(const std::string& root) {
  return impl_->engine->caches_caught_up(root);
}

std::string AgentController::cached_version(Kind kind, const k8s::ObjectKey& key) const {
  const k8s::KindCache* kc = kind == Kind::grafana_agent ? impl_->agents : impl_->caches.of(kind);
  if (kc == nullptr) return {};
  const auto o = kc->get(key);
  return o ? std::string(o->resource_version()) : std::string();
}

std::uint64_t AgentController::own_write_echoes() const {
  return impl_->engine->echoes();
}

std::uint64_t AgentController::asset_fetches() const {
  return impl_->contents.fetches();
}

std::size_t AgentController::asset_contents() const {
  return impl_->contents.size();
}

std::uint64_t AgentController::decodes() const {
  return impl_->decode_cache.misses();
}

std::size_t AgentController::invalid_objects(Kind kind) const {
  return impl_->events->invalid_objects(kind);
}

std::unique_ptr<runtime::ControllerModule> make_agent_module(const runtime::ModuleContext& ctx,
                                                             AgentModuleOptions options) {
  return std::make_unique<AgentController>(ctx, std::move(options));
}

}  // namespace aop::agent
