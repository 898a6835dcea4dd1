#include "reconcile/telegraf/controller.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "k8s/base64.hpp"
#include "k8s/informer.hpp"
#include "net/log.hpp"
#include "reconcile/runtime/apply.hpp"
#include "reconcile/runtime/clock_timer.hpp"
#include "reconcile/runtime/controller.hpp"
#include "reconcile/runtime/dependency_index.hpp"
#include "reconcile/runtime/object_cache.hpp"
#include "reconcile/runtime/status.hpp"
#include "reconcile/telegraf/objects.hpp"
#include "reconcile/telegraf/source_events.hpp"
#include "reconcile/telegraf/sources.hpp"
#include "reconcile/telegraf/validation.hpp"

namespace aop::telegraf {
namespace asio = boost::asio;
namespace json = boost::json;
using runtime::ReconcileResult;

namespace {

// The kinds involved (functions: no static initialisation that could throw).
const k8s::GroupVersionKind& namespace_gvk() {
  static const k8s::GroupVersionKind gvk{"", "v1", "Namespace"};
  return gvk;
}
const k8s::GroupVersionKind& application_gvk() {
  static const k8s::GroupVersionKind gvk{"argoproj.io", "v1alpha1", "Application"};
  return gvk;
}
const k8s::GroupVersionKind& config_map_gvk() {
  static const k8s::GroupVersionKind gvk{"", "v1", "ConfigMap"};
  return gvk;
}
const k8s::GroupVersionKind& secret_gvk() {
  static const k8s::GroupVersionKind gvk{"", "v1", "Secret"};
  return gvk;
}
const k8s::GroupVersionKind& deployment_gvk() {
  static const k8s::GroupVersionKind gvk{"apps", "v1", "Deployment"};
  return gvk;
}

// Applications filed under the namespace their annotation feeds (annotated ones only).
constexpr std::string_view kTargetIndex = "aop.telegraf.target";

// A Deployment whose objects are being deleted (someone's kubectl delete, a namespace
// going away) is looked at again after this long.
constexpr auto kWaitingRetry = std::chrono::seconds(2);
// A target whose last writes the caches do not show yet is looked at again this soon
// (the apply engine's expectations: the watch usually delivers them within milliseconds).
constexpr auto kCatchUpRetry = std::chrono::milliseconds(20);

bool is_owned_name(std::string_view name) {
  return name == kConfigMapName || name == kSecretName || name == kDeploymentName;
}

// The objects clean-up may delete: the controller's names, with a sources annotation it
// can read (an object it cannot judge is left alone). The managed-by label is checked by
// the apply engine.
bool prunable(const k8s::Object& o) {
  if (!is_owned_name(o.name())) return false;
  const auto sources = o.annotation(kSourcesAnnotation);
  return sources && parse_sources_annotation(*sources).has_value();
}

// The pod template annotation value for a token: a short, domain-separated hash.
std::string token_hash(std::string_view token) {
  std::string input = "rubin-telegraf-token:";
  input += token;
  return sha256_hex(input).substr(0, 16);
}

void set_token_hash(json::object& deployment, std::string_view token) {
  json::object& tmpl = deployment["spec"].as_object()["template"].as_object();
  json::object& meta = tmpl["metadata"].as_object();
  json::value& annotations = meta["annotations"];
  if (!annotations.is_object()) annotations = json::object{};
  annotations.as_object()[kTokenHashAnnotation] = token_hash(token);
}

// The namespace an annotated Application feeds (what the target index files it under);
// nullopt when it carries no annotation or no usable destination.
std::optional<std::string> target_of_application(const k8s::Object& app,
                                                 const std::string& annotation_key) {
  if (!app.annotation(annotation_key)) return std::nullopt;
  const auto v = app.at({"spec", "destination", "namespace"});
  if (!v || !v->is_string() || !is_dns_label(v->get_string())) return std::nullopt;
  return std::string(v->get_string());
}

// What a reconcile of one target read.
struct TargetRead {
  k8s::ObjectPtr ns_obj;  // the target Namespace (nullptr: it does not exist)
  std::vector<Source> sources;
  std::vector<Problem> problems;
  std::map<std::string, Subject> considered;  // by SourceRef::str(): where problems go
  bool apps_synced = true;
};

runtime::GroupKind namespace_kind() {
  return runtime::GroupKind::of(namespace_gvk());
}
runtime::GroupKind application_kind() {
  return runtime::GroupKind::of(application_gvk());
}

}  // namespace

struct TelegrafController::State : std::enable_shared_from_this<State> {
  State(const runtime::ModuleContext& c, TelegrafOptions o, TelegrafModuleSettings s)
      : ctx(c),
        options(std::move(o)),
        settings(std::move(s)),
        registry(settings.registry != nullptr ? *settings.registry : net::metrics::registry()),
        managed_gauge(registry
                          .gauge("agent_operator_telegraf_managed_namespaces",
                                 "Namespaces running a telegraf Deployment of this controller.",
                                 {"controller"})
                          .with({settings.name})),
        endpoints_gauge(registry
                            .gauge("agent_operator_telegraf_endpoints",
                                   "Prometheus endpoints scraped by the deployed telegrafs.",
                                   {"controller"})
                            .with({settings.name})),
        invalid_objects(settings.name, &registry),
        problems_total(registry.counter(
            "agent_operator_telegraf_problems_total",
            "Problems reported as Warning Events (invalid annotations, missing destinations, "
            "endpoint conflicts), each counted once per source and message.",
            {"controller", "reason"})) {}

