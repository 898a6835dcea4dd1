#include "reconcile/runtime/clock_timer.hpp"

#include <algorithm>
#include <mutex>
#include <optional>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace aop::runtime {

struct ClockTimer::State {
  State(boost::asio::any_io_executor ex, const net::Clock& c) : timer(std::move(ex)), clock(c) {}

  std::mutex mutex;                 // owns timer, generation, notified, cancelled
  boost::asio::steady_timer timer;  // real waiting, armed for the time left on `clock`
  const net::Clock& clock;
  std::uint64_t generation = 0;  // bumped by every wake/notify/cancel
  bool notified = false;
  bool cancelled = false;

  void poke(bool notify, bool cancel) {
    const std::lock_guard lock(mutex);
    ++generation;
    notified = notified || notify;
    cancelled = cancelled || cancel;
    timer.cancel();
  }

  // Sleeps for `left` unless poked since generation `seen`. Armed under the mutex, so
  // that poke()'s cancel never races the arming, and a poke since the caller's look is
  // not slept through. (A plain function: the initiation lambda, a class temporary with
  // a destructor, must not appear inside a co_await expression, a GCC 12 bug.)
  template <class Token>
  auto async_sleep(std::uint64_t seen, net::Duration left, Token&& token) {
    return boost::asio::async_initiate<Token, void()>(
        [this, seen, left](auto handler) {
          const std::lock_guard lock(mutex);
          if (generation != seen) {
            const auto ex = boost::asio::get_associated_executor(handler);
            boost::asio::post(ex, std::move(handler));
            return;
          }
          timer.expires_after(left);
          timer.async_wait(
              [h = std::move(handler)](boost::system::error_code) mutable { std::move(h)(); });
        },
        token);
  }

  // Why a wait ends now, if it does; else the generation the caller saw. (Kept out of
  // the coroutine: no lock lives in a coroutine frame.)
  std::optional<Woke> check(std::uint64_t& seen) {
    const std::lock_guard lock(mutex);
    if (cancelled) return Woke::cancelled;
    if (notified) {
      notified = false;
      return Woke::notified;
    }
    seen = generation;
    return std::nullopt;
  }
};

ClockTimer::ClockTimer(boost::asio::any_io_executor executor, const net::Clock& clock)
    : state_(std::make_shared<State>(std::move(executor), clock)) {}

ClockTimer::~ClockTimer() {
  cancel();
}

boost::asio::awaitable<ClockTimer::Woke> ClockTimer::wait_until(net::TimePoint deadline) {
  const auto s = state_;  // the frame keeps the state alive
  for (;;) {
    std::uint64_t seen = 0;
    if (const auto woke = s->check(seen)) co_return *woke;
    const net::TimePoint now = s->clock.now();
    if (now >= deadline) co_return Woke::deadline;
    // At most a day at a time (far deadlines would overflow the real clock's arithmetic);
    // the loop looks at the clock again anyway.
    const net::Duration left = std::min<net::Duration>(deadline - now, std::chrono::hours(24));
    co_await s->async_sleep(seen, left, boost::asio::use_awaitable);
  }
}

void ClockTimer::wake() {
  state_->poke(false, false);
}

void ClockTimer::notify() {
  state_->poke(true, false);
}

void ClockTimer::cancel() {
  state_->poke(false, true);
}

const net::Clock& ClockTimer::clock() const {
  return state_->clock;
}

}  // namespace aop::runtime
