// ClockTimer: waits until an injected clock (net/clock.hpp) reaches a deadline.
//
// With the real clock a steady_timer does the waiting. With a FakeClock nothing happens
// until the test advances the clock and calls wake(): the waiter then looks at the clock
// again and returns once the deadline has passed. notify() ends the current wait early
// (for a completion signal: "the thing you wait for happened, look again"), and so does
// cancel(), for good.
//
// A wake()/notify() that arrives between the waiter's look at the clock and its arming
// of the timer is not lost: each bumps a generation the waiter checks before it sleeps.
//
//   ClockTimer timer(executor, clock);
//   const auto why = co_await timer.wait_until(clock.now() + period);
//   if (why == ClockTimer::Woke::cancelled) co_return;
#pragma once

#include <cstdint>
#include <memory>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "net/clock.hpp"

namespace aop::runtime {

class ClockTimer {
 public:
  enum class Woke {
    deadline,   // the clock reached the deadline
    notified,   // notify() was called (the deadline may not have passed)
    cancelled,  // cancel() was called; every later wait returns this at once
  };

  // `clock` must outlive the timer.
  ClockTimer(boost::asio::any_io_executor executor, const net::Clock& clock);
  ~ClockTimer();
  ClockTimer(const ClockTimer&) = delete;
  ClockTimer& operator=(const ClockTimer&) = delete;

  // One waiter at a time.
  boost::asio::awaitable<Woke> wait_until(net::TimePoint deadline);

  // Thread-safe. wake(): look at the clock again (tests call it after advancing a
  // FakeClock). notify(): end the current (or the next) wait with Woke::notified.
  // cancel(): end every wait with Woke::cancelled.
  void wake();
  void notify();
  void cancel();

  const net::Clock& clock() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace aop::runtime
