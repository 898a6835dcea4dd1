// Read access to the informer caches of the kinds a controller owns, for the apply
// engine: it reads live objects from here (never from the API server) to decide whether
// anything must be written, and finds owned objects to prune through an owner-UID index.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/informer.hpp"
#include "k8s/informer_factory.hpp"
#include "k8s/object.hpp"
#include "k8s/store.hpp"
#include "reconcile/runtime/dependency_index.hpp"

namespace aop::runtime {

class ObjectCache {
 public:
  virtual ~ObjectCache() = default;
  // nullptr when absent (or when the kind is not cached).
  virtual k8s::ObjectPtr get(const GroupKind& kind, const k8s::ObjectKey& key) const = 0;
  // Objects of `kind` in namespace `ns` ("" = every namespace).
  virtual std::vector<k8s::ObjectPtr> list(const GroupKind& kind, std::string_view ns) const = 0;
  // Objects of `kind` with an ownerReference whose uid is `owner_uid`.
  virtual std::vector<k8s::ObjectPtr> owned_by(const GroupKind& kind,
                                               std::string_view owner_uid) const = 0;
  // Whether `kind` is cached at all.
  virtual bool has(const GroupKind& kind) const = 0;
};

// The store index under which objects are filed by the UIDs of their owners.
inline constexpr std::string_view kOwnerUidIndex = "aop.owner-uid";
k8s::IndexFunc owner_uid_index();

// An ObjectCache over informers' (or bare) stores. add() files the owner-UID index, so it
// must be called before the informer starts (or the store is filled). Not thread-safe
// while being filled with add(); thread-safe for reads afterwards.
class InformerCache final : public ObjectCache {
 public:
  void add(k8s::Informer& informer);
  void add(const GroupKind& kind, k8s::Store& store);

  // True when every added informer has synced (stores added bare count as synced).
  bool has_synced() const;

  k8s::ObjectPtr get(const GroupKind& kind, const k8s::ObjectKey& key) const override;
  std::vector<k8s::ObjectPtr> list(const GroupKind& kind, std::string_view ns) const override;
  std::vector<k8s::ObjectPtr> owned_by(const GroupKind& kind,
                                       std::string_view owner_uid) const override;
  bool has(const GroupKind& kind) const override;

 private:
  struct Entry {
    k8s::Store* store = nullptr;
    k8s::Informer* informer = nullptr;  // nullptr for a bare store
  };
  const Entry* find(const GroupKind& kind) const;
  std::map<GroupKind, Entry> entries_;
};

// An ObjectCache over the shared InformerFactory's KindCaches of the owned kinds (what
// both controllers use). owned_by() answers from the owner-UID index when the caches
// have it (add owner_uid_index() to a KindCache before it starts; a controller that
// prunes by namespace need not pay for it). Filled before the caches start; read-only
// and thread-safe afterwards.
class KindCacheView final : public ObjectCache {
 public:
  void add(const k8s::GroupVersionKind& gvk, k8s::KindCache& cache);

  bool has_synced() const;

  k8s::ObjectPtr get(const GroupKind& kind, const k8s::ObjectKey& key) const override;
  std::vector<k8s::ObjectPtr> list(const GroupKind& kind, std::string_view ns) const override;
  std::vector<k8s::ObjectPtr> owned_by(const GroupKind& kind,
                                       std::string_view owner_uid) const override;
  bool has(const GroupKind& kind) const override;

 private:
  const k8s::KindCache* find(const GroupKind& kind) const;
  std::map<GroupKind, k8s::KindCache*> caches_;
};

}  // namespace aop::runtime
