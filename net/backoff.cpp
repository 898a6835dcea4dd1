#include "net/backoff.hpp"

#include <algorithm>

namespace aop::net {

std::uint64_t random_seed() {
  thread_local std::mt19937_64 seeds(std::random_device{}());
  return seeds();
}

Backoff::Backoff(BackoffPolicy policy, std::uint64_t seed)
    : policy_(policy), base_(policy.initial), rng_(seed) {
  policy_.jitter = std::clamp(policy_.jitter, 0.0, 1.0);
  policy_.factor = std::max(policy_.factor, 1.0);
  base_ = std::min(policy_.initial, policy_.cap);
}

void Backoff::reset() {
  base_ = std::min(policy_.initial, policy_.cap);
  retry_at_.reset();
  failures_ = 0;
}

Duration Backoff::next(TimePoint now) {
  if (retry_at_ && now - *retry_at_ >= policy_.reset_after) reset();

  const Duration base = base_;
  // Grow in floating point: factor^n overflows integer nanoseconds long before the cap
  // matters.
  const double grown = static_cast<double>(base.count()) * policy_.factor;
  const double cap = static_cast<double>(policy_.cap.count());
  base_ = Duration(static_cast<Duration::rep>(std::min(grown, cap)));

  Duration delay = base;
  if (policy_.jitter > 0) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double scale = 1.0 - policy_.jitter * unit(rng_);
    delay = Duration(static_cast<Duration::rep>(static_cast<double>(base.count()) * scale));
  }
  retry_at_ = now + delay;
  ++failures_;
  return delay;
}

}  // namespace aop::net
