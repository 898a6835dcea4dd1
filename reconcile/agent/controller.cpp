// The live Grafana Agent controller: caches and handlers (who gets reconciled when
// something changes), and the reconcile of one GrafanaAgent: plan_root() over the live
// caches, the plan's steps in order through the apply engine, status and Events.
#include "reconcile/agent/controller.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "k8s/informer_factory.hpp"
#include "net/log.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/live_view.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/root.hpp"
#include "reconcile/runtime/apply.hpp"
#include "reconcile/runtime/dependency_index.hpp"
#include "reconcile/runtime/object_cache.hpp"
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
// An object of the root is being deleted (to be recreated): look again after this.
constexpr auto kWaitingRecheck = std::chrono::seconds(1);
// Planning passes per reconcile. Each pass GETs the referenced contents the previous one
// did not have; needing more than two means they keep changing while being read.
constexpr int kMaxPlanPasses = 3;
// How soon a root is looked at again while the owned caches still lag its own writes
// (the watch usually delivers them within milliseconds).
constexpr auto kCatchUpRetry = std::chrono::milliseconds(20);
// Problems quoted in the GrafanaAgent's summary Event (the rest: status.problems).
constexpr std::size_t kProblemsInSummary = 3;
// Workloads named in the Ready condition's message.
constexpr std::size_t kWorkloadsInMessage = 5;

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

std::optional<std::int64_t> int_at(const k8s::Object& o,
                                   std::initializer_list<std::string_view> path) {
  const auto v = o.at(path);
  if (!v || !v->is_number()) return std::nullopt;
  return v->to_number<std::int64_t>();
}

std::string severity_name(Severity s) {
  return s == Severity::warning ? "Warning" : "Error";
}

// Runs `fn` on `pool` and resumes the awaiting coroutine on its own executor with the
// result (or the exception `fn` threw): CPU-heavy work off the io threads.
template <class R>
asio::awaitable<R> on_pool(asio::thread_pool& pool, std::function<R()> fn) {
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(std::exception_ptr, R)>(
      [&pool](auto handler, std::function<R()> f) {
        auto work = asio::make_work_guard(asio::get_associated_executor(handler));
        asio::post(pool, [handler = std::move(handler), work = std::move(work),
                          f = std::move(f)]() mutable {
          std::exception_ptr error;
          R result{};
          try {
            result = f();
          } catch (...) {
            error = std::current_exception();
          }
          const auto ex = work.get_executor();
          asio::dispatch(
              ex, [handler = std::move(handler), error, result = std::move(result)]() mutable {
                std::move(handler)(error, std::move(result));
              });
        });
      },
      asio::use_awaitable, std::move(fn));
}

// The owned kinds' caches as the apply engine reads them.
class OwnedCaches final : public runtime::ObjectCache {
 public:
  void add(Kind kind, k8s::KindCache* cache) { caches_[group_kind(kind)] = cache; }

  k8s::ObjectPtr get(const GroupKind& kind, const k8s::ObjectKey& key) const override {
    const auto* c = find(kind);
    return c == nullptr ? nullptr : c->get(key);
  }
  std::vector<k8s::ObjectPtr> list(const GroupKind& kind, std::string_view ns) const override {
    const auto* c = find(kind);
    return c == nullptr ? std::vector<k8s::ObjectPtr>{} : c->list(ns);
  }
  std::vector<k8s::ObjectPtr> owned_by(const GroupKind& kind,
                                       std::string_view owner_uid) const override {
    const auto* c = find(kind);
    return c == nullptr ? std::vector<k8s::ObjectPtr>{}
                        : c->by_index(runtime::kOwnerUidIndex, owner_uid);
  }
  bool has(const GroupKind& kind) const override { return find(kind) != nullptr; }

 private:
  const k8s::KindCache* find(const GroupKind& kind) const {
    const auto it = caches_.find(kind);
    return it == caches_.end() ? nullptr : it->second;
  }
  std::map<GroupKind, k8s::KindCache*> caches_;  // filled before the caches start
};

// What running a plan's steps came to.
struct StepsOutcome {
  std::string error;           // the first failure ("" = none)
  bool write_blocked = false;  // not leading: nothing (more) was written
  bool waiting = false;        // an object is being deleted before it can be recreated
  int writes = 0;
  // The API server's answers to the creates and updates of workloads, by kind and key:
  // fresher than the cache, which may not show them yet.
  std::map<std::pair<Kind, k8s::ObjectKey>, json::object> written_workloads;
};

