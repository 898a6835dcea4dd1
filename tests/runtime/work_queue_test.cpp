// The asynchronous queue: workers on a multi-threaded io_context never hold the same
// key at once, delayed keys arrive after the clock passes their due time, shutdown
// releases waiting workers, and the client-go metrics are exported.
#include "reconcile/runtime/work_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "tests/runtime/run_until.hpp"

namespace aop::runtime {
namespace {

using std::chrono::seconds;

using testing::run_until;

QueueOptions opts(net::metrics::Registry& r, std::string name = "test") {
  QueueOptions o;
  o.name = std::move(name);
  o.registry = &r;
  return o;
}

TEST(RateLimitedQueue, AWaitingWorkerGetsAKeyAddedLater) {
  boost::asio::io_context io;
  net::metrics::Registry r;
  RateLimitedQueue q(io.get_executor(), opts(r));
  std::optional<std::string> got;
  bool finished = false;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        got = co_await q.get();
        finished = true;
      },
      boost::asio::detached);
  io.poll();
  EXPECT_FALSE(finished);
  q.add("ns/a");
  ASSERT_TRUE(run_until(io, [&] { return finished; }));
  EXPECT_EQ(got, "ns/a");
  q.done("ns/a");
  q.shut_down();
}

TEST(RateLimitedQueue, DelayedKeysArriveOnlyAfterTheFakeClockPassesTheirDueTime) {
  boost::asio::io_context io;
  net::metrics::Registry r;
  net::FakeClock clock;
  RateLimitedQueue q(io.get_executor(), opts(r), clock);
  std::vector<std::string> got;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        while (auto key = co_await q.get()) {
          got.push_back(*key);
          q.done(*key);
        }
      },
      boost::asio::detached);
  q.add_after("late", seconds(60));
  q.add_after("early", seconds(30));
  io.restart();
  io.run_for(std::chrono::milliseconds(20));
  q.poll();
  io.restart();
  io.run_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(got.empty());
  clock.advance(seconds(30));
  q.poll();
  ASSERT_TRUE(run_until(io, [&] { return got.size() == 1; }));
  clock.advance(seconds(30));
  q.poll();
  ASSERT_TRUE(run_until(io, [&] { return got.size() == 2; }));
  EXPECT_EQ(got, (std::vector<std::string>{"early", "late"}));
  q.shut_down();
  EXPECT_TRUE(run_until(io, [&] { return q.idle_after_shutdown(); }));
}

TEST(RateLimitedQueue, TheTimerPromotesDelayedKeysByItself) {
  boost::asio::io_context io;
  net::metrics::Registry r;
  RateLimitedQueue q(io.get_executor(), opts(r));  // real clock
  std::optional<std::string> got;
  boost::asio::co_spawn(
      io, [&]() -> boost::asio::awaitable<void> { got = co_await q.get(); }, boost::asio::detached);
  q.add_after("k", std::chrono::milliseconds(10));
  ASSERT_TRUE(run_until(io, [&] { return got.has_value(); }));
  EXPECT_EQ(*got, "k");
  q.done("k");
  q.shut_down();
}