  ~State() { discovery_timer.cancel(); }

  // --- wiring -------------------------------------------------------------------------

  void init() {
    const std::string managed = "app.kubernetes.io/managed-by=" + options.managed_by;
    std::weak_ptr<State> weak = weak_from_this();

    k8s::CacheSpec ns_spec;
    ns_spec.gvk = namespace_gvk();
    ns_spec.namespaced = false;
    namespaces = &ctx.informers->cache(ns_spec);
    namespaces->add_handler(namespace_handler(weak));

    // ConfigMaps and Secrets: metadata is enough (the hash annotation decides), and the
    // operator then never holds the token copies in memory. Deployments in full, so that
    // drift repair can keep a hand-scaled spec.replicas rather than rewriting it.
    const auto owned_spec = [&](const k8s::GroupVersionKind& gvk, bool metadata_only) {
      k8s::CacheSpec spec;
      spec.gvk = gvk;
      spec.label_selector = managed;
      spec.transform.metadata_only = metadata_only;
      k8s::KindCache& cache = ctx.informers->cache(spec);
      owned.add(gvk, cache);
      return &cache;
    };
    config_maps = owned_spec(config_map_gvk(), true);
    secrets = owned_spec(secret_gvk(), true);
    deployments = owned_spec(deployment_gvk(), false);

    runtime::ApplyOptions ao;
    ao.controller = settings.name;
    ao.hash_annotation = std::string(kAppliedHashAnnotation);
    ao.managed_by_value = options.managed_by;
    // The desired ownerReferences are exact: when the Namespace stops being a source
    // (annotation removed, an Application still feeding the target) its reference goes.
    ao.merge_owner_references = false;
    ao.may_write = [weak] {
      const auto self = weak.lock();
      return self && self->may_write();
    };
    ao.registry = &registry;
    engine = std::make_unique<runtime::ApplyEngine>(*ctx.client, owned, std::move(ao), ctx.time());
    // Owned objects: their namespace, except for the echoes of the engine's own writes.
    for (const auto& [gvk, cache] :
         {std::pair{config_map_gvk(), config_maps}, std::pair{secret_gvk(), secrets},
          std::pair{deployment_gvk(), deployments}}) {
      cache->add_handler(
          runtime::without_own_writes(*engine, runtime::GroupKind::of(gvk), owned_handler(weak)));
    }

    if (options.token_secret) {
      k8s::InformerOptions io;
      io.gvk = secret_gvk();
      io.ns = options.token_secret->ns;
      io.field_selector = "metadata.name=" + options.token_secret->name;
      token_informer = k8s::make_informer(ctx.executor, *ctx.client, std::move(io));
      token_informer->add_handler(token_handler(weak));
      token_informer->start();
    }

    controller = make_controller();
    asio::co_spawn(ctx.executor, discovery_loop(weak), asio::detached);
  }

  std::shared_ptr<runtime::Controller> make_controller() {
    runtime::ControllerOptions o;
    o.name = settings.name;
    o.workers = ctx.workers;
    o.resync_period = ctx.resync_period;
    o.progress_period = ctx.progress_period;
    o.queue = ctx.queue;
    o.registry = &registry;
    std::weak_ptr<State> weak = weak_from_this();
    return std::make_shared<runtime::Controller>(
        ctx.executor, std::move(o),
        [weak](std::string key) { return reconcile_entry(weak.lock(), std::move(key)); },
        [weak] {
          const auto self = weak.lock();
          return self ? self->roots() : std::vector<std::string>{};
        },
        ctx.time());
  }

  // Whether the owned caches have delivered their first list (sticky once true).
  bool owned_synced() const {
    if (owned_synced_once.load()) return true;
    if (!owned.has_synced()) return false;
    owned_synced_once.store(true);
    return true;
  }

  bool may_write() const { return reconciling.load() && (!ctx.may_write || ctx.may_write()); }