// One planning pass, as the compute pool returns it.
struct Planned {
  RootPlan plan;
  bool missed = false;              // contents of referenced Secrets/ConfigMaps to read first
  std::vector<std::string> hashes;  // per step: content hash of an applied object, else ""
};

struct Readiness {
  bool ready = false;
  std::string reason;
  std::string message;
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
  asio::awaitable<StepsOutcome> apply_steps(const std::string& key, const std::vector<Step>& steps,
                                            const std::vector<std::string>& hashes);
  Readiness readiness(const DesiredState& desired, const StepsOutcome& applied) const;
  asio::awaitable<std::string> write_status(const k8s::ObjectPtr& agent,
                                            const runtime::StatusUpdate& update);
  void report_problems(const std::string& key, const k8s::Object& agent,
                       const std::vector<Problem>& problems);
  void report_error(const std::string& key, const k8s::Object& agent, const std::string& reason,
                    const std::string& message);
  std::optional<k8s::EventSubject> subject_of(Kind kind, const k8s::ObjectKey& key) const;

  runtime::ModuleContext ctx;
  AgentModuleOptions options;
  k8s::LabelSelector agent_selector;

  k8s::KindCache* agents = nullptr;
  LiveCaches caches;
  std::map<Kind, k8s::KindCache*> owned;
  std::vector<k8s::KindCache*> all_caches;  // for readiness
  OwnedCaches object_cache;
  LiveClusterView view{caches};
  AssetContents contents;
  runtime::DependencyIndex index;
  std::unique_ptr<runtime::ApplyEngine> engine;
  std::unique_ptr<runtime::StatusWriter> status;
  std::unique_ptr<runtime::Controller> controller;

  // What was last reported per root, so Events follow changes instead of every resync.
  struct Reported {
    std::set<std::string> problems;  // Problem::str() of the problems reported
    std::string error;               // reason + message of the error reported
  };
  mutable std::mutex roots_mutex;  // owns reported and reconciles_by_root
  std::map<std::string, Reported> reported;
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
  for (const Kind k : kMemberKinds) caches.members[k] = cache(k, true, false, "");
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
    object_cache.add(k, kc);
  }

  runtime::ApplyOptions apply;
  apply.controller = controller_name();
  apply.managed_by_label = std::string(kManagedByKey);
  apply.managed_by_value = std::string(kManagedByValue);
  apply.may_write = ctx.may_write;
  engine = std::make_unique<runtime::ApplyEngine>(*ctx.client, object_cache, std::move(apply));

  runtime::StatusWriterOptions so;
  so.may_write = ctx.may_write;
  status = std::make_unique<runtime::StatusWriter>(*ctx.client, std::move(so));

  runtime::ControllerOptions co;
  co.name = controller_name();
  co.workers = ctx.workers;
  co.resync_period = ctx.resync_period;
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
      });
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
    if (o) enqueue(o->key().str());
  };
  agents->add_handler(on_agent);

  // Members and referenced objects: exactly the roots whose recorded reads they fall in.
  for (const Kind k : kMemberKinds) {
    caches.members[k]->add_handler(
        runtime::dependents_event_handler(index, group_kind(k), enqueue_fn));
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
    // Secrets carry a non-controller owner reference (spec 3.3, 3.4).
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
  const std::lock_guard lock(roots_mutex);
  reported.erase(key);
}

