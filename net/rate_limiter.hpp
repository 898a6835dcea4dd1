// Client-side rate limiting: a token bucket (QPS, burst) as a pure value that takes
// `now` and says how long to wait, and RateLimiter, its asynchronous wrapper that
// waits on a timer (never blocking a thread) and is safe to share between coroutines
// on any number of threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include <boost/asio/awaitable.hpp>

#include "net/clock.hpp"

namespace aop::net {

class TokenBucket {
 public:
  // Starts full (`burst` tokens). qps <= 0 means unlimited; burst is at least 1.
  TokenBucket(double qps, std::uint32_t burst, TimePoint now);

  // Takes a token and returns how long the caller must wait before acting (zero if a
  // token was available). Reservations queue up: tokens go negative and each later
  // caller waits behind the earlier ones, so N callers at once are spread 1/qps apart.
  Duration reserve(TimePoint now);

  // Takes a token only if one is available now.
  bool try_take(TimePoint now);

  // Tokens available at `now` (negative when reservations are queued).
  double tokens(TimePoint now) const;

  double qps() const { return qps_; }
  std::uint32_t burst() const { return burst_; }

 private:
  void refill(TimePoint now);

  double qps_;
  std::uint32_t burst_;
  double tokens_;
  TimePoint last_;
};

class RateLimiter {
 public:
  RateLimiter(double qps, std::uint32_t burst, const Clock& clock = steady_clock());

  // Completes when the caller may proceed. Waits on a steady_timer on the calling
  // coroutine's executor.
  boost::asio::awaitable<void> acquire();

  // Total time callers were told to wait, and how many acquisitions had to wait.
  Duration total_wait() const { return Duration(total_wait_.load(std::memory_order_relaxed)); }
  std::uint64_t waits() const { return waits_.load(std::memory_order_relaxed); }

 private:
  const Clock& clock_;
  std::mutex mutex_;  // owns bucket_
  TokenBucket bucket_;
  std::atomic<Duration::rep> total_wait_{0};
  std::atomic<std::uint64_t> waits_{0};
};

}  // namespace aop::net
