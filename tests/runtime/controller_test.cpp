// The controller runner: results drive the queue (forget, requeue after a delay, backoff,
// terminal), the periodic resync enqueues every root, a root's reconcile runs on its own
// strand and never overlaps itself while different roots run in parallel, and stop()
// waits for in-flight work. Time is a FakeClock wherever the controller measures it.
#include "reconcile/runtime/controller.hpp"

#include "reconcile/runtime/clock_timer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/log.hpp"
#include "tests/runtime/run_until.hpp"

namespace aop::runtime {
namespace {

using boost::asio::awaitable;
using std::chrono::milliseconds;
using std::chrono::seconds;

using testing::run_until;

// Each test declares its clock and registry before its io_context: a controller's state
// lives in io's coroutines, which use them, until io is gone.

template <class Pred>
bool wait_until(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Counts reconciles per key and returns scripted results.
struct Script {
  std::mutex mutex;
  std::map<std::string, int> runs;
  std::map<std::string, std::vector<ReconcileResult>> results;  // consumed in order

  int count(const std::string& key) {
    const std::lock_guard lock(mutex);
    return runs[key];
  }
  Reconciler reconciler() {
    return [this](std::string key) -> awaitable<ReconcileResult> {
      const std::lock_guard lock(mutex);
      ++runs[key];
      auto& queue = results[key];
      if (queue.empty()) co_return ReconcileResult::ok();
      ReconcileResult r = queue.front();
      queue.erase(queue.begin());
      co_return r;
    };
  }
};

ControllerOptions options(net::metrics::Registry& r, int workers = 1) {
  ControllerOptions o;
  o.name = "test";
  o.workers = workers;
  o.resync_period = Duration::zero();
  o.registry = &r;
  o.queue.policy.retry_qps = 0;
  return o;
}

TEST(Controller, ErrorsAreRetriedWithGrowingBackoffAndSuccessForgetsThem) {
  net::metrics::Registry r;
  net::FakeClock clock;
  boost::asio::io_context io;
  Script script;
  script.results["a"] = {ReconcileResult::failed("boom"), ReconcileResult::failed("boom"),
                         ReconcileResult::ok()};
  Controller c(io.get_executor(), options(r), script.reconciler(), {}, clock);
  c.start();
  c.enqueue("a");
  ASSERT_TRUE(run_until(io, [&] { return script.count("a") == 1 && c.queue().waiting() == 1; }));
  EXPECT_EQ(c.queue().num_requeues("a"), 1);
  // Not before its 5 ms backoff.
  clock.advance(milliseconds(4));
  c.queue().poll();
  io.restart();
  io.run_for(milliseconds(20));
  EXPECT_EQ(script.count("a"), 1);
  clock.advance(milliseconds(1));
  c.queue().poll();
  ASSERT_TRUE(run_until(io, [&] { return script.count("a") == 2 && c.queue().waiting() == 1; }));
  // Second failure: 10 ms.
  clock.advance(milliseconds(9));
  c.queue().poll();
  io.restart();
  io.run_for(milliseconds(20));
  EXPECT_EQ(script.count("a"), 2);
  clock.advance(milliseconds(1));
  c.queue().poll();
  ASSERT_TRUE(run_until(io, [&] { return script.count("a") == 3 && c.queue().processing() == 0; }));
  EXPECT_EQ(c.queue().num_requeues("a"), 0);  // success forgot the failures
  EXPECT_EQ(c.queue().waiting(), 0u);
  const std::string text = r.expose();
  EXPECT_NE(text.find(R"(controller_runtime_reconcile_total{controller="test",result="error"} 2)"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(R"(controller_runtime_reconcile_total{controller="test",result="success"} 1)"),
      std::string::npos);
  EXPECT_NE(text.find(R"(controller_runtime_reconcile_errors_total{controller="test"} 2)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(controller_runtime_max_concurrent_reconciles{controller="test"} 1)"),
            std::string::npos);
  c.shut_down();
  io.run();
}

// A failure of the API server stops growing its backoff at the API cap.
TEST(Controller, ApiFailuresAreRetriedWithinTheApiCap) {
  net::metrics::Registry r;
  net::FakeClock clock;
  boost::asio::io_context io;
  Script script;
  for (int i = 0; i < 12; ++i) {
    script.results["a"].push_back(ReconcileResult::api_failed("503 ServiceUnavailable"));
  }
  auto o = options(r);
  o.queue.policy.api_max_delay = seconds(1);
  Controller c(io.get_executor(), o, script.reconciler(), {}, clock);
  c.start();
  c.enqueue("a");
  // Each advance of the cap retries it exactly once; uncapped, the 12th delay is 10 s.
  for (int run = 1; run <= 12; ++run) {
    ASSERT_TRUE(run_until(io, [&] {
      return script.count("a") == run && c.queue().waiting() == 1 && c.queue().processing() == 0;
    })) << run;
    clock.advance(seconds(1));
    c.poll();
  }
  ASSERT_TRUE(run_until(io, [&] { return script.count("a") == 13 && c.queue().waiting() == 0; }));
  EXPECT_EQ(c.queue().num_requeues("a"), 0);
  c.shut_down();
  io.run();
}

// While keys wait, a line every progress period says how the work goes; the figures
// count reconciles done since the previous line, keys queued, waiting, failing and in
// flight.
TEST(Controller, ProgressIsLoggedWhileKeysAreQueued) {
  net::metrics::Registry r;
  net::FakeClock clock;
  boost::asio::io_context io;
  bool released = false;
  boost::asio::steady_timer gate(io, boost::asio::steady_timer::time_point::max());
  auto reconcile = [&](std::string key) -> awaitable<ReconcileResult> {
    if (!released) {
      boost::system::error_code ec;
      co_await gate.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    }
    if (key == "c") co_return ReconcileResult::terminal_error("bad input");
    co_return ReconcileResult::ok();
  };
  auto o = options(r);
  o.progress_period = seconds(10);
  Controller c(io.get_executor(), o, reconcile, {}, clock);
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  net::log::configure(net::log::Level::info, net::log::Format::text);
  net::log::set_output(out);
  auto logged = [&] {
    std::fflush(out);
    return std::string(buf, len);
  };
  c.start();
  for (const char* k : {"a", "b", "c", "d", "e"}) c.enqueue(k);
  ASSERT_TRUE(run_until(io, [&] { return c.queue().processing() == 1; }));
  // Not before the period.
  clock.advance(seconds(9));
  c.poll();
  io.restart();
  io.run_for(milliseconds(20));
  EXPECT_EQ(logged().find("work queue progress"), std::string::npos) << logged();
  clock.advance(seconds(1));
  c.poll();
  ASSERT_TRUE(
      run_until(io, [&] { return logged().find("work queue progress") != std::string::npos; }));
  const std::string first = logged();
  EXPECT_NE(first.find("controller=test done=0 queued=4 waiting=0 failing=0 in_flight=1"),
            std::string::npos)
      << first;
  // The work goes through: c fails for good, the rest succeed.
  released = true;
  gate.cancel();
  ASSERT_TRUE(run_until(io, [&] { return c.queue().len() == 0 && c.queue().processing() == 0; }));
  const auto p = c.progress();
  EXPECT_EQ(p.done, 5u);
  EXPECT_EQ(p.failing, 1u);
  EXPECT_EQ(p.waiting, 0u);
  // Nothing queued at the next tick: no line.
  clock.advance(seconds(10));
  c.poll();
  io.restart();
  io.run_for(milliseconds(20));
  net::log::set_output(nullptr);
  std::fclose(out);
  const std::string all(buf, len);
  std::free(buf);
  EXPECT_EQ(all.find("work queue progress", all.find("work queue progress") + 1), std::string::npos)
      << all;
  c.shut_down();
  io.run();
}

TEST(Controller, RequeueAfterRunsTheRootAgainAfterTheDelay) {
  net::metrics::Registry r;
  net::FakeClock clock;
  boost::asio::io_context io;
  Script script;
  script.results["a"] = {ReconcileResult::requeue(seconds(30))};
  Controller c(io.get_executor(), options(r), script.reconciler(), {}, clock);
  c.start();
  c.enqueue("a");
  ASSERT_TRUE(run_until(io, [&] { return script.count("a") == 1 && c.queue().waiting() == 1; }));
  clock.advance(seconds(29));
  c.queue().poll();
  io.restart();
  io.run_for(milliseconds(20));
  EXPECT_EQ(script.count("a"), 1);
  clock.advance(seconds(1));
  c.queue().poll();
  ASSERT_TRUE(run_until(io, [&] { return script.count("a") == 2; }));
  c.shut_down();
  io.run();
}

TEST(Controller, ATerminalErrorIsNotRetriedNorResyncedUntilTheRootIsEnqueuedAgain) {
  net::metrics::Registry r;
  net::FakeClock clock;
  boost::asio::io_context io;
  Script script;
  script.results["bad"] = {ReconcileResult::terminal_error("invalid spec")};
  Controller c(
      io.get_executor(), options(r), script.reconciler(),
      [] {
        return std::vector<std::string>{"bad", "good"};
      },
      clock);
  c.start();
  c.enqueue("bad");
  ASSERT_TRUE(
      run_until(io, [&] { return script.count("bad") == 1 && c.queue().processing() == 0; }));
  EXPECT_EQ(c.queue().waiting(), 0u);
  clock.advance(seconds(2000));
  c.queue().poll();
  c.resync_now();
  ASSERT_TRUE(
      run_until(io, [&] { return script.count("good") == 1 && c.queue().processing() == 0; }));
  EXPECT_EQ(script.count("bad"), 1);
  // An event on the root (it changed) retries it; afterwards resync covers it again.
  c.enqueue("bad");
  ASSERT_TRUE(
      run_until(io, [&] { return script.count("bad") == 2 && c.queue().processing() == 0; }));
  c.resync_now();
  ASSERT_TRUE(run_until(io, [&] { return script.count("bad") == 3 && script.count("good") == 2; }));
  EXPECT_NE(
      r.expose().find(R"(controller_runtime_terminal_reconcile_errors_total{controller="test"} 1)"),
      std::string::npos);
  c.shut_down();
  io.run();
}

TEST(Controller, AnExceptionCountsAsAnErrorWithBackoff) {
  net::metrics::Registry r;
  net::FakeClock clock;
  boost::asio::io_context io;
  Controller c(
      io.get_executor(), options(r),
      [](std::string) -> awaitable<ReconcileResult> {
        throw std::runtime_error("bug");
        co_return ReconcileResult::ok();
      },
      {}, clock);
  c.start();
  c.enqueue("a");
  ASSERT_TRUE(run_until(io, [&] { return c.queue().num_requeues("a") == 1; }));
  c.shut_down();
  io.run();
}

TEST(Controller, ResyncEnqueuesEveryRootOnce) {
  net::metrics::Registry r;
  boost::asio::io_context io;
  Script script;
  std::vector<std::string> roots;
  roots.reserve(500);
  for (int i = 0; i < 500; ++i) roots.push_back("ns/root-" + std::to_string(i));
  Controller c(io.get_executor(), options(r, 4), script.reconciler(), [&] { return roots; });
  c.start();
  c.resync_now();
  c.resync_now();  // deduplicated while pending
  ASSERT_TRUE(run_until(io, [&] { return c.queue().len() == 0 && c.queue().processing() == 0; }));
  for (const auto& key : roots) EXPECT_EQ(script.count(key), 1) << key;
  c.shut_down();
  io.run();
}

TEST(Controller, TheResyncTimerEnqueuesEveryRootEachPeriodOnTheClock) {
  net::metrics::Registry r;
  net::FakeClock clock;
  boost::asio::io_context io;
  Script script;
  std::vector<std::string> roots = {"a", "b", "c"};
  ControllerOptions o = options(r);
  o.resync_period = std::chrono::minutes(10);
  o.resync_jitter = 0.1;  // each period lasts 10 to 11 minutes
  Controller c(
      io.get_executor(), o, script.reconciler(), [&] { return roots; }, clock);
  c.start();
  for (int period = 1; period <= 3; ++period) {
    // Not before the period is over ...
    clock.advance(std::chrono::minutes(9));
    c.poll();
    io.restart();
    io.run_for(milliseconds(20));
    EXPECT_EQ(script.count("a"), period - 1);
    // ... and at the latest when period and jitter are.
    clock.advance(std::chrono::minutes(2));
    c.poll();
    ASSERT_TRUE(run_until(io,
                          [&] {
                            return script.count("a") == period && script.count("b") == period &&
                                   script.count("c") == period && c.queue().processing() == 0;
                          }))
        << "period " << period;
  }
  c.shut_down();
  io.run();  // the timer stops too: run() returns
}

// Each reconcile runs on a strand that belongs to its key, and two roots proceed in
// parallel: root "x" waits until root "y" has started, which cannot happen if roots were
// serialized.
TEST(Controller, RootsRunInParallelEachOnItsOwnStrand) {
  boost::asio::thread_pool pool(4);
  net::metrics::Registry r;
  std::atomic<int> started{0};
  std::atomic<bool> on_strand{true};
  std::atomic<int> finished{0};
  Controller c(pool.get_executor(), options(r, 4),
               [&](std::string) -> awaitable<ReconcileResult> {
                 auto ex = co_await boost::asio::this_coro::executor;
                 const auto* strand =
                     ex.target<boost::asio::strand<boost::asio::any_io_executor>>();
                 if (strand == nullptr || !strand->running_in_this_thread()) on_strand = false;
                 ++started;
                 boost::asio::steady_timer timer(ex);
                 const auto deadline = std::chrono::steady_clock::now() + seconds(30);
                 while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) {
                   timer.expires_after(milliseconds(1));
                   co_await timer.async_wait(boost::asio::use_awaitable);
                 }
                 ++finished;
                 co_return ReconcileResult::ok();
               },
               {});
  c.start();
  c.enqueue("x");
  c.enqueue("y");
  ASSERT_TRUE(wait_until([&] { return finished.load() == 2; }));
  EXPECT_EQ(started.load(), 2);
  EXPECT_TRUE(on_strand.load());
  c.shut_down();
  pool.join();
}

// One root is never reconciled twice at once, even when events keep enqueueing it while
// its reconcile is in flight on a multi-threaded pool with many workers.
TEST(Controller, OneRootIsNeverReconciledTwiceAtOnce) {
  boost::asio::thread_pool pool(4);
  net::metrics::Registry r;
  std::atomic<int> in_flight{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> runs{0};
  Controller* self = nullptr;
  Controller c(pool.get_executor(), options(r, 8),
               [&](std::string key) -> awaitable<ReconcileResult> {
                 if (++in_flight > 1) ++overlaps;
                 if (runs.load() < 300) self->enqueue(key);  // an event arrives mid-reconcile
                 for (int i = 0; i < 3; ++i) {
                   co_await boost::asio::post(co_await boost::asio::this_coro::executor,
                                              boost::asio::use_awaitable);
                 }
                 --in_flight;
                 ++runs;
                 co_return ReconcileResult::ok();
               },
               {});
  self = &c;
  c.start();
  c.enqueue("root");
  ASSERT_TRUE(wait_until(
      [&] { return runs.load() >= 300 && c.queue().len() == 0 && c.queue().processing() == 0; }));
  c.shut_down();
  pool.join();
  EXPECT_EQ(overlaps.load(), 0);
}

// A reconcile that stays in flight until the test releases it.
struct Gate {
  Gate(boost::asio::io_context& io, const net::Clock& clock) : timer(io.get_executor(), clock) {}
  awaitable<void> pass() {
    while (!open.load()) (void)co_await timer.wait_until(net::TimePoint::max());
  }
  void release() {
    open = true;
    timer.notify();
  }
  ClockTimer timer;
  std::atomic<bool> open{false};
};

// Throughput under churn: a root whose objects change N times while its reconcile runs
// is reconciled once more (it reads the latest state then), not N times, and the other
// workers are free for other roots meanwhile.
TEST(Controller, ARootDirtiedManyTimesWhileItRunsIsReconciledOnceMore) {
  net::metrics::Registry r;
  net::FakeClock clock;
  boost::asio::io_context io;
  Gate gate(io, clock);
  std::map<std::string, int> runs;
  Controller c(
      io.get_executor(), options(r, 4),
      [&](std::string key) -> awaitable<ReconcileResult> {
        ++runs[key];
        if (key == "busy" && runs[key] == 1) co_await gate.pass();
        co_return ReconcileResult::ok();
      },
      {}, clock);
  c.start();
  c.enqueue("busy");
  ASSERT_TRUE(run_until(io, [&] { return runs["busy"] == 1; }));
  for (int i = 0; i < 100; ++i) {
    c.enqueue("busy");
    if (i % 10 == 0) c.enqueue("other-" + std::to_string(i));
  }
  // The other roots run while "busy" is held, and "busy" is not handed out again.
  ASSERT_TRUE(run_until(io, [&] { return runs.size() == 11; }));
  EXPECT_EQ(runs["busy"], 1);
  EXPECT_EQ(c.queue().len(), 0u);
  gate.release();
  ASSERT_TRUE(run_until(io, [&] {
    return runs["busy"] >= 2 && c.queue().len() == 0 && c.queue().processing() == 0;
  }));
  c.shut_down();
  io.run();
  EXPECT_EQ(runs["busy"], 2);
  for (const auto& [key, n] : runs) {
    if (key != "busy") {
      EXPECT_EQ(n, 1) << key;
    }
  }
}

TEST(Controller, StopWaitsForInFlightReconcilesAndStartsNoNewOnes) {
  net::metrics::Registry r;
  net::FakeClock clock;
  boost::asio::io_context io;
  Gate gate(io, clock);
  std::set<std::string> ran;
  Controller c(
      io.get_executor(), options(r, 1),
      [&](std::string key) -> awaitable<ReconcileResult> {
        ran.insert(key);
        co_await gate.pass();
        co_return ReconcileResult::ok();
      },
      {}, clock);
  c.start();
  c.enqueue("first");
  c.enqueue("second");
  ASSERT_TRUE(run_until(io, [&] { return ran.size() == 1; }));
  std::optional<bool> stopped;
  boost::asio::co_spawn(
      io, [&]() -> awaitable<void> { stopped = co_await c.stop(seconds(30)); },
      boost::asio::detached);
  io.restart();
  io.run_for(milliseconds(20));
  EXPECT_FALSE(stopped.has_value());  // still waiting for "first"
  gate.release();                     // the last worker's return is stop()'s signal: no polling
  ASSERT_TRUE(run_until(io, [&] { return stopped.has_value(); }));
  EXPECT_TRUE(*stopped);
  EXPECT_TRUE(c.stopped());
  EXPECT_EQ(ran, (std::set<std::string>{"first"}));  // "second" was abandoned
}

TEST(Controller, StopGivesUpAtTheDeadlineOnTheClock) {
  net::metrics::Registry r;
  net::FakeClock clock;
  boost::asio::io_context io;
  Gate gate(io, clock);
  bool ran = false;
  Controller c(
      io.get_executor(), options(r, 1),
      [&](std::string) -> awaitable<ReconcileResult> {
        ran = true;
        co_await gate.pass();
        co_return ReconcileResult::ok();
      },
      {}, clock);
  c.start();
  c.enqueue("stuck");
  ASSERT_TRUE(run_until(io, [&] { return ran; }));
  std::optional<bool> stopped;
  boost::asio::co_spawn(
      io, [&]() -> awaitable<void> { stopped = co_await c.stop(seconds(30)); },
      boost::asio::detached);
  io.restart();
  io.run_for(milliseconds(20));  // stop() has begun: its deadline is 30 s on the clock from now
  EXPECT_FALSE(stopped.has_value());
  clock.advance(seconds(29));
  c.poll();
  io.restart();
  io.run_for(milliseconds(20));
  EXPECT_FALSE(stopped.has_value());
  clock.advance(seconds(1));
  c.poll();
  ASSERT_TRUE(run_until(io, [&] { return stopped.has_value(); }));
  EXPECT_FALSE(*stopped);
  gate.release();
  ASSERT_TRUE(run_until(io, [&] { return c.stopped(); }));
}

}  // namespace
}  // namespace aop::runtime
