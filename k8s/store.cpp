#include "k8s/store.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace aop::k8s {

std::string label_index_value(std::string_view key, std::string_view value) {
  std::string out;
  out.reserve(key.size() + 1 + value.size());
  out += key;
  out += '=';
  out += value;
  return out;
}

IndexFunc label_index() {
  return [](const Object& obj) {
    std::vector<std::string> out;
    const auto labels = obj.at({"metadata", "labels"});
    if (!labels || !labels->is_object()) return out;
    for (const auto& [k, v] : labels->get_object()) {
      if (v.is_string()) out.push_back(label_index_value(k, v.get_string()));
    }
    return out;
  };
}

namespace {

constexpr std::string_view kNamespaceIndex = "namespace";

int compare_key(const Object& a, std::string_view ns, std::string_view name) {
  if (const int c = a.ns().compare(ns); c != 0) return c;
  return a.name().compare(name);
}

}  // namespace

bool Store::KeyLess::operator()(const ObjectPtr& a, const ObjectPtr& b) const {
  return compare_key(*a, b->ns(), b->name()) < 0;
}
bool Store::KeyLess::operator()(const ObjectPtr& a, const ObjectKey& b) const {
  return compare_key(*a, b.ns, b.name) < 0;
}
bool Store::KeyLess::operator()(const ObjectKey& a, const ObjectPtr& b) const {
  return compare_key(*b, a.ns, a.name) > 0;
}

Store::Store() = default;
Store::~Store() = default;

void Store::add_index(std::string name, IndexFunc fn) {
  const std::lock_guard writer(writer_mutex_);
  Index index{std::move(fn), {}};
  // Indexes added after filling still index what is there.
  for (const auto& obj : objects_) {
    for (auto& v : index.fn(*obj)) index.entries[std::move(v)].insert(obj);
  }
  const std::unique_lock lock(mutex_);
  indexes_.insert_or_assign(std::move(name), std::move(index));
}

ObjectPtr Store::get(const ObjectKey& key) const {
  const std::shared_lock lock(mutex_);
  const auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : *it;
}

ObjectPtr Store::get(std::string_view ns, std::string_view name) const {
  return get(ObjectKey{std::string(ns), std::string(name)});
}

std::vector<ObjectPtr> Store::list() const {
  const std::shared_lock lock(mutex_);
  return {objects_.begin(), objects_.end()};
}

std::vector<ObjectPtr> Store::list_namespace(std::string_view ns) const {
  const ObjectKey first{std::string(ns), {}};
  const std::shared_lock lock(mutex_);
  std::vector<ObjectPtr> out;
  for (auto it = objects_.lower_bound(first); it != objects_.end() && (*it)->ns() == ns; ++it) {
    out.push_back(*it);
  }
  return out;
}

std::vector<ObjectPtr> Store::by_index(std::string_view index, std::string_view value) const {
  if (index == kNamespaceIndex) return list_namespace(value);
  const std::shared_lock lock(mutex_);
  const auto idx = indexes_.find(index);
  if (idx == indexes_.end()) return {};
  const auto entry = idx->second.entries.find(std::string(value));
  if (entry == idx->second.entries.end()) return {};
  return {entry->second.begin(), entry->second.end()};
}

std::size_t Store::size() const {
  const std::shared_lock lock(mutex_);
  return objects_.size();
}

Store::IndexValues Store::index_values(Indexes& indexes, const Object& obj) {
  IndexValues out;
  out.reserve(indexes.size());
  for (auto& [name, index] : indexes) out.emplace_back(&index, index.fn(obj));
  return out;
}

void Store::index_add(const IndexValues& values, const ObjectPtr& obj) {
  for (const auto& [index, vals] : values) {
    for (const auto& v : vals) index->entries[v].insert(obj);
  }
}

