#include "net/rate_limiter.hpp"

#include <algorithm>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace aop::net {

TokenBucket::TokenBucket(double qps, std::uint32_t burst, TimePoint now)
    : qps_(qps), burst_(std::max<std::uint32_t>(burst, 1)), tokens_(burst_), last_(now) {}

void TokenBucket::refill(TimePoint now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(static_cast<double>(burst_), tokens_ + elapsed * qps_);
  last_ = now;
}

double TokenBucket::tokens(TimePoint now) const {
  TokenBucket copy = *this;
  copy.refill(now);
  return copy.tokens_;
}

Duration TokenBucket::reserve(TimePoint now) {
  if (qps_ <= 0) return Duration::zero();
  refill(now);
  tokens_ -= 1.0;
  if (tokens_ >= 0) return Duration::zero();
  const std::chrono::duration<double> wait(-tokens_ / qps_);
  return std::chrono::ceil<Duration>(wait);
}

bool TokenBucket::try_take(TimePoint now) {
  if (qps_ <= 0) return true;
  refill(now);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

RateLimiter::RateLimiter(double qps, std::uint32_t burst, const Clock& clock)
    : clock_(clock), bucket_(qps, burst, clock.now()) {}

boost::asio::awaitable<void> RateLimiter::acquire() {
  Duration wait;
  {
    const std::lock_guard lock(mutex_);
    wait = bucket_.reserve(clock_.now());
  }
  if (wait <= Duration::zero()) co_return;
  total_wait_.fetch_add(wait.count(), std::memory_order_relaxed);
  waits_.fetch_add(1, std::memory_order_relaxed);
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, wait);
  boost::system::error_code ec;  // cancellation just ends the wait early
  co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
}

}  // namespace aop::net
