// The kubelet Service/Endpoints controller: one root (the target Service),
// reconciled whenever a Node appears, disappears or changes its addresses.
//
// It reads the two objects with GET rather than caching them: they are one Service and
// one Endpoints, read only when Nodes change or on resync, and a cache would need a
// namespace the operator may not otherwise watch. Writes happen only when
// kubelet_object_changed() says the live object differs.
#include <atomic>
#include <set>
#include <stdexcept>

#include <boost/json.hpp>

#include "k8s/event_recorder.hpp"
#include "k8s/informer_factory.hpp"
#include "net/log.hpp"
#include "reconcile/agent/controller.hpp"
#include "reconcile/agent/kubelet.hpp"
#include "reconcile/runtime/apply.hpp"

namespace aop::agent {

namespace asio = boost::asio;
namespace json = boost::json;
namespace log = net::log;
using runtime::ReconcileResult;

namespace {

const std::string& kubelet_controller_name() {
  static const std::string name = "kubelet-service";
  return name;
}
// Conflicting writers (another operator replica during a hand-over, kubectl): re-read and
// decide again this many times before failing with backoff.
constexpr int kConflictRetries = 3;

k8s::GroupVersionKind node_kind() {
  return {"", "v1", "Node"};
}

// The update of `live` to what `desired` says: labels merged (ours win), the fields this
// controller owns replaced, everything else (clusterIPs, ipFamilies, ...) kept.
json::object update_of(const json::object& live, const json::object& desired) {
  json::object body = live;
  json::object& md = body["metadata"].as_object();
  json::object labels;
  if (const auto* l = md.if_contains("labels"); l != nullptr && l->is_object()) {
    labels = l->get_object();
  }
  if (const auto* dm = desired.if_contains("metadata"); dm != nullptr && dm->is_object()) {
    if (const auto* dl = dm->get_object().if_contains("labels"); dl != nullptr && dl->is_object()) {
      for (const auto& [k, v] : dl->get_object()) labels[k] = v;
    }
  }
  md["labels"] = std::move(labels);
  if (const auto* ds = desired.if_contains("spec"); ds != nullptr && ds->is_object()) {
    json::value& spec = body["spec"];
    if (!spec.is_object()) spec = json::object();
    for (const auto& [k, v] : ds->get_object()) spec.get_object()[k] = v;
  }
  if (desired.contains("subsets")) {
    body["subsets"] = desired.at("subsets");
  } else if (const auto* kind = desired.if_contains("kind");
             kind != nullptr && kind->is_string() && kind->get_string() == "Endpoints") {
    body.erase("subsets");
  }
  return body;
}

}  // namespace

struct KubeletController::Impl {
  Impl(const runtime::ModuleContext& c, k8s::ObjectKey s);

  asio::awaitable<ReconcileResult> reconcile(std::string key);
  // Logs each newly refused address and records a Warning Event on its Node.
  void report_refused(const std::vector<RefusedAddress>& refused);
  // Creates or updates one object; "" on success (or when writes are blocked).
  asio::awaitable<std::string> ensure(const json::object& desired);

