#include "reconcile/agent/decode_cache.hpp"

namespace aop::agent {

std::shared_ptr<const void> DecodeCache::lookup(std::string_view uid, std::string_view rv) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(std::string(uid));
  if (it == entries_.end() || it->second.resource_version != rv) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  return it->second.result;
}

void DecodeCache::store(std::string_view uid, std::string_view rv,
                        std::shared_ptr<const void> result) {
  const std::lock_guard lock(mutex_);
  entries_.insert_or_assign(std::string(uid), Entry{std::string(rv), std::move(result)});
}

void DecodeCache::forget(std::string_view uid) {
  const std::lock_guard lock(mutex_);
  entries_.erase(std::string(uid));
}

std::size_t DecodeCache::size() const {
  const std::lock_guard lock(mutex_);
  return entries_.size();
}

std::uint64_t DecodeCache::hits() const {
  const std::lock_guard lock(mutex_);
  return hits_;
}

std::uint64_t DecodeCache::misses() const {
  const std::lock_guard lock(mutex_);
  return misses_;
}

}  // namespace aop::agent
