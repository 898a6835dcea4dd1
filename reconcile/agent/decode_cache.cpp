#include "reconcile/agent/decode_cache.hpp"

namespace aop::agent {

std::shared_ptr<const void> DecodeCache::lookup(std::string_view uid, std::string_view rv) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(uid);
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

std::optional<std::vector<Problem>> DecodeCache::kept_checks(std::string_view uid,
                                                             std::string_view rv,
                                                             std::string_view interval) const {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(uid);
  if (it == entries_.end() || it->second.resource_version != rv) return std::nullopt;
  const auto c = it->second.checks.find(interval);
  if (c == it->second.checks.end()) return std::nullopt;
  return c->second;
}

void DecodeCache::keep_checks(std::string_view uid, std::string_view rv, std::string_view interval,
                              const std::vector<Problem>& problems) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(uid);
  // Only with the decoded version they were made for.
  if (it == entries_.end() || it->second.resource_version != rv) return;
  it->second.checks.insert_or_assign(std::string(interval), problems);
}

void DecodeCache::forget(std::string_view uid) {
  const std::lock_guard lock(mutex_);
  if (const auto it = entries_.find(uid); it != entries_.end()) entries_.erase(it);
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