asio::awaitable<ReconcileResult> AgentController::Impl::reconcile(std::string key) {
  count(key);
  const k8s::ObjectPtr obj = agents->get(split_key(key));
  if (!obj || obj->being_deleted() || !selected(*obj)) {
    // Gone: its objects go with it (ownerReferences). Filtered out: left alone (5).
    forget(key);
    co_return ReconcileResult::ok();
  }
  // Our own last writes must be visible in the owned caches before deciding again, or a
  // reconcile triggered by those very writes would create what exists (409 AlreadyExists)
  // or update from a stale resourceVersion (409 Conflict).
  if (!engine->caches_caught_up(key)) co_return ReconcileResult::requeue(kCatchUpRetry);
  const std::int64_t generation = obj->generation();
  auto agent = decode_grafana_agent(obj->to_json());
  if (!agent) {
    index.remove(key);
    contents.release(key);
    const std::string message = "GrafanaAgent " + key + ": " + agent.error().message;
    runtime::StatusUpdate su;
    su.conditions.push_back({"Reconciled", "False", "InvalidSpec", message, generation});
    su.fields["observedGeneration"] = generation;
    (void)co_await write_status(obj, su);
    report_error(key, *obj, "InvalidSpec", message);
    // Only an edit of the agent can fix it, and that is an event.
    co_return ReconcileResult::terminal_error(message);
  }

  // Events from here to index.set() are matched against the dependencies this plan
  // records, too (a member created while it renders is not lost).
  auto window = index.open_read_window();
  // Plan; contents of referenced Secrets/ConfigMaps not at hand are read and the plan
  // made again (live_view.hpp).
  RootPlan plan;
  std::vector<std::string> hashes;  // the apply engine's content hash of each step's object
  std::optional<std::string> read_error;
  for (int pass = 1;; ++pass) {
    std::function<Planned()> make_plan = [&] {
      Planned p;
      PlanningAssets assets(caches, contents);
      p.plan = plan_root(*agent, view, assets, options.agent);
      p.missed = assets.missed();
      if (!p.missed) {
        for (const auto& step : p.plan.desired.steps) {
          p.hashes.push_back(step.action == Step::Action::apply ? engine->content_hash(step.object)
                                                                : std::string());
        }
      }
      return p;
    };
    Planned planned = co_await on_pool<Planned>(compute, std::move(make_plan));
    plan = std::move(planned.plan);
    hashes = std::move(planned.hashes);
    if (!planned.missed) break;
    if (pass >= kMaxPlanPasses) {
      read_error = "referenced Secrets or ConfigMaps changed while being read; will retry";
      break;
    }
    auto fetched = co_await contents.fetch(*ctx.client, caches, plan.dependencies.objects);
    if (!fetched) {
      read_error = fetched.error().message;
      break;
    }
  }
  // Watch what was read, also after a failure (6.8) and while paused.
  if (index.set(key, index_dependencies(plan.dependencies), std::move(window)).missed_event) {
    enqueue(key);
  }
  {
    std::set<AssetObject> used;
    for (const auto& d : plan.dependencies.objects) {
      used.insert(AssetObject{d.kind == Kind::secret ? AssetKind::secret : AssetKind::config_map,
                              d.key.ns, d.key.name});
    }
    contents.retain(key, std::move(used));
  }

  runtime::StatusUpdate su;
  su.fields["observedGeneration"] = generation;
  if (plan.paused) {
    su.conditions.push_back({"Reconciled", "False", "Paused",
                             "spec.paused is true: the operator creates, updates and deletes "
                             "nothing for this agent until it is unpaused",
                             generation});
    const std::string status_error = co_await write_status(obj, su);
    if (!status_error.empty()) co_return ReconcileResult::failed(status_error);
    co_return ReconcileResult::ok();
  }

  // Steps run unless nothing may be touched (discovery or asset failure, 3.12).
  StepsOutcome applied;
  const bool discovered = plan.failed != FailedStage::discovery;
  const bool run_steps =
      !read_error && (plan.failed == FailedStage::none || plan.failed == FailedStage::render);
  if (run_steps) {
    applied = co_await apply_steps(key, plan.desired.steps, hashes);
    // Not leading (or shutting down): nothing more to write, and nothing to report.
    if (applied.write_blocked) co_return ReconcileResult::ok();
  }

  // The first error, in the order of 3.1.
  std::string reason;
  std::string error;
  if (read_error) {
    reason = "AssetReadFailed";
    error = *read_error;
  } else if (plan.failed == FailedStage::discovery) {
    reason = "DiscoveryFailed";
    error = plan.error ? plan.error->message : "discovery failed";
  } else if (plan.failed == FailedStage::assets) {
    reason = "AssetResolutionFailed";
    error = plan.error ? plan.error->message : "resolving Secrets and ConfigMaps failed";
  } else if (plan.failed == FailedStage::names) {
    reason = "InvalidName";
    error = plan.error ? plan.error->message : "generated names would be refused";
  } else if (!applied.error.empty()) {
    reason = "ApplyFailed";
    error = applied.error;
  } else if (plan.failed == FailedStage::render) {
    reason = "RenderFailed";
    error = plan.error ? plan.error->message : "rendering failed";
  }

  if (error.empty()) {
    std::string message = "applied " + std::to_string(plan.desired.steps.size()) + " steps";
    if (!plan.problems.empty()) {
      message += "; " + std::to_string(plan.problems.size()) +
                 " member(s) skipped or suspect (see status.problems and Events)";
    }
    su.conditions.push_back({"Reconciled", "True", "Reconciled", message, generation});
    const Readiness r = readiness(plan.desired, applied);
    su.conditions.push_back({"Ready", r.ready ? "True" : "False", r.reason, r.message, generation});
  } else {
    su.conditions.push_back({"Reconciled", "False", reason, error, generation});
  }
  if (discovered) {
    const HierarchySummary& s = plan.summary;
    su.fields["metricsInstances"] = s.metrics_instances;
    su.fields["serviceMonitors"] = s.service_monitors;
    su.fields["podMonitors"] = s.pod_monitors;
    su.fields["probes"] = s.probes;
    su.fields["logsInstances"] = s.logs_instances;
    su.fields["podLogs"] = s.pod_logs;
    su.fields["integrations"] = s.integrations;
    json::array problems;
    for (const auto& p : plan.problems) {
      if (problems.size() >= kMaxStatusProblems) break;
      json::object e{{"kind", kind_name(p.kind)},
                     {"namespace", p.object.ns},
                     {"name", p.object.name},
                     {"message", p.message},
                     {"severity", severity_name(p.severity)}};
      if (!p.field.empty()) e["field"] = p.field;
      problems.push_back(std::move(e));
    }
    su.fields["problems"] = std::move(problems);
    report_problems(key, *obj, plan.problems);
  }
  const std::string status_error = co_await write_status(obj, su);

  if (!error.empty()) {
    report_error(key, *obj, reason, error);
    // Only an edit of the agent (or of the operator's flags) changes generated names.
    if (plan.failed == FailedStage::names) co_return ReconcileResult::terminal_error(error);
    co_return ReconcileResult::failed(error);
  }
  {
    const std::lock_guard lock(roots_mutex);
    reported[key].error.clear();
  }
  if (!status_error.empty()) co_return ReconcileResult::failed(status_error);
  if (applied.waiting) co_return ReconcileResult::requeue(kWaitingRecheck);
  co_return ReconcileResult::ok();
}

