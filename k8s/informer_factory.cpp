#include "k8s/informer_factory.hpp"

#include <algorithm>

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

std::size_t KindCache::size() const {
  std::size_t n = 0;
  for (const auto& i : informers_) n += i->store().size();
  return n;
}

bool KindCache::has_synced() const {
  return std::all_of(informers_.begin(), informers_.end(),
                     [](const auto& i) { return i->has_synced(); });
}

void KindCache::add_handler(const EventHandler& handler) {
  for (const auto& i : informers_) i->add_handler(handler);
}

void KindCache::add_index(const std::string& name, const IndexFunc& fn) {
  for (const auto& i : informers_) i->add_index(name, fn);
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
  if (started_) ref.start();
  return ref;
}

void InformerFactory::start() {
  const std::lock_guard lock(mutex_);
  started_ = true;
  for (auto& [spec, cache] : caches_) cache->start();
}

void InformerFactory::stop() {
  const std::lock_guard lock(mutex_);
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
    if (!cache->has_synced()) out.push_back(spec.gvk.kind);
  }
  return out;
}

}  // namespace aop::k8s
