// A thread-safe cache of one resource's objects, filled by a reflector.
//
// Readers on any thread (reconciles on their strands, event handlers) take a shared
// lock only long enough to copy out ObjectPtrs; objects are immutable, so nothing is
// held while they are used. The single writer (the informer's reflector) takes the
// exclusive lock per change, or once for a relist, which replaces the whole contents
// atomically and reports what changed (so objects deleted while disconnected are seen
// as deletions, never kept as ghosts).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/object.hpp"

namespace aop::k8s {

// Values under which an object is indexed (e.g. the Secrets it references).
using IndexFunc = std::function<std::vector<std::string>(const Object&)>;

struct StoreChange {
  enum class Type { added, updated, deleted };
  Type type;
  ObjectPtr old_object;  // updated, deleted
  ObjectPtr new_object;  // added, updated
};

class Store {
 public:
  Store();
  // Adds an index; call before the store is filled. The "namespace" index exists always.
  void add_index(std::string name, IndexFunc fn);

  ObjectPtr get(const ObjectKey& key) const;
  std::vector<ObjectPtr> list() const;
  std::vector<ObjectPtr> list_namespace(std::string_view ns) const;
  std::vector<ObjectPtr> by_index(std::string_view index, std::string_view value) const;
  std::size_t size() const;

  // Writer side (the reflector). Each returns the change it made, if any: an upsert of
  // an object with the resourceVersion already stored is not a change.
  std::optional<StoreChange> upsert(ObjectPtr obj);
  std::optional<StoreChange> remove(const ObjectKey& key);
  // Replaces everything; returns added/updated/deleted changes relative to before.
  std::vector<StoreChange> replace(std::vector<ObjectPtr> objects);

 private:
  void index_add(const ObjectPtr& obj);
  void index_remove(const ObjectPtr& obj);

  mutable std::shared_mutex mutex_;  // owns everything below
  std::map<ObjectKey, ObjectPtr> objects_;
  struct Index {
    IndexFunc fn;
    std::unordered_map<std::string, std::map<ObjectKey, ObjectPtr>> entries;
  };
  std::map<std::string, Index, std::less<>> indexes_;
};

}  // namespace aop::k8s