void Store::index_remove(const IndexValues& values, const ObjectPtr& obj) {
  for (const auto& [index, vals] : values) {
    for (const auto& v : vals) {
      const auto entry = index->entries.find(v);
      if (entry == index->entries.end()) continue;
      const auto it = entry->second.find(obj);
      // Only the very object: a newer object under the same key may be indexed already.
      if (it != entry->second.end() && *it == obj) entry->second.erase(it);
      if (entry->second.empty()) index->entries.erase(entry);
    }
  }
}

std::optional<StoreChange> Store::upsert(ObjectPtr obj) {
  if (!obj) return std::nullopt;
  const std::lock_guard writer(writer_mutex_);
  // Index values are computed before taking the exclusive lock where possible; here the
  // work under the lock is a handful of tree operations.
  const auto it = objects_.find(obj);
  if (it == objects_.end()) {
    const IndexValues values = index_values(indexes_, *obj);
    const std::unique_lock lock(mutex_);
    objects_.insert(obj);
    index_add(values, obj);
    return StoreChange{StoreChange::Type::added, nullptr, std::move(obj)};
  }
  ObjectPtr old = *it;
  if (!obj->resource_version().empty() && old->resource_version() == obj->resource_version()) {
    return std::nullopt;
  }
  const IndexValues old_values = index_values(indexes_, *old);
  const IndexValues new_values = index_values(indexes_, *obj);
  {
    const std::unique_lock lock(mutex_);
    index_remove(old_values, old);
    auto node = objects_.extract(it);
    node.value() = obj;
    objects_.insert(std::move(node));
    index_add(new_values, obj);
  }
  return StoreChange{StoreChange::Type::updated, std::move(old), std::move(obj)};
}

std::optional<StoreChange> Store::remove(const ObjectKey& key) {
  const std::lock_guard writer(writer_mutex_);
  const auto it = objects_.find(key);
  if (it == objects_.end()) return std::nullopt;
  ObjectPtr old = *it;
  const IndexValues values = index_values(indexes_, *old);
  {
    const std::unique_lock lock(mutex_);
    index_remove(values, old);
    objects_.erase(it);
  }
  return StoreChange{StoreChange::Type::deleted, std::move(old), nullptr};
}

std::vector<StoreChange> Store::replace(std::vector<ObjectPtr> objects) {
  const std::lock_guard writer(writer_mutex_);
  // Build the new contents and indexes while readers keep reading the old ones (only
  // writers modify objects_, and we are the writer).
  ObjectSet next;
  std::vector<StoreChange> changes;
  for (auto& obj : objects) {
    if (!obj) continue;
    const auto old = objects_.find(obj);
    if (old == objects_.end()) {
      changes.push_back({StoreChange::Type::added, nullptr, obj});
    } else if (obj->resource_version().empty() ||
               (*old)->resource_version() != obj->resource_version()) {
      changes.push_back({StoreChange::Type::updated, *old, obj});
    } else {
      obj = *old;  // unchanged: keep the object readers may already hold
    }
    // Lists come sorted by namespace and name (the API server's order), so the end is
    // the likely place: one comparison per object instead of a walk down the tree. A
    // later duplicate of a key replaces the earlier one.
    const auto pos = next.emplace_hint(next.end(), obj);
    if (*pos != obj) {
      auto node = next.extract(pos);
      node.value() = obj;
      next.insert(std::move(node));
    }
  }
  for (const auto& old : objects_) {
    if (next.find(old) == next.end()) changes.push_back({StoreChange::Type::deleted, old, nullptr});
  }
  Indexes indexes;
  for (const auto& [name, index] : indexes_) indexes.emplace(name, Index{index.fn, {}});
  for (const auto& obj : next) index_add(index_values(indexes, *obj), obj);

  {
    const std::unique_lock lock(mutex_);
    objects_.swap(next);
    indexes_.swap(indexes);
  }
  // The old contents are freed here, outside the lock.
  return changes;
}

}  // namespace aop::k8s