asio::awaitable<StepsOutcome> AgentController::Impl::apply_steps(
    const std::string& key, const std::vector<Step>& steps,
    const std::vector<std::string>& hashes) {
  StepsOutcome out;
  // Returns false when the steps must stop.
  auto absorb = [&out](runtime::ApplyReport report) {
    out.writes += report.writes();
    out.waiting = out.waiting || report.waiting;
    for (auto& w : report.written) {
      auto* o = w.if_object();
      const auto gvk = o != nullptr ? runtime::gvk_of(*o) : std::nullopt;
      if (!gvk) continue;
      std::optional<Kind> kind;
      for (const Kind k : {Kind::stateful_set, Kind::daemon_set, Kind::deployment}) {
        if (GroupKind::of(*gvk) == group_kind(k)) kind = k;
      }
      if (!kind) continue;
      const auto* md = o->if_contains("metadata");
      if (md == nullptr || !md->is_object()) continue;
      const auto* ns = md->get_object().if_contains("namespace");
      const auto* name = md->get_object().if_contains("name");
      if (ns == nullptr || name == nullptr || !ns->is_string() || !name->is_string()) continue;
      k8s::ObjectKey key{std::string(ns->get_string()), std::string(name->get_string())};
      out.written_workloads.insert_or_assign({*kind, std::move(key)}, std::move(*o));
    }
    if (report.write_blocked) {
      out.write_blocked = true;
      return false;
    }
    if (!report.errors.empty()) {
      out.error = report.errors.front();
      return false;
    }
    return true;
  };
  std::size_t i = 0;
  while (i < steps.size()) {
    const Step& step = steps[i];
    switch (step.action) {
      case Step::Action::apply: {
        // Consecutive applies go to the engine together (same order, same stop-at-first-
        // error rule).
        runtime::ApplyRequest req;
        req.root = key;
        while (i < steps.size() && steps[i].action == Step::Action::apply) {
          req.desired.push_back(steps[i].object);
          if (i < hashes.size()) req.hashes.push_back(hashes[i]);
          ++i;
        }
        runtime::ApplyReport report = co_await engine->apply(std::move(req));
        if (!absorb(std::move(report))) co_return out;
        break;
      }
      case Step::Action::delete_if_managed: {
        ++i;
        auto r = co_await engine->remove(gvk(step.kind), step.key);
        if (!r) {
          if (r.error().reason == "WritesDisabled") {
            out.write_blocked = true;
          } else {
            out.error = std::string(kind_name(step.kind)) + " " + step.key.str() +
                        ": delete: " + r.error().describe();
          }
          co_return out;
        }
        break;
      }
      case Step::Action::prune: {
        ++i;
        const PruneRule rule = step.prune;
        runtime::ApplyRequest req;
        req.root = key;
        runtime::PruneScope scope;
        scope.kinds = {gvk(rule.kind)};
        scope.owner_uid = rule.owner_uid;
        scope.namespaces = {rule.ns};
        // Scoped per 6.7: this agent's namespace, controlled by its UID, carrying the
        // rule's labels, not generated in this pass.
        scope.owned = [rule](const k8s::Object& o) {
          for (const auto& [k, v] : rule.match_labels) {
            if (o.label(k) != std::optional<std::string_view>(v)) return false;
          }
          const auto refs = o.owner_references();
          const bool controlled = std::any_of(refs.begin(), refs.end(), [&](const auto& ref) {
            return ref.controller && ref.uid == rule.owner_uid;
          });
          return controlled &&
                 std::find(rule.keep.begin(), rule.keep.end(), o.name()) == rule.keep.end();
        };
        req.prune = std::move(scope);
        if (rule.owner_uid.empty()) break;  // never prune without an owner to scope by
        runtime::ApplyReport report = co_await engine->apply(std::move(req));
        if (!absorb(std::move(report))) co_return out;
        break;
      }
    }
  }
  co_return out;
}