// The property the controller relies on: with many workers on many threads and keys
// re-added while they are processed, no key is ever held by two workers at once. A
// queue without its processing set would hand the re-added key to a second worker
// while the first still yields inside its "reconcile".
TEST(RateLimitedQueue, NoKeyIsProcessedByTwoWorkersAtOnce) {
  boost::asio::thread_pool pool(4);
  net::metrics::Registry r;
  RateLimitedQueue q(pool.get_executor(), opts(r));
  constexpr int kKeys = 5;
  constexpr int kWorkers = 8;
  constexpr int kRounds = 400;  // re-adds per key

  std::mutex mutex;
  std::map<std::string, int> in_flight;  // guarded by mutex
  std::atomic<int> violations{0};
  std::atomic<int> processed{0};
  std::atomic<int> workers_left{kWorkers};
  std::atomic<int> readds_left{kKeys * kRounds};

  for (int w = 0; w < kWorkers; ++w) {
    boost::asio::co_spawn(
        boost::asio::make_strand(pool),
        [&]() -> boost::asio::awaitable<void> {
          while (auto key = co_await q.get()) {
            {
              const std::lock_guard lock(mutex);
              if (++in_flight[*key] > 1) ++violations;
            }
            // Re-add itself while in flight, then yield several times so other workers
            // get every chance to pick the same key up.
            if (readds_left.fetch_sub(1) > 0) q.add(*key);
            for (int i = 0; i < 3; ++i) {
              co_await boost::asio::post(co_await boost::asio::this_coro::executor,
                                         boost::asio::use_awaitable);
            }
            {
              const std::lock_guard lock(mutex);
              --in_flight[*key];
            }
            ++processed;
            q.done(*key);
          }
          --workers_left;
        },
        boost::asio::detached);
  }
  for (int k = 0; k < kKeys; ++k) q.add("key-" + std::to_string(k));

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (readds_left.load() > 0 || q.len() > 0 || q.processing() > 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "workers stalled";
    std::this_thread::yield();
  }
  q.shut_down();
  pool.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(workers_left.load(), 0);
  // Every re-add ran (deduplicated re-adds of one in-flight run count once).
  EXPECT_GE(processed.load(), kKeys);
}

TEST(RateLimitedQueue, ShutdownReleasesWaitingWorkers) {
  boost::asio::io_context io;
  net::metrics::Registry r;
  RateLimitedQueue q(io.get_executor(), opts(r));
  int exited = 0;
  for (int i = 0; i < 3; ++i) {
    boost::asio::co_spawn(
        io,
        [&]() -> boost::asio::awaitable<void> {
          while (auto key = co_await q.get()) q.done(*key);
          ++exited;
        },
        boost::asio::detached);
  }
  io.poll();
  EXPECT_EQ(exited, 0);
  q.shut_down();
  EXPECT_TRUE(run_until(io, [&] { return exited == 3; }));
}

TEST(RateLimitedQueue, DrainingShutdownStillProcessesQueuedKeys) {
  boost::asio::io_context io;
  net::metrics::Registry r;
  RateLimitedQueue q(io.get_executor(), opts(r));
  q.add("a");
  q.add("b");
  q.shut_down();
  std::vector<std::string> got;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        while (auto key = co_await q.get()) {
          got.push_back(*key);
          q.done(*key);
        }
      },
      boost::asio::detached);
  io.run();
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b"}));
}

TEST(RateLimitedQueue, AbandoningShutdownDropsQueuedKeys) {
  boost::asio::io_context io;
  net::metrics::Registry r;
  QueueOptions o = opts(r);
  o.drain_on_shutdown = false;
  RateLimitedQueue q(io.get_executor(), o);
  q.add("a");
  q.add("b");
  q.shut_down();
  std::vector<std::string> got;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        while (auto key = co_await q.get()) got.push_back(*key);
      },
      boost::asio::detached);
  io.run();
  EXPECT_TRUE(got.empty());
}

TEST(RateLimitedQueue, ExportsClientGoMetricsLabelledWithTheQueueName) {
  boost::asio::io_context io;
  net::metrics::Registry r;
  net::FakeClock clock;
  RateLimitedQueue q(io.get_executor(), opts(r, "agent"), clock);
  q.add("a");
  q.add("a");  // deduplicated: not an add
  q.add("b");
  q.add_rate_limited("c");
  const std::string text = r.expose();
  EXPECT_NE(text.find("workqueue_depth{name=\"agent\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("workqueue_adds_total{name=\"agent\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("workqueue_retries_total{name=\"agent\"} 1"), std::string::npos) << text;
  for (const char* name :
       {"workqueue_queue_duration_seconds_bucket", "workqueue_work_duration_seconds_bucket",
        "workqueue_unfinished_work_seconds{name=\"agent\"}",
        "workqueue_longest_running_processor_seconds{name=\"agent\"}"}) {
    EXPECT_NE(text.find(name), std::string::npos) << name;
  }
  q.shut_down();
}

}  // namespace
}  // namespace aop::runtime