  runtime::ModuleContext ctx;
  k8s::ObjectKey service;
  std::string key;
  k8s::KindCache* nodes = nullptr;
  std::unique_ptr<runtime::Controller> controller;
  std::atomic<std::uint64_t> reconciles{0};
  // Refused addresses reported already (node uid, type, address, reason); owned by the
  // one worker. An address no longer refused is forgotten, so a recurrence is reported.
  std::set<std::string> reported;
};

KubeletController::Impl::Impl(const runtime::ModuleContext& c, k8s::ObjectKey s)
    : ctx(c), service(std::move(s)), key(service.str()) {
  if (ctx.informers == nullptr || ctx.client == nullptr) {
    throw std::invalid_argument("the kubelet Service controller needs an API client and informers");
  }
  k8s::CacheSpec spec;
  spec.gvk = node_kind();
  spec.namespaced = false;
  nodes = &ctx.informers->cache(spec);

  runtime::ControllerOptions co;
  co.name = kubelet_controller_name();
  co.workers = 1;  // one root
  co.resync_period = ctx.resync_period;
  co.progress_period = runtime::Duration::zero();  // one root: no queue to follow
  co.queue = ctx.queue;
  co.queue.name = kubelet_controller_name();
  controller = std::make_unique<runtime::Controller>(
      ctx.executor, std::move(co), [this](std::string k) { return reconcile(std::move(k)); },
      [this] { return std::vector<std::string>{key}; });

  // Any Node added or deleted, or whose addresses (or identity) changed. Heartbeat
  // updates of Node status change neither and are ignored.
  k8s::EventHandler h;
  h.on_add = [this](const k8s::ObjectPtr&) { controller->enqueue(key); };
  h.on_delete = h.on_add;
  h.on_update = [this](const k8s::ObjectPtr& old_obj, const k8s::ObjectPtr& new_obj) {
    if (!old_obj || !new_obj) return;
    if (old_obj->uid() != new_obj->uid() ||
        old_obj->at({"status", "addresses"}) != new_obj->at({"status", "addresses"})) {
      controller->enqueue(key);
    }
  };
  nodes->add_handler(h);
}

asio::awaitable<ReconcileResult> KubeletController::Impl::reconcile(std::string) {
  ++reconciles;
  std::vector<KubeletNode> decoded;
  for (const auto& n : nodes->list()) {
    if (!n) continue;
    auto node = decode_kubelet_node(n->to_json());
    if (!node) {
      co_return ReconcileResult::failed("Node " + std::string(n->name()) + ": " +
                                        node.error().message);
    }
    decoded.push_back(std::move(*node));
  }
  auto objects = kubelet_objects(service, decoded);
  if (!objects) co_return ReconcileResult::failed(objects.error().message);
  report_refused(objects->refused);
  for (const json::object* desired : {&objects->service, &objects->endpoints}) {
    const std::string err = co_await ensure(*desired);
    if (!err.empty()) co_return ReconcileResult::failed(err);
  }
  co_return ReconcileResult::ok();
}

void KubeletController::Impl::report_refused(const std::vector<RefusedAddress>& refused) {
  std::set<std::string> now;
  for (const auto& r : refused) {
    std::string id = r.node_uid + "\n" + r.type + "\n" + r.address + "\n" + r.reason;
    if (!reported.contains(id)) {
      const std::string message = r.type + " " + r.address +
                                  " is left out of the kubelet Endpoints " + service.str() +
                                  ": the API server refuses it there (" + r.reason + ")";
      log::warn("node address left out",
                {{"controller", kubelet_controller_name()}, {"node", r.node}, {"reason", message}});
      if (ctx.events != nullptr) {
        k8s::EventSubject subject;
        subject.api_version = "v1";
        subject.kind = "Node";
        subject.name = r.node;
        subject.uid = r.node_uid;
        ctx.events->record(subject, k8s::EventType::warning, "KubeletAddressRefused", message);
      }
    }
    now.insert(std::move(id));
  }
  reported = std::move(now);
}

asio::awaitable<std::string> KubeletController::Impl::ensure(const json::object& desired) {
  const auto gvk = runtime::gvk_of(desired);
  if (!gvk) co_return "desired object without apiVersion/kind (a bug)";
  const std::string what = gvk->kind + " " + service.str();
  auto may_write = [this] { return !ctx.may_write || ctx.may_write(); };
  for (int attempt = 0; attempt <= kConflictRetries; ++attempt) {
    auto live = co_await ctx.client->get(*gvk, service);
    if (!live) {
      if (!live.error().not_found()) co_return what + ": read: " + live.error().describe();
      if (!may_write()) co_return std::string();
      auto created = co_await ctx.client->create(json::value(desired));
      if (created) {
        log::info("created", {{"controller", kubelet_controller_name()}, {"object", what}});
        co_return std::string();
      }
      if (created.error().conflict()) continue;  // AlreadyExists: read it and compare
      co_return what + ": create: " + created.error().describe();
    }
    if (!live.value().is_object()) co_return what + ": read: not an object";
    const json::object& live_obj = live.value().get_object();
    if (!kubelet_object_changed(live_obj, desired)) co_return std::string();
    if (!may_write()) co_return std::string();
    auto updated = co_await ctx.client->update(json::value(update_of(live_obj, desired)));
    if (updated) {
      log::info("updated", {{"controller", kubelet_controller_name()}, {"object", what}});
      co_return std::string();
    }
    if (updated.error().conflict() || updated.error().not_found()) continue;
    co_return what + ": update: " + updated.error().describe();
  }
  co_return what + ": conflicting writes persisted after " + std::to_string(kConflictRetries) +
      " retries";
}

KubeletController::KubeletController(const runtime::ModuleContext& ctx, k8s::ObjectKey service)
    : impl_(std::make_unique<Impl>(ctx, std::move(service))) {}

KubeletController::~KubeletController() {
  if (impl_->controller) impl_->controller->shut_down();
}

const std::string& KubeletController::name() const {
  return kubelet_controller_name();
}

std::string KubeletController::not_ready_reason() const {
  return impl_->nodes->has_synced() ? std::string() : std::string("waiting for caches: Node");
}

void KubeletController::start_reconciling() {
  impl_->controller->start();
}

void KubeletController::stop_reconciling() {
  impl_->controller->shut_down();
}

asio::awaitable<bool> KubeletController::stop(runtime::Duration deadline) {
  co_return co_await impl_->controller->stop(deadline);
}

runtime::Controller& KubeletController::controller() {
  return *impl_->controller;
}

std::uint64_t KubeletController::reconciles() const {
  return impl_->reconciles.load();
}

bool KubeletController::idle() {
  auto& q = impl_->controller->queue();
  return q.len() == 0 && q.processing() == 0 && q.waiting() == 0;
}

std::unique_ptr<runtime::ControllerModule> make_kubelet_module(const runtime::ModuleContext& ctx,
                                                               k8s::ObjectKey service) {
  return std::make_unique<KubeletController>(ctx, std::move(service));
}

}  // namespace aop::agent
