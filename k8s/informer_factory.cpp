#include "k8s/informer_factory.hpp"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/log.hpp"

namespace aop::k8s {

KindCache::KindCache(CacheSpec spec, std::vector<std::unique_ptr<Informer>> informers)
    : spec_(std::move(spec)), informers_(std::move(informers)) {}

Informer* KindCache::for_namespace(std::string_view ns) const {
  if (informers_.size() == 1 && informers_.front()->options().ns.empty()) {
    return informers_.front().get();
  }
  for (const auto& i : informers_) {
    if (i->options().ns == ns) return i.get();
  }
  return nullptr;  // a namespace the operator does not watch
}

ObjectPtr KindCache::get(const ObjectKey& key) const {
  Informer* i = for_namespace(key.ns);
  return i == nullptr ? nullptr : i->store().get(key);
}

std::vector<ObjectPtr> KindCache::list(std::string_view ns) const {
  if (!ns.empty()) {
    Informer* i = for_namespace(ns);
    if (i == nullptr) return {};
    return i->options().ns.empty() ? i->store().list_namespace(ns) : i->store().list();
  }
  if (informers_.size() == 1) return informers_.front()->store().list();
  std::vector<ObjectPtr> out;
  for (const auto& i : informers_) {
    auto part = i->store().list();
    out.insert(out.end(), std::make_move_iterator(part.begin()),
               std::make_move_iterator(part.end()));
  }
  return out;
}

std::vector<ObjectPtr> KindCache::by_index(std::string_view index, std::string_view value) const {
  if (informers_.size() == 1) return informers_.front()->store().by_index(index, value);
  std::vector<ObjectPtr> out;
  for (const auto& i : informers_) {
    auto part = i->store().by_index(index, value);
    out.insert(out.end(), std::make_move_iterator(part.begin()),
               std::make_move_iterator(part.end()));
  }
  return out;
}

std::vector<ObjectPtr> KindCache::select(std::string_view ns, const LabelSelector& selector) const {
  std::vector<ObjectPtr> out;
  if (selector.matches_nothing()) return out;
  const auto& reqs = selector.requirements();
  const auto in = std::find_if(reqs.begin(), reqs.end(),
                               [](const Requirement& r) { return r.op == SelectorOp::in; });
  if (!label_index_ || in == reqs.end()) {
    for (auto& obj : list(ns)) {
      if (obj && selector.matches(obj->labels())) out.push_back(std::move(obj));
    }
    return out;
  }
  // An object has one value per key: the values' candidates are disjoint.
  for (const auto& value : in->values) {
    for (auto& obj : by_index(kLabelIndex, label_index_value(in->key, value))) {
      if (!obj || (!ns.empty() && obj->ns() != ns) || !selector.matches(obj->labels())) continue;
      out.push_back(std::move(obj));
    }
  }
  return out;
}

std::size_t KindCache::size() const {
  std::size_t n = 0;
  for (const auto& i : informers_) n += i->store().size();
  return n;
}

bool KindCache::has_synced() const {
  return std::all_of(informers_.begin(), informers_.end(),
                     [](const auto& i) { return i->has_synced(); });
}

std::vector<std::pair<std::string, InformerHealth>> KindCache::health() const {
  std::vector<std::pair<std::string, InformerHealth>> out;
  out.reserve(informers_.size());
  for (const auto& i : informers_) out.emplace_back(i->options().ns, i->health());
  return out;
}

void KindCache::add_handler(const EventHandler& handler) {
  for (const auto& i : informers_) i->add_handler(handler);
}

void KindCache::add_index(const std::string& name, const IndexFunc& fn) {
  for (const auto& i : informers_) i->add_index(name, fn);
}

void KindCache::add_label_index() {
  add_index(std::string(kLabelIndex), label_index());
  label_index_ = true;
}

void KindCache::start() {
  for (const auto& i : informers_) i->start();
}

void KindCache::stop() {
  for (const auto& i : informers_) i->stop();
}

InformerFactory::InformerFactory(boost::asio::any_io_executor executor, ApiClient& client,
                                 std::vector<std::string> namespaces)
    : executor_(std::move(executor)), client_(client), namespaces_(std::move(namespaces)) {
  std::sort(namespaces_.begin(), namespaces_.end());
  namespaces_.erase(std::unique(namespaces_.begin(), namespaces_.end()), namespaces_.end());
}

KindCache& InformerFactory::cache(const CacheSpec& spec) {
  const std::lock_guard lock(mutex_);
  auto it = caches_.find(spec);
  if (it != caches_.end()) return *it->second;
  std::vector<std::unique_ptr<Informer>> informers;
  const auto make = [&](std::string ns) {
    InformerOptions o;
    o.gvk = spec.gvk;
    o.ns = std::move(ns);
    o.label_selector = spec.label_selector;
    o.field_selector = spec.field_selector;
    o.transform = spec.transform;
    o.stall_timeout = stall_timeout_;
    informers.push_back(make_informer(executor_, client_, std::move(o)));
  };
  if (!spec.namespaced || namespaces_.empty()) {
    make("");
  } else {
    for (const auto& ns : namespaces_) make(ns);
  }
  auto cache = std::make_unique<KindCache>(spec, std::move(informers));
  KindCache& ref = *cache;
  caches_.emplace(spec, std::move(cache));
  if (!client_.registry().find(spec.gvk) && unserved_.emplace(spec.gvk, true).second) {
    net::log::error(
        "kind not served by the API server; is its CRD installed? (the project's "
        "CRDs are in deploy/crds/) Waiting for it to appear",
        {{"kind", spec.gvk.api_version() + " " + spec.gvk.kind}});
    if (started_) start_discovery_poll();
  }
  if (started_) ref.start();
  return ref;
}

void InformerFactory::start_discovery_poll() {
  if (polling_) return;
  polling_ = true;
  boost::asio::co_spawn(executor_, poll_discovery(stopped_), boost::asio::detached);
}

// Runs while some kind is unserved; owns nothing but a timer. `stopped` outlives the
// factory so a poll still sleeping after stop() never touches a destroyed object.
boost::asio::awaitable<void> InformerFactory::poll_discovery(
    std::shared_ptr<std::atomic<bool>> stopped) {
  boost::asio::steady_timer timer(executor_);
  for (;;) {
    timer.expires_after(discovery_period_);
    boost::system::error_code ec;
    co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    if (stopped->load()) co_return;
    if (auto r = co_await client_.discover(); !r) continue;
    if (stopped->load()) co_return;
    const std::lock_guard lock(mutex_);
    bool any = false;
    for (auto& [gvk, waiting] : unserved_) {
      if (waiting && client_.registry().find(gvk)) {
        waiting = false;
        net::log::info("kind is now served; its cache starts filling",
                       {{"kind", gvk.api_version() + " " + gvk.kind}});
      }
      any = any || waiting;
    }
    if (!any) {
      polling_ = false;
      co_return;
    }
  }
}

void InformerFactory::start() {
  const std::lock_guard lock(mutex_);
  started_ = true;
  for (auto& [spec, cache] : caches_) cache->start();
  if (std::any_of(unserved_.begin(), unserved_.end(), [](const auto& kv) { return kv.second; })) {
    start_discovery_poll();
  }
}

void InformerFactory::stop() {
  const std::lock_guard lock(mutex_);
  stopped_->store(true);
  for (auto& [spec, cache] : caches_) cache->stop();
}

bool InformerFactory::all_synced() const {
  const std::lock_guard lock(mutex_);
  return std::all_of(caches_.begin(), caches_.end(),
                     [](const auto& kv) { return kv.second->has_synced(); });
}

std::vector<std::string> InformerFactory::unsynced() const {
  const std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [spec, cache] : caches_) {
    if (cache->has_synced()) continue;
    const auto it = unserved_.find(spec.gvk);
    out.push_back(it != unserved_.end() && it->second
                      ? spec.gvk.kind + " (not served: is its CRD installed?)"
                      : spec.gvk.kind);
  }
  return out;
}

std::vector<std::string> InformerFactory::disconnected(net::Duration threshold) const {
  const auto now = net::steady_clock().now();
  const std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [spec, cache] : caches_) {
    for (const auto& [ns, h] : cache->health()) {
      if (!h.synced || !h.disconnected_since || now - *h.disconnected_since <= threshold) {
        continue;
      }
      const auto seconds =
          std::chrono::duration_cast<std::chrono::seconds>(now - *h.disconnected_since).count();
      out.push_back(spec.gvk.kind + (ns.empty() ? "" : " in " + ns) + " (disconnected for " +
                    std::to_string(seconds) + " s)");
    }
  }
  return out;
}

}  // namespace aop::k8s