  std::shared_ptr<runtime::Controller> current_controller() const {
    const std::lock_guard lock(controller_mutex);
    return controller;
  }

  void enqueue(const std::string& ns) {
    if (const auto c = current_controller()) c->enqueue(ns);
  }

  // Every target, each enqueued as by an event (which also clears a terminal error).
  void enqueue_all() {
    const auto c = current_controller();
    if (!c) return;
    for (const auto& key : roots()) c->enqueue(key);
  }

  std::vector<k8s::Informer*> application_informers() const {
    const std::lock_guard lock(apps_mutex);
    std::vector<k8s::Informer*> out;
    out.reserve(applications.size());
    for (const auto& i : applications) out.push_back(i.get());
    return out;
  }

  // With --namespaces the owned caches (and the RBAC) cover only those namespaces, so
  // telegraf is deployed only there.
  bool in_scope(std::string_view ns) const {
    const auto& watched = ctx.informers->namespaces();  // sorted by the factory
    return watched.empty() || std::binary_search(watched.begin(), watched.end(), ns);
  }

  bool annotated(const k8s::Object& o) const {
    return o.annotation(options.annotation_key).has_value();
  }

  std::optional<std::string> application_target(const k8s::Object& app) const {
    return target_of_application(app, options.annotation_key);
  }

  bool applications_point_at(std::string_view ns) const {
    for (k8s::Informer* i : application_informers()) {
      if (!i->store().by_index(kTargetIndex, ns).empty()) return true;
    }
    return false;
  }

  // Every target namespace: annotated Namespaces, targets of annotated Applications, and
  // namespaces holding managed objects (which may have to be cleaned up).
  std::vector<std::string> roots() const {
    std::set<std::string> keys;
    for (const auto& ns : namespaces->list()) {
      if (annotated(*ns)) keys.insert(std::string(ns->name()));
    }
    for (k8s::Informer* i : application_informers()) {
      for (const auto& app : i->store().list()) {
        if (auto t = application_target(*app)) keys.insert(std::move(*t));
      }
    }
    for (const k8s::KindCache* c : {config_maps, secrets, deployments}) {
      for (const auto& o : c->list()) keys.insert(std::string(o->ns()));
    }
    std::vector<std::string> out;
    out.reserve(keys.size());
    for (const auto& k : keys) {
      if (in_scope(k)) out.push_back(k);
    }
    return out;
  }

  // --- event handlers -------------------------------------------------------------------

  static k8s::EventHandler namespace_handler(const std::weak_ptr<State>& weak) {
    k8s::EventHandler h;
    h.on_add = [weak](const k8s::ObjectPtr& o) {
      const auto self = weak.lock();
      if (!self) return;
      // An unannotated namespace matters when Applications already point at it (they
      // could not be deployed before it existed).
      if (self->annotated(*o) || self->applications_point_at(o->name())) {
        self->enqueue(std::string(o->name()));
      }
    };
    h.on_update = [weak](const k8s::ObjectPtr& old_obj, const k8s::ObjectPtr& new_obj) {
      const auto self = weak.lock();
      if (!self) return;
      const auto& key = self->options.annotation_key;
      if (old_obj->annotation(key) != new_obj->annotation(key) ||
          old_obj->being_deleted() != new_obj->being_deleted() ||
          old_obj->uid() != new_obj->uid()) {
        self->enqueue(std::string(new_obj->name()));
      }
    };
    h.on_delete = [weak](const k8s::ObjectPtr& o) {
      const auto self = weak.lock();
      if (!self) return;
      self->forget_source(SourceRef{SourceKind::namespace_, "", std::string(o->name()), {}});
      if (self->annotated(*o)) self->enqueue(std::string(o->name()));
    };
    return h;
  }

  // Applications: the targets that read one (the dependency index) and the one it points
  // at now. Moving an Application's destination thus cleans up the old target.
  static k8s::EventHandler application_handler(const std::weak_ptr<State>& weak) {
    k8s::EventHandler h;
    h.on_add = [weak](const k8s::ObjectPtr& o) {
      const auto self = weak.lock();
      if (!self || !self->annotated(*o)) return;
      if (auto t = self->application_target(*o)) {
        self->enqueue(*t);
      } else {
        self->report_untargeted(o);
      }
    };
    h.on_update = [weak](const k8s::ObjectPtr& old_obj, const k8s::ObjectPtr& new_obj) {
      const auto self = weak.lock();
      if (!self) return;
      const auto& key = self->options.annotation_key;
      const auto new_target = self->application_target(*new_obj);
      if (old_obj->annotation(key) == new_obj->annotation(key) &&
          self->application_target(*old_obj) == new_target &&
          old_obj->being_deleted() == new_obj->being_deleted()) {
        return;  // nothing a telegraf depends on (status, sync results, ...)
      }
      self->enqueue_readers(*new_obj);
      if (new_target) self->enqueue(*new_target);
      if (self->annotated(*new_obj) && !new_target) self->report_untargeted(new_obj);
    };
    h.on_delete = [weak](const k8s::ObjectPtr& o) {
      const auto self = weak.lock();
      if (!self) return;
      self->forget_source(
          SourceRef{SourceKind::application, std::string(o->ns()), std::string(o->name()), {}});
      self->enqueue_readers(*o);
      if (auto t = self->application_target(*o)) self->enqueue(*t);
    };
    return h;
  }

