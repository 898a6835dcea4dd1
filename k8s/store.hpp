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
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/object.hpp"

namespace aop::k8s {

// Values under which an object is indexed (e.g. the Secrets it references).
using IndexFunc = std::function<std::vector<std::string>(const Object&)>;

// An index of objects by label: one value `key=value` per label (neither a label key nor
// a label value can hold `=`).
inline constexpr std::string_view kLabelIndex = "aop.labels";
IndexFunc label_index();
std::string label_index_value(std::string_view key, std::string_view value);

struct StoreChange {
  enum class Type { added, updated, deleted };
  Type type;
  ObjectPtr old_object;  // updated, deleted
  ObjectPtr new_object;  // added, updated
};

class Store {
 public:
  Store();
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Adds an index; call before the store is filled. The "namespace" index exists always.
  // Index functions must be pure (they are re-run on the old object to unindex it).
  void add_index(std::string name, IndexFunc fn);

  ObjectPtr get(const ObjectKey& key) const;
  ObjectPtr get(std::string_view ns, std::string_view name) const;
  std::vector<ObjectPtr> list() const;
  std::vector<ObjectPtr> list_namespace(std::string_view ns) const;
  // Objects indexed under `value`; for "namespace" the same as list_namespace(value).
  // Empty for an unknown index.
  std::vector<ObjectPtr> by_index(std::string_view index, std::string_view value) const;
  std::size_t size() const;

  // Writer side (the reflector). Each returns the change it made, if any: an upsert of
  // an object with the resourceVersion already stored is not a change.
  std::optional<StoreChange> upsert(ObjectPtr obj);
  std::optional<StoreChange> remove(const ObjectKey& key);
  // Replaces everything; returns added/updated/deleted changes relative to before.
  // The new contents and indexes are built without blocking readers and swapped in at
  // once: a reader sees either the old or the new contents, never a mix.
  std::vector<StoreChange> replace(std::vector<ObjectPtr> objects);

  // Orders objects by (namespace, name); lookups by a key without an object.
  struct KeyLess {
    using is_transparent = void;
    bool operator()(const ObjectPtr& a, const ObjectPtr& b) const;
    bool operator()(const ObjectPtr& a, const ObjectKey& b) const;
    bool operator()(const ObjectKey& a, const ObjectPtr& b) const;
  };
  // Ordered by key. Keyed by the object's own namespace and name, so an entry costs one
  // tree node (the namespace index is a range of it, at no extra cost).
  using ObjectSet = std::set<ObjectPtr, KeyLess>;

 private:
  struct Index {
    IndexFunc fn;
    std::unordered_map<std::string, ObjectSet> entries;
  };
  using Indexes = std::map<std::string, Index, std::less<>>;

  // An object's values in every index, computed before taking the exclusive lock so
  // that index functions (which may materialize JSON) never run while readers wait.
  using IndexValues = std::vector<std::pair<Index*, std::vector<std::string>>>;
  static IndexValues index_values(Indexes& indexes, const Object& obj);
  static void index_add(const IndexValues& values, const ObjectPtr& obj);
  static void index_remove(const IndexValues& values, const ObjectPtr& obj);

  // Serialises writers (upsert/remove/replace/add_index). A writer holding it may read
  // objects_ and indexes_ without mutex_, since only writers modify them.
  std::mutex writer_mutex_;
  mutable std::shared_mutex mutex_;  // owns objects_ and indexes_ (readers: shared)
  ObjectSet objects_;
  Indexes indexes_;
};

}  // namespace aop::k8s
