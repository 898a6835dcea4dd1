#include "reconcile/runtime/queue_core.hpp"

#include <algorithm>
#include <cmath>

namespace aop::runtime {

QueueCore::QueueCore(QueuePolicy policy, TimePoint now)
    : policy_(policy), bucket_(policy.retry_qps, policy.retry_burst, now) {}

void QueueCore::push_ready(const std::string& key, TimePoint now) {
  queue_.push_back(key);
  queued_at_[key] = now;
}

QueueCore::AddResult QueueCore::add(const std::string& key, TimePoint now) {
  if (shut_down_) return AddResult::shut_down;
  // An immediate add supersedes a delayed one (earliest due time wins).
  waiting_due_.erase(key);
  if (!dirty_.insert(key).second) return AddResult::pending;
  if (processing_.contains(key)) return AddResult::deferred;
  push_ready(key, now);
  return AddResult::queued;
}

void QueueCore::add_after(const std::string& key, Duration delay, TimePoint now) {
  if (shut_down_) return;
  if (delay <= Duration::zero()) {
    add(key, now);
    return;
  }
  // Already pending in the ready queue: it runs sooner than this anyway.
  if (dirty_.contains(key)) return;
  const TimePoint at = now + delay;
  auto [it, inserted] = waiting_due_.try_emplace(key, at);
  if (!inserted) {
    if (it->second <= at) return;
    it->second = at;
  }
  heap_.push(Due{at, seq_++, key});
}

Duration QueueCore::item_backoff(int failures, FailureKind kind) const {
  if (failures <= 0) return Duration::zero();
  // Grow in floating point: 2^n overflows integer nanoseconds long before the cap.
  const double grown =
      static_cast<double>(policy_.base_delay.count()) * std::pow(2.0, failures - 1);
  const Duration max = kind == FailureKind::api ? std::min(policy_.api_max_delay, policy_.max_delay)
                                                : policy_.max_delay;
  const double cap = static_cast<double>(max.count());
  return Duration(static_cast<Duration::rep>(std::min(grown, cap)));
}

Duration QueueCore::add_rate_limited(const std::string& key, TimePoint now, FailureKind kind) {
  if (shut_down_) return Duration::zero();
  const int failures = ++failures_[key];
  const Duration delay = std::max(item_backoff(failures, kind), bucket_.reserve(now));
  add_after(key, delay, now);
  return delay;
}

void QueueCore::forget(const std::string& key) {
  failures_.erase(key);
}

int QueueCore::num_requeues(const std::string& key) const {
  const auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void QueueCore::drop_stale_heap_top() {
  while (!heap_.empty()) {
    const Due& top = heap_.top();
    const auto it = waiting_due_.find(top.key);
    if (it != waiting_due_.end() && it->second == top.at) return;
    heap_.pop();
  }
}

void QueueCore::promote_due(TimePoint now) {
  for (;;) {
    drop_stale_heap_top();
    if (heap_.empty() || heap_.top().at > now) return;
    std::string key = heap_.top().key;
    heap_.pop();
    waiting_due_.erase(key);
    if (!shut_down_ && dirty_.insert(key).second && !processing_.contains(key)) {
      push_ready(key, now);
    }
  }
}

std::optional<TimePoint> QueueCore::next_due() {
  drop_stale_heap_top();
  if (heap_.empty()) return std::nullopt;
  return heap_.top().at;
}

std::optional<QueueCore::Item> QueueCore::get(TimePoint now) {
  promote_due(now);
  if (queue_.empty()) return std::nullopt;
  Item item;
  item.key = std::move(queue_.front());
  queue_.pop_front();
  dirty_.erase(item.key);
  if (const auto it = queued_at_.find(item.key); it != queued_at_.end()) {
    item.queued_for = now - it->second;
    queued_at_.erase(it);
  }
  processing_[item.key] = now;
  return item;
}

std::optional<Duration> QueueCore::done(const std::string& key, TimePoint now) {
  const auto it = processing_.find(key);
  if (it == processing_.end()) return std::nullopt;
  const Duration worked = now - it->second;
  processing_.erase(it);
  // Re-added while it was processed: it runs again now, unless abandoned at shutdown.
  if (dirty_.contains(key)) {
    if (shut_down_ && !drain_) {
      dirty_.erase(key);
    } else {
      push_ready(key, now);
    }
  }
  return worked;
}

void QueueCore::shut_down(bool drain) {
  if (shut_down_) return;
  shut_down_ = true;
  drain_ = drain;
  // Delayed keys never run after shutdown.
  waiting_due_.clear();
  heap_ = {};
  if (!drain) {
    for (const auto& key : queue_) dirty_.erase(key);
    queue_.clear();
    queued_at_.clear();
  }
}

bool QueueCore::finished() const {
  if (!shut_down_ || !queue_.empty()) return false;
  if (!drain_) return true;
  // Draining: an in-flight key that was re-added will be queued by done().
  return std::none_of(processing_.begin(), processing_.end(),
                      [&](const auto& p) { return dirty_.contains(p.first); });
}

Duration QueueCore::unfinished_work(TimePoint now) const {
  Duration total{};
  for (const auto& [key, start] : processing_) total += now - start;
  return total;
}

Duration QueueCore::longest_running(TimePoint now) const {
  Duration longest{};
  for (const auto& [key, start] : processing_) longest = std::max(longest, now - start);
  return longest;
}

}  // namespace aop::runtime