  // The targets whose last reconcile read Application `app`.
  void enqueue_readers(const k8s::Object& app) {
    for (const auto& root :
         index.affected(application_kind(), app.ns(), app.name(), app.labels())) {
      enqueue(root);
    }
  }

  // Objects the controller created (the echoes of its own writes are dropped before this
  // handler, runtime::without_own_writes): someone's creation, edit or deletion of one
  // reconciles its namespace; so do objects from before a restart, as the caches list them.
  static k8s::EventHandler owned_handler(const std::weak_ptr<State>& weak) {
    k8s::EventHandler h;
    h.on_add = [weak](const k8s::ObjectPtr& o) {
      if (const auto self = weak.lock()) self->enqueue(std::string(o->ns()));
    };
    h.on_update = [weak](const k8s::ObjectPtr& old_obj, const k8s::ObjectPtr& new_obj) {
      // Same generation of a Deployment: status or metadata only (the Deployment
      // controller's progress reports), nothing the telegraf controller writes.
      if (new_obj->generation() > 0 && old_obj->generation() == new_obj->generation() &&
          runtime::labels_of(*old_obj) == runtime::labels_of(*new_obj)) {
        return;
      }
      if (const auto self = weak.lock()) self->enqueue(std::string(new_obj->ns()));
    };
    h.on_delete = [weak](const k8s::ObjectPtr& o) {
      if (const auto self = weak.lock()) self->enqueue(std::string(o->ns()));
    };
    return h;
  }

  // The token Secret: a changed (or appearing) token reaches every target.
  static k8s::EventHandler token_handler(const std::weak_ptr<State>& weak) {
    const auto changed = [weak] {
      const auto self = weak.lock();
      if (!self) return;
      const auto token = self->read_token();
      std::string now = token ? token_hash(*token) : std::string();
      {
        const std::lock_guard lock(self->token_mutex);
        if (now == self->last_token_hash) return;
        self->last_token_hash = now;
      }
      if (!token) {
        net::log::warn(
            "telegraf token Secret missing or without its key; telegraf objects are "
            "not written until it is back",
            {{"controller", self->settings.name}, {"secret", self->options.token_secret->str()}});
      } else {
        net::log::info(
            "telegraf token Secret read",
            {{"controller", self->settings.name}, {"secret", self->options.token_secret->str()}});
      }
      self->enqueue_all();
    };
    k8s::EventHandler h;
    h.on_add = [changed](const k8s::ObjectPtr&) { changed(); };
    h.on_update = [changed](const k8s::ObjectPtr&, const k8s::ObjectPtr&) { changed(); };
    h.on_delete = [changed](const k8s::ObjectPtr&) { changed(); };
    return h;
  }

  std::optional<std::string> read_token() const {
    if (!token_informer) return std::nullopt;
    const auto& ref = *options.token_secret;
    const k8s::ObjectPtr secret = token_informer->store().get(ref.ns, ref.name);
    if (!secret) return std::nullopt;
    const auto data = secret->at({"data", ref.key});
    if (!data || !data->is_string()) return std::nullopt;
    auto token = k8s::base64_decode(data->get_string());
    if (!token || token->empty()) return std::nullopt;
    return token;
  }

  // --- Applications: optional CRD, discovered at run time --------------------------------

  bool application_crd_served() const {
    return ctx.client->registry().find(application_gvk()).has_value();
  }

  void start_applications() {
    std::vector<std::unique_ptr<k8s::Informer>> informers;
    std::vector<std::string> where;
    const auto make = [&](const std::string& ns) {
      k8s::InformerOptions o;
      o.gvk = application_gvk();
      o.ns = ns;
      informers.push_back(k8s::make_informer(ctx.executor, *ctx.client, std::move(o)));
      where.push_back(ns.empty() ? "*" : ns);
    };
    if (options.all_application_namespaces) {
      make("");
    } else {
      for (const auto& ns : options.application_namespaces) make(ns);
    }
    std::weak_ptr<State> weak = weak_from_this();
    for (auto& i : informers) {
      i->add_index(std::string(kTargetIndex),
                   [key = options.annotation_key](const k8s::Object& app) {
                     std::vector<std::string> out;
                     if (auto t = target_of_application(app, key)) out.push_back(std::move(*t));
                     return out;
                   });
      i->add_handler(application_handler(weak));
    }
    std::vector<k8s::Informer*> to_start;
    {
      const std::lock_guard lock(apps_mutex);
      applications = std::move(informers);
      for (const auto& i : applications) to_start.push_back(i.get());
    }
    std::string list;
    for (const auto& w : where) list += (list.empty() ? "" : ",") + w;
    net::log::info("watching ArgoCD Applications",
                   {{"controller", settings.name}, {"namespaces", list}});
    for (k8s::Informer* i : to_start) i->start();
    applications_started.store(true);
  }

