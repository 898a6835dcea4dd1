// ClockTimer: a wait ends when the injected clock reaches the deadline (a FakeClock moves
// only when the test advances it and wakes the timer), when notified (also when the
// notification came first), or for good when cancelled.
#include "reconcile/runtime/clock_timer.hpp"

#include <gtest/gtest.h>

#include <optional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

namespace aop::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Woke = ClockTimer::Woke;

struct Waiter {
  Waiter(boost::asio::io_context& io, ClockTimer& timer, net::TimePoint deadline) {
    boost::asio::co_spawn(
        io,
        [&timer, deadline, this]() -> boost::asio::awaitable<void> {
          woke = co_await timer.wait_until(deadline);
        },
        boost::asio::detached);
  }
  std::optional<Woke> woke;
};

// Runs what is ready now (the fake clock does not move by itself).
void settle(boost::asio::io_context& io) {
  io.restart();
  io.run_for(milliseconds(20));
}

TEST(ClockTimer, AWaitEndsWhenTheClockReachesTheDeadline) {
  boost::asio::io_context io;
  net::FakeClock clock;
  ClockTimer timer(io.get_executor(), clock);
  Waiter w(io, timer, clock.now() + seconds(10));
  settle(io);
  EXPECT_FALSE(w.woke.has_value());
  clock.advance(seconds(9));
  timer.wake();
  settle(io);
  EXPECT_FALSE(w.woke.has_value()) << "a wake before the deadline only looks at the clock";
  clock.advance(seconds(1));
  timer.wake();
  settle(io);
  EXPECT_EQ(w.woke, Woke::deadline);
  // A deadline already past ends the next wait at once.
  Waiter past(io, timer, clock.now());
  settle(io);
  EXPECT_EQ(past.woke, Woke::deadline);
}

TEST(ClockTimer, ANotificationEndsTheWaitAndOneThatCameFirstIsNotLost) {
  boost::asio::io_context io;
  net::FakeClock clock;
  ClockTimer timer(io.get_executor(), clock);
  Waiter w(io, timer, clock.now() + seconds(10));
  settle(io);
  timer.notify();
  settle(io);
  EXPECT_EQ(w.woke, Woke::notified);

  timer.notify();  // before anyone waits
  Waiter late(io, timer, clock.now() + seconds(10));
  settle(io);
  EXPECT_EQ(late.woke, Woke::notified);
  // Consumed: the next wait waits again.
  Waiter next(io, timer, clock.now() + seconds(10));
  settle(io);
  EXPECT_FALSE(next.woke.has_value());
  timer.cancel();
  settle(io);
  EXPECT_EQ(next.woke, Woke::cancelled);
}

TEST(ClockTimer, CancelEndsEveryWaitForGood) {
  boost::asio::io_context io;
  net::FakeClock clock;
  ClockTimer timer(io.get_executor(), clock);
  timer.cancel();
  Waiter w(io, timer, clock.now() + seconds(10));
  settle(io);
  EXPECT_EQ(w.woke, Woke::cancelled);
}

}  // namespace
}  // namespace aop::runtime