Readiness AgentController::Impl::readiness(const DesiredState& desired,
                                           const StepsOutcome& applied) const {
  std::size_t total = 0;
  std::size_t ready = 0;
  std::vector<std::string> waiting;
  for (const auto& step : desired.steps) {
    if (step.action != Step::Action::apply || !is_workload(step.kind)) continue;
    ++total;
    const std::string what = std::string(kind_name(step.kind)) + " " + step.key.str();
    // What this reconcile wrote is fresher than the cache (whose echo of the write
    // reconciles nothing); otherwise the cache.
    k8s::ObjectPtr live;
    if (const auto w = applied.written_workloads.find({step.kind, step.key});
        w != applied.written_workloads.end()) {
      live = k8s::Object::from_json(json::value(w->second));
    } else {
      live = object_cache.get(group_kind(step.kind), step.key);
    }
    if (!live) {
      waiting.push_back(what + ": not in the cache yet");
      continue;
    }
    const auto observed = int_at(*live, {"status", "observedGeneration"});
    if (observed && live->generation() > 0 && *observed < live->generation()) {
      waiting.push_back(what + ": the latest spec is not rolled out yet");
      continue;
    }
    std::int64_t want = 0;
    std::int64_t have = 0;
    if (step.kind == Kind::daemon_set) {
      want = int_at(*live, {"status", "desiredNumberScheduled"}).value_or(0);
      have = int_at(*live, {"status", "numberReady"}).value_or(0);
    } else {
      want = int_at(*live, {"spec", "replicas"}).value_or(1);
      have = int_at(*live, {"status", "readyReplicas"}).value_or(0);
    }
    if (have >= want) {
      ++ready;
    } else {
      waiting.push_back(what + ": " + std::to_string(have) + "/" + std::to_string(want) + " ready");
    }
  }
  if (total == 0) {
    return {true, "NoWorkloads",
            "no workload to run: no MetricsInstance, LogsInstance or Integration is selected"};
  }
  if (ready == total) {
    return {true, "WorkloadsReady",
            "all " + std::to_string(total) + " workload(s) have their replicas ready"};
  }
  std::string message =
      std::to_string(ready) + " of " + std::to_string(total) + " workload(s) ready";
  for (std::size_t i = 0; i < waiting.size() && i < kWorkloadsInMessage; ++i) {
    message += "; " + waiting[i];
  }
  if (waiting.size() > kWorkloadsInMessage) {
    message += "; and " + std::to_string(waiting.size() - kWorkloadsInMessage) + " more";
  }
  return {false, "WorkloadsNotReady", message};
}