  static asio::awaitable<void> discovery_loop(std::weak_ptr<State> weak) {
    bool discovered_once = false;
    bool said = false;
    for (;;) {
      runtime::ClockTimer* timer = nullptr;
      net::TimePoint due;
      {
        const auto self = weak.lock();
        if (!self || self->stopping.load()) co_return;
        if (!self->application_crd_served() && !discovered_once) {
          // The registry may predate the process's own discovery: look once right away.
          discovered_once = true;
          auto r = co_await self->ctx.client->discover();
          if (!r) {
            net::log::warn("API discovery failed; will look for the Application CRD again",
                           {{"controller", self->settings.name}, {"error", r.error().describe()}});
          }
        }
        self->discovery_done.store(true);
        if (self->application_crd_served()) {
          if (self->stopping.load()) co_return;
          self->start_applications();
          co_return;
        }
        const net::Duration period = self->settings.application_discovery_period;
        if (!said) {
          said = true;
          net::log::info(
              "the ArgoCD Application CRD (argoproj.io/v1alpha1) is not served; running on "
              "Namespaces alone and checking discovery again periodically",
              {{"controller", self->settings.name},
               {"period_ms",
                static_cast<std::int64_t>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(period).count())}});
        }
        timer = &self->discovery_timer;
        due = self->ctx.time().now() + period;
      }
      // The state (and the timer) outlives the wait: the State's destructor cancels it,
      // and the frame holds no reference to the State meanwhile.
      const auto woke = co_await timer->wait_until(due);
      if (woke == runtime::ClockTimer::Woke::cancelled) co_return;
      const auto self = weak.lock();
      if (!self || self->stopping.load()) co_return;
      auto r = co_await self->ctx.client->discover();
      if (!r) {
        net::log::debug("API discovery failed; will try again",
                        {{"controller", self->settings.name}, {"error", r.error().describe()}});
      }
    }
  }

  // --- problems → Events ------------------------------------------------------------------

  void report(const std::map<std::string, Subject>& considered,
              const std::vector<Problem>& problems) {
    events.report(considered, problems, may_write());
  }

  // An annotated Application without a usable destination feeds no target, so no
  // reconcile sees it: its problem is reported from the event.
  void report_untargeted(const k8s::ObjectPtr& app) {
    SourceRead read = read_source(app->to_json(), options);
    std::map<std::string, Subject> considered;
    for (const Problem& p : read.problems) considered[p.source.str()] = {application_gvk(), app};
    report(considered, read.problems);
  }

  // Every annotated Application without a target, e.g. when reconciling starts: their
  // events may have come while this replica could not write Events.
  void report_all_untargeted() {
    for (k8s::Informer* i : application_informers()) {
      for (const auto& app : i->store().list()) {
        if (annotated(*app) && !application_target(*app)) report_untargeted(app);
      }
    }
  }

  void forget_source(const SourceRef& ref) { events.forget(ref); }

  // --- the reconcile ----------------------------------------------------------------------

  static asio::awaitable<ReconcileResult> reconcile_entry(std::shared_ptr<State> self,
                                                          std::string ns) {
    if (!self) co_return ReconcileResult::ok();
    struct Counted {
      State& state;
      const std::string& key;
      ~Counted() { state.count_reconcile(key); }
    } counted{*self, ns};
    co_return co_await self->reconcile(ns);
  }

  void count_reconcile(const std::string& ns) {
    reconciles_total.fetch_add(1);
    const std::lock_guard lock(targets_mutex);
    ++reconcile_counts[ns];
  }

  void set_deployed(const std::string& ns, std::optional<std::size_t> endpoints) {
    const std::lock_guard lock(targets_mutex);
    const auto it = deployed.find(ns);
    if (it != deployed.end()) {
      endpoint_total -= it->second;
      deployed.erase(it);
    }
    if (endpoints) {
      deployed.emplace(ns, *endpoints);
      endpoint_total += *endpoints;
    }
    managed_gauge.set(static_cast<double>(deployed.size()));
    endpoints_gauge.set(static_cast<double>(endpoint_total));
  }

