// The coroutine semaphore behind the connection cap: never more holders than permits,
// first come first served, waiters resumed on their own executor, close() fails them.
#include "net/detail/async_semaphore.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "net/error.hpp"
#include "tests/net/async_test_util.hpp"

namespace aop::net::detail {
namespace {

namespace asio = boost::asio;
using testing::IoThreads;
using testing::wait_until;

TEST(AsyncSemaphore, NeverMoreHoldersThanPermitsUnderContention) {
  AsyncSemaphore sem(3);
  IoThreads io(4);
  std::atomic<int> holders{0}, max_holders{0}, done{0};
  for (int i = 0; i < 400; ++i) {
    asio::co_spawn(
        io.io(),
        [&]() -> asio::awaitable<void> {
          if (auto ec = co_await sem.acquire()) co_return;
          const int now = ++holders;
          int seen = max_holders.load();
          while (now > seen && !max_holders.compare_exchange_weak(seen, now)) {
          }
          asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::microseconds(50));
          co_await t.async_wait(asio::use_awaitable);
          --holders;
          sem.release();
          ++done;
        },
        asio::detached);
  }
  ASSERT_TRUE(wait_until([&] { return done.load() == 400; }));
  EXPECT_EQ(max_holders.load(), 3);
  EXPECT_EQ(sem.available(), 3u);
  EXPECT_EQ(sem.waiting(), 0u);
}

TEST(AsyncSemaphore, FirstComeFirstServed) {
  AsyncSemaphore sem(1);
  asio::io_context io;  // one thread: the order of resumption is observable
  std::vector<int> order;
  ASSERT_TRUE(sem.try_acquire());
  for (int i = 0; i < 5; ++i) {
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          if (co_await sem.acquire()) co_return;
          order.push_back(i);
          sem.release();
        },
        asio::detached);
  }
  io.poll();  // all five are now waiting
  EXPECT_EQ(sem.waiting(), 5u);
  sem.release();
  io.run();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(AsyncSemaphore, CloseFailsWaitersAndLaterAcquires) {
  AsyncSemaphore sem(0);
  asio::io_context io;
  std::vector<boost::system::error_code> results;
  for (int i = 0; i < 3; ++i) {
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { results.push_back(co_await sem.acquire()); },
        asio::detached);
  }
  io.poll();
  sem.close();
  io.run();
  io.restart();
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { results.push_back(co_await sem.acquire()); },
      asio::detached);
  io.run();
  ASSERT_EQ(results.size(), 4u);
  for (const auto& ec : results) EXPECT_EQ(ec, Errc::client_closed);
}

}  // namespace
}  // namespace aop::net::detail