asio::awaitable<std::string> AgentController::Impl::write_status(
    const k8s::ObjectPtr& agent, const runtime::StatusUpdate& update) {
  auto r = co_await status->update(gvk(Kind::grafana_agent), agent, update);
  if (r) co_return std::string();
  std::string message =
      "writing the status of GrafanaAgent " + agent->key().str() + ": " + r.error().describe();
  log::warn("status update failed", {{"controller", controller_name()}, {"error", message}});
  co_return message;
}

std::optional<k8s::EventSubject> AgentController::Impl::subject_of(
    Kind kind, const k8s::ObjectKey& key) const {
  const k8s::KindCache* kc = kind == Kind::grafana_agent ? agents : caches.of(kind);
  if (kc != nullptr) {
    if (const auto obj = kc->get(key)) return runtime::event_subject(gvk(kind), *obj);
  }
  if (key.name.empty()) return std::nullopt;
  const auto g = gvk(kind);
  k8s::EventSubject s;
  s.api_version = g.api_version();
  s.kind = g.kind;
  s.ns = key.ns;
  s.name = key.name;
  return s;
}

void AgentController::Impl::report_problems(const std::string& key, const k8s::Object& agent,
                                            const std::vector<Problem>& problems) {
  std::set<std::string> now;
  for (const auto& p : problems) now.insert(p.str());
  std::set<std::string> before;
  {
    const std::lock_guard lock(roots_mutex);
    auto& r = reported[key];
    if (r.problems == now) return;
    before = std::exchange(r.problems, now);
  }
  if (problems.empty() || ctx.events == nullptr) return;
  for (const auto& p : problems) {
    if (before.contains(p.str())) continue;  // reported already
    log::warn("hierarchy member problem",
              {{"controller", controller_name()}, {"root", key}, {"problem", p.str()}});
    // On the member itself; the Problem names the field, never data.
    if (p.kind == Kind::grafana_agent && p.object == agent.key()) continue;
    if (const auto subject = subject_of(p.kind, p.object)) {
      std::string message = p.field.empty() ? p.message : p.field + ": " + p.message;
      message += " (in the hierarchy of GrafanaAgent " + key + ")";
      ctx.events->record(*subject, k8s::EventType::warning,
                         p.severity == Severity::error ? "InvalidMember" : "MemberWarning",
                         std::move(message));
    }
  }
  std::string summary = std::to_string(problems.size()) + " member problem(s): ";
  for (std::size_t i = 0; i < problems.size() && i < kProblemsInSummary; ++i) {
    if (i > 0) summary += "; ";
    summary += problems[i].str();
  }
  if (problems.size() > kProblemsInSummary) {
    summary += "; and " + std::to_string(problems.size() - kProblemsInSummary) +
               " more (see status.problems)";
  }
  ctx.events->record(runtime::event_subject(gvk(Kind::grafana_agent), agent),
                     k8s::EventType::warning, "InvalidMembers", std::move(summary));
}

void AgentController::Impl::report_error(const std::string& key, const k8s::Object& agent,
                                         const std::string& reason, const std::string& message) {
  {
    const std::lock_guard lock(roots_mutex);
    auto& r = reported[key];
    const std::string signature = reason + "\n" + message;
    if (r.error == signature) return;
    r.error = signature;
  }
  if (ctx.events == nullptr) return;
  ctx.events->record(runtime::event_subject(gvk(Kind::grafana_agent), agent),
                     k8s::EventType::warning, reason, message);
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

std::uint64_t AgentController::own_write_echoes() const {
  return impl_->engine->echoes();
}

std::uint64_t AgentController::asset_fetches() const {
  return impl_->contents.fetches();
}

std::size_t AgentController::asset_contents() const {
  return impl_->contents.size();
}

std::unique_ptr<runtime::ControllerModule> make_agent_module(const runtime::ModuleContext& ctx,
                                                             AgentModuleOptions options) {
  return std::make_unique<AgentController>(ctx, std::move(options));
}

}  // namespace aop::agent