  // Whether objects deployed in `ns` were fed by an Application (their sources annotation
  // says so): while the Application cache is still filling, such a target must wait.
  bool fed_by_applications(const std::string& ns) const {
    for (const k8s::KindCache* c : {config_maps, secrets, deployments}) {
      for (const auto& o : c->list(ns)) {
        const auto sources = o->annotation(kSourcesAnnotation);
        if (sources && sources->find("Application/") != std::string_view::npos) return true;
      }
    }
    return false;
  }

  // One target namespace: read its sources, plan it, apply the plan, and record what
  // happened (telegraf has no status subresource: gauges, Events and a log line).
  asio::awaitable<ReconcileResult> reconcile(const std::string& ns) {
    if (!in_scope(ns)) {
      skip_out_of_scope(ns);
      co_return ReconcileResult::ok();
    }
    if (!caches_synced()) co_return ReconcileResult::requeue(settings.not_synced_retry);
    // Our own last writes must show in the caches before deciding again: a reconcile
    // started by one of them would otherwise repeat a write (a DELETE answered 404, a
    // create answered AlreadyExists).
    if (!engine->caches_caught_up(ns)) co_return ReconcileResult::requeue(kCatchUpRetry);

    // Read.
    TargetRead read = read_target(ns);
    // Compute.
    const TargetPlan plan = plan_target(ns, read.sources);
    read.problems.insert(read.problems.end(), plan.problems.begin(), plan.problems.end());
    if (plan.held()) {
      report(read.considered, read.problems);
      // The last good configuration keeps running; the invalid source's fix (an event)
      // brings this target back.
      co_return ReconcileResult::ok();
    }
    if (!read.ns_obj || read.ns_obj->being_deleted()) {
      report(read.considered, read.problems);
      // Nothing can be created in a namespace that does not exist (or is going away);
      // whatever is in it goes with it. Its creation is an event that brings us back.
      set_deployed(ns, std::nullopt);
      co_return ReconcileResult::ok();
    }
    if (!read.apps_synced && fed_by_applications(ns)) {
      report(read.considered, read.problems);
      co_return ReconcileResult::requeue(settings.not_synced_retry);
    }
    auto desired = desired_plan(ns, plan);
    if (!desired) {
      report(read.considered, read.problems);
      co_return ReconcileResult::terminal_error(desired.error().message);
    }

    // Apply.
    const runtime::ApplyReport outcome = co_await engine->apply(*desired);
    // An object in the way (not the controller's) is a problem of every source feeding
    // the target: their owners are the ones to hear of it.
    for (const auto& o : outcome.objects) {
      if (o.result != runtime::ObjectResult::not_owned) continue;
      for (const SourceRef& s : plan.sources) {
        read.problems.push_back(
            Problem{s, ProblemReason::not_owned,
                    s.str() + ": telegraf for namespace " + ns + " is not deployed: " + o.error});
      }
    }
    report(read.considered, read.problems);

    // Record.
    co_return applied(ns, plan, desired->applies() > 0, outcome);
  }

  void skip_out_of_scope(const std::string& ns) {
    bool first = false;
    {
      const std::lock_guard lock(targets_mutex);
      first = out_of_scope.insert(ns).second;
    }
    if (first) {
      net::log::warn("a telegraf source points at a namespace outside --namespaces; skipped",
                     {{"controller", settings.name}, {"namespace", ns}});
    }
  }

  bool caches_synced() const {
    return namespaces->has_synced() && owned_synced() &&
           (!token_informer || token_informer->has_synced());
  }

  // The sources pointing at `ns`, their problems and the objects to report them on; what
  // was read goes to the dependency index (a change of a read Application reconciles
  // `ns` again, also when it stops pointing here).
  TargetRead read_target(const std::string& ns) {
    TargetRead r;
    runtime::RootDependencies deps;
    deps.objects.push_back({namespace_kind(), {"", ns}});
    const auto read = [&](const k8s::ObjectPtr& o, const k8s::GroupVersionKind& gvk) {
      SourceRead sr = read_source(o->to_json(), options);
      for (Problem& p : sr.problems) {
        r.considered[p.source.str()] = {gvk, o};
        r.problems.push_back(std::move(p));
      }
      if (sr.source) {
        r.considered[sr.source->ref.str()] = {gvk, o};
        r.sources.push_back(std::move(*sr.source));
      }
    };
    r.ns_obj = namespaces->get(k8s::ObjectKey{"", ns});
    if (r.ns_obj && annotated(*r.ns_obj)) read(r.ns_obj, namespace_gvk());
    for (k8s::Informer* i : application_informers()) {
      r.apps_synced = r.apps_synced && i->has_synced();
      for (const auto& app : i->store().by_index(kTargetIndex, ns)) {
        read(app, application_gvk());
        deps.objects.push_back({application_kind(), app->key()});
      }
    }
    index.set(ns, std::move(deps));
    return r;
  }

