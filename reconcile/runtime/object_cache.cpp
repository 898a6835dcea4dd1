#include "reconcile/runtime/object_cache.hpp"

#include <algorithm>

namespace aop::runtime {

k8s::IndexFunc owner_uid_index() {
  return [](const k8s::Object& obj) {
    std::vector<std::string> uids;
    for (const auto& ref : obj.owner_references()) {
      if (!ref.uid.empty()) uids.push_back(ref.uid);
    }
    std::sort(uids.begin(), uids.end());
    uids.erase(std::unique(uids.begin(), uids.end()), uids.end());
    return uids;
  };
}

void InformerCache::add(k8s::Informer& informer) {
  informer.add_index(std::string(kOwnerUidIndex), owner_uid_index());
  entries_[GroupKind::of(informer.options().gvk)] = Entry{&informer.store(), &informer};
}

void InformerCache::add(const GroupKind& kind, k8s::Store& store) {
  store.add_index(std::string(kOwnerUidIndex), owner_uid_index());
  entries_[kind] = Entry{&store, nullptr};
}

bool InformerCache::has_synced() const {
  return std::all_of(entries_.begin(), entries_.end(), [](const auto& e) {
    return e.second.informer == nullptr || e.second.informer->has_synced();
  });
}

const InformerCache::Entry* InformerCache::find(const GroupKind& kind) const {
  const auto it = entries_.find(kind);
  return it == entries_.end() ? nullptr : &it->second;
}

k8s::ObjectPtr InformerCache::get(const GroupKind& kind, const k8s::ObjectKey& key) const {
  const Entry* e = find(kind);
  return e ? e->store->get(key) : nullptr;
}

std::vector<k8s::ObjectPtr> InformerCache::list(const GroupKind& kind, std::string_view ns) const {
  const Entry* e = find(kind);
  if (!e) return {};
  return ns.empty() ? e->store->list() : e->store->list_namespace(ns);
}

std::vector<k8s::ObjectPtr> InformerCache::owned_by(const GroupKind& kind,
                                                    std::string_view owner_uid) const {
  const Entry* e = find(kind);
  if (!e) return {};
  return e->store->by_index(kOwnerUidIndex, owner_uid);
}

bool InformerCache::has(const GroupKind& kind) const {
  return find(kind) != nullptr;
}

void KindCacheView::add(const k8s::GroupVersionKind& gvk, k8s::KindCache& cache) {
  caches_[GroupKind::of(gvk)] = &cache;
}

bool KindCacheView::has_synced() const {
  return std::all_of(caches_.begin(), caches_.end(),
                     [](const auto& kv) { return kv.second->has_synced(); });
}

const k8s::KindCache* KindCacheView::find(const GroupKind& kind) const {
  const auto it = caches_.find(kind);
  return it == caches_.end() ? nullptr : it->second;
}

k8s::ObjectPtr KindCacheView::get(const GroupKind& kind, const k8s::ObjectKey& key) const {
  const k8s::KindCache* c = find(kind);
  return c != nullptr ? c->get(key) : nullptr;
}

std::vector<k8s::ObjectPtr> KindCacheView::list(const GroupKind& kind, std::string_view ns) const {
  const k8s::KindCache* c = find(kind);
  return c != nullptr ? c->list(ns) : std::vector<k8s::ObjectPtr>{};
}

std::vector<k8s::ObjectPtr> KindCacheView::owned_by(const GroupKind& kind,
                                                    std::string_view owner_uid) const {
  const k8s::KindCache* c = find(kind);
  return c != nullptr ? c->by_index(kOwnerUidIndex, owner_uid) : std::vector<k8s::ObjectPtr>{};
}

bool KindCacheView::has(const GroupKind& kind) const {
  return find(kind) != nullptr;
}

}  // namespace aop::runtime
