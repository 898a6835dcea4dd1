// Token bucket pacing and burst with a fake clock, and the asynchronous limiter.
#include "net/rate_limiter.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

namespace aop::net {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucket, BurstIsFreeThenCallersAreSpacedByOneOverQps) {
  FakeClock clock;
  TokenBucket bucket(10, 3, clock.now());  // 10 QPS, burst 3
  EXPECT_EQ(bucket.reserve(clock.now()), Duration::zero());
  EXPECT_EQ(bucket.reserve(clock.now()), Duration::zero());
  EXPECT_EQ(bucket.reserve(clock.now()), Duration::zero());
  // The bucket is empty: reservations queue 100 ms apart.
  EXPECT_EQ(bucket.reserve(clock.now()), milliseconds(100));
  EXPECT_EQ(bucket.reserve(clock.now()), milliseconds(200));
  EXPECT_EQ(bucket.reserve(clock.now()), milliseconds(300));
  // After the queue drains and one more interval passes, a token is free again.
  clock.advance(milliseconds(400));
  EXPECT_EQ(bucket.reserve(clock.now()), Duration::zero());
  EXPECT_EQ(bucket.reserve(clock.now()), milliseconds(100));
}

TEST(TokenBucket, RefillsUpToBurstOnly) {
  FakeClock clock;
  TokenBucket bucket(5, 2, clock.now());
  EXPECT_TRUE(bucket.try_take(clock.now()));
  EXPECT_TRUE(bucket.try_take(clock.now()));
  EXPECT_FALSE(bucket.try_take(clock.now()));
  clock.advance(std::chrono::hours(1));  // a long idle period refills only `burst` tokens
  EXPECT_DOUBLE_EQ(bucket.tokens(clock.now()), 2.0);
  EXPECT_TRUE(bucket.try_take(clock.now()));
  EXPECT_TRUE(bucket.try_take(clock.now()));
  EXPECT_FALSE(bucket.try_take(clock.now()));
  clock.advance(milliseconds(199));
  EXPECT_FALSE(bucket.try_take(clock.now()));
  clock.advance(milliseconds(1));
  EXPECT_TRUE(bucket.try_take(clock.now()));
}

TEST(TokenBucket, SteadyPacingMatchesQps) {
  FakeClock clock;
  TokenBucket bucket(50, 1, clock.now());
  // A caller that always waits as told achieves exactly 50 per second.
  int done = 0;
  const TimePoint start = clock.now();
  while (clock.now() - start < std::chrono::seconds(10)) {
    clock.advance(bucket.reserve(clock.now()));
    ++done;
  }
  EXPECT_NEAR(done, 500, 1);
}

TEST(TokenBucket, ZeroQpsIsUnlimited) {
  FakeClock clock;
  TokenBucket bucket(0, 1, clock.now());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(bucket.reserve(clock.now()), Duration::zero());
}

TEST(RateLimiter, WaitsWithoutBlockingAndCountsWaitTime) {
  FakeClock clock;  // frozen: the limiter computes waits from it, a real timer waits
  RateLimiter limiter(1000, 2, clock);
  boost::asio::io_context io;
  int finished = 0;
  for (int i = 0; i < 5; ++i) {
    boost::asio::co_spawn(
        io,
        [&]() -> boost::asio::awaitable<void> {
          co_await limiter.acquire();
          ++finished;
        },
        boost::asio::detached);
  }
  io.run();  // one thread runs all five: waiting never blocked it
  EXPECT_EQ(finished, 5);
  EXPECT_EQ(limiter.waits(), 3u);
  // 1 ms + 2 ms + 3 ms of queueing behind the burst.
  EXPECT_EQ(limiter.total_wait(), milliseconds(6));
}

}  // namespace
}  // namespace aop::net