  // The objects `plan` calls for in `ns` (none: clean-up) and the pruning of the rest.
  // An error when the token Secret is configured but missing: nothing is written until it
  // exists, and its arrival is an event.
  Result<runtime::ApplyPlan> desired_plan(const std::string& ns, const TargetPlan& plan) {
    std::optional<std::string> token;
    if (!plan.endpoints.empty() && options.token_secret) {
      token = read_token();
      if (!token) {
        return make_error("the InfluxDB token Secret " + options.token_secret->str() +
                          " does not exist or lacks the key; telegraf in namespace " + ns +
                          " is not written until it does");
      }
    }
    std::optional<DesiredObjects> desired = build_objects(plan, options, token);
    if (desired && token) set_token_hash(desired->deployment, *token);
    runtime::ApplyPlan out;
    out.root = ns;
    if (desired) {
      for (auto& o : desired->all()) out.apply(std::move(o));
    }
    // Only the controller's own objects, and only those whose sources annotation it can
    // read (an object it cannot judge is left alone).
    runtime::PruneScope prune;
    prune.kinds = {config_map_gvk(), secret_gvk(), deployment_gvk()};
    prune.namespaces = {ns};
    prune.owned = prunable;
    out.prune(std::move(prune));
    return out;
  }

  ReconcileResult applied(const std::string& ns, const TargetPlan& plan, bool deployed,
                          const runtime::ApplyReport& report) {
    if (report.write_blocked) return ReconcileResult::ok();  // not leading: no writes
    if (!report.ok()) {
      std::string message;
      for (const auto& e : report.errors) message += (message.empty() ? "" : "; ") + e;
      return report.server_failure ? ReconcileResult::api_failed(std::move(message))
                                   : ReconcileResult::failed(std::move(message));
    }
    set_deployed(ns, deployed ? std::optional<std::size_t>(plan.endpoints.size()) : std::nullopt);
    if (report.writes() > 0) {
      net::log::info(deployed ? "telegraf applied" : "telegraf removed",
                     {{"controller", settings.name},
                      {"namespace", ns},
                      {"sources", sources_annotation(plan.sources)},
                      {"endpoints", plan.endpoints.size()},
                      {"created", report.created},
                      {"updated", report.updated},
                      {"deleted", report.deleted}});
    }
    if (report.waiting) return ReconcileResult::requeue(kWaitingRetry);
    return ReconcileResult::ok();
  }

  runtime::ModuleContext ctx;
  TelegrafOptions options;
  TelegrafModuleSettings settings;
  net::metrics::Registry& registry;
  net::metrics::Gauge& managed_gauge;
  net::metrics::Gauge& endpoints_gauge;
  runtime::InvalidObjects invalid_objects;
  net::metrics::Family<net::metrics::Counter>& problems_total;

  // Set in init(), read-only afterwards.
  k8s::KindCache* namespaces = nullptr;
  k8s::KindCache* config_maps = nullptr;
  k8s::KindCache* secrets = nullptr;
  k8s::KindCache* deployments = nullptr;
  // The owned kinds as the apply engine reads them (no owner-UID index: the controller
  // prunes by namespace).
  runtime::KindCacheView owned;
  std::unique_ptr<runtime::ApplyEngine> engine;
  std::unique_ptr<k8s::Informer> token_informer;
  // What each target read (its Namespace, the Applications pointing at it).
  runtime::DependencyIndex index;

  mutable std::mutex apps_mutex;  // owns applications (filled once, when the CRD is served)
  std::vector<std::unique_ptr<k8s::Informer>> applications;
  std::atomic<bool> applications_started{false};
  mutable std::atomic<bool> owned_synced_once{false};
  std::atomic<bool> discovery_done{false};

  mutable std::mutex controller_mutex;  // owns controller, resume_with_resync
  std::shared_ptr<runtime::Controller> controller;
  bool resume_with_resync = false;
  std::atomic<bool> reconciling{false};
  std::atomic<bool> stopping{false};

  // Paces the discovery polls while the Application CRD is not served.
  runtime::ClockTimer discovery_timer{ctx.executor, ctx.time()};

  std::mutex token_mutex;  // owns last_token_hash
  std::string last_token_hash;

  SourceEvents events{ctx.events, settings.name, invalid_objects, problems_total};

  mutable std::mutex targets_mutex;  // owns deployed, endpoint_total, reconcile_counts,
                                     // out_of_scope
  std::set<std::string, std::less<>> out_of_scope;           // targets already logged as skipped
  std::map<std::string, std::size_t, std::less<>> deployed;  // target → endpoints
  std::size_t endpoint_total = 0;
  std::unordered_map<std::string, std::uint64_t> reconcile_counts;
  std::atomic<std::uint64_t> reconciles_total{0};
};

TelegrafController::TelegrafController(const runtime::ModuleContext& ctx, TelegrafOptions options,
                                       TelegrafModuleSettings settings)
    : state_(std::make_shared<State>(ctx, std::move(options), std::move(settings))) {
  if (ctx.client == nullptr || ctx.informers == nullptr) {
    throw std::invalid_argument(
        "telegraf controller: the module context lacks a client or "
        "an informer factory");
  }
  state_->init();
}

TelegrafController::~TelegrafController() {
  state_->stopping.store(true);
  state_->reconciling.store(false);
  if (const auto c = state_->current_controller()) c->shut_down();
  state_->discovery_timer.cancel();
}

const std::string& TelegrafController::name() const {
  return state_->settings.name;
}

std::string TelegrafController::not_ready_reason() const {
  const State& s = *state_;
  if (!s.namespaces->has_synced()) return "telegraf: waiting for the Namespace cache";
  if (!s.owned_synced()) {
    return "telegraf: waiting for the caches of its ConfigMaps, Secrets and Deployments";
  }
  if (s.token_informer && !s.token_informer->has_synced()) {
    return "telegraf: waiting for the token Secret " + s.options.token_secret->str();
  }
  if (!s.discovery_done.load()) return "telegraf: looking for the Application CRD";
  for (k8s::Informer* i : s.application_informers()) {
    if (!i->has_synced()) return "telegraf: waiting for the Application cache";
  }
  return {};
}

void TelegrafController::start_reconciling() {
  State& s = *state_;
  if (s.stopping.load()) return;
  std::shared_ptr<runtime::Controller> c;
  bool resumed = false;
  {
    const std::lock_guard lock(s.controller_mutex);
    c = s.controller;
    resumed = s.resume_with_resync;
    s.resume_with_resync = false;
  }
  s.reconciling.store(true);
  c->start();
  s.report_all_untargeted();
  // The first start needs no resync: the runner has existed since construction and its
  // queue holds every key the caches' events named. After a pause, keys the old runner
  // held were dropped with it.
  if (resumed) c->resync_now();
}

void TelegrafController::stop_reconciling() {
  State& s = *state_;
  s.reconciling.store(false);  // gates every write and Event from now on
  std::shared_ptr<runtime::Controller> old;
  {
    // A stopped runner cannot start again; a fresh one collects events meanwhile.
    const std::lock_guard lock(s.controller_mutex);
    old = s.controller;
    if (!s.stopping.load()) {
      s.controller = s.make_controller();
      s.resume_with_resync = true;
    }
  }
  old->shut_down();
}

boost::asio::awaitable<bool> TelegrafController::stop(net::Duration deadline) {
  const auto s = state_;
  s->stopping.store(true);
  s->discovery_timer.cancel();
  const auto c = s->current_controller();
  const bool finished = c ? co_await c->stop(deadline) : true;
  s->reconciling.store(false);
  for (k8s::Informer* i : s->application_informers()) i->stop();
  if (s->token_informer) s->token_informer->stop();
  co_return finished;
}

void TelegrafController::resync_now() {
  if (const auto c = state_->current_controller()) c->resync_now();
}

bool TelegrafController::idle() const {
  const auto c = state_->current_controller();
  if (!c) return true;
  auto& q = c->queue();
  return q.len() == 0 && q.waiting() == 0 && q.processing() == 0;
}

std::uint64_t TelegrafController::reconciles(std::string_view target_namespace) const {
  const std::lock_guard lock(state_->targets_mutex);
  const auto it = state_->reconcile_counts.find(std::string(target_namespace));
  return it == state_->reconcile_counts.end() ? 0 : it->second;
}

TelegrafStats TelegrafController::stats() const {
  TelegrafStats out;
  {
    const std::lock_guard lock(state_->targets_mutex);
    out.managed_namespaces = state_->deployed.size();
    out.endpoints = state_->endpoint_total;
  }
  out.invalid_sources = state_->events.invalid_sources();
  out.reconciles = state_->reconciles_total.load();
  return out;
}

bool TelegrafController::watching_applications() const {
  return state_->applications_started.load();
}

std::unique_ptr<runtime::ControllerModule> make_telegraf_module(const runtime::ModuleContext& ctx,
                                                                TelegrafOptions options,
                                                                TelegrafModuleSettings settings) {
  return std::make_unique<TelegrafController>(ctx, std::move(options), std::move(settings));
}

}  // namespace aop::telegraf
