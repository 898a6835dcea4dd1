// The controller runner: N workers take root keys from a RateLimitedQueue and run the
// controller's reconcile for each, on a strand belonging to that key, on a multi-threaded
// io_context. The queue guarantees one key is never handed to two workers at once; the
// strand gives the reconcile of one root a single serial executor (its timers and
// sub-operations never run concurrently with each other), while different roots proceed
// in parallel.
//
// A reconcile returns what should happen next:
//   success        forget the key's failures; nothing scheduled
//   requeue_after  forget failures; run again after the delay (earliest due time wins)
//   error          run again after the key's backoff (5 ms doubling, capped: at 5 s when
//                  the API server failed, api_failed(); else at 1000 s), counted
//   terminal       no retry until the key is enqueued again by an event (a periodic
//                  resync does not retry it either: nothing it depends on changed)
//
// A timer enqueues every root every resync period (default 10 min, plus up to 10 %
// jitter so replicas and controllers do not resync in lockstep).
//
// While keys wait in the queue, an info line every `progress_period` says how the work
// goes ("work queue progress": roots done since the last line, queued, waiting for a
// retry, failing, in flight), so an operator working through thousands of roots is seen
// to move; nothing is logged while the queue is empty.
//
// Time comes from the injected clock: the resync and progress timers, backoff and
// requeue delays (the queue) and stop()'s deadline. With a FakeClock, tests advance it
// and call poll().
//
// Metrics with controller-runtime's names, label `controller`:
// controller_runtime_reconcile_total{controller,result}, _reconcile_errors_total,
// _terminal_reconcile_errors_total, _reconcile_time_seconds, _active_workers,
// _max_concurrent_reconciles.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "net/clock.hpp"
#include "net/metrics.hpp"
#include "reconcile/runtime/work_queue.hpp"

namespace aop::runtime {

struct ReconcileResult {
  enum class Kind { success, requeue_after, error, terminal };
  Kind kind = Kind::success;
  Duration after{};     // requeue_after
  std::string message;  // error, terminal: what failed (for the log)
  // error: what failed, for the backoff cap (QueuePolicy::api_max_delay).
  FailureKind failure = FailureKind::input;

  static ReconcileResult ok() { return {}; }
  static ReconcileResult requeue(Duration after) { return {Kind::requeue_after, after, {}}; }
  // Input that a change (an event) may fix; retried with backoff meanwhile.
  static ReconcileResult failed(std::string message) {
    return {Kind::error, {}, std::move(message)};
  }
  // The API server failed a request (no answer, throttling, a server error, refused
  // credentials): retried with the shorter cap, since no event announces its recovery.
  static ReconcileResult api_failed(std::string message) {
    return {Kind::error, {}, std::move(message), FailureKind::api};
  }
  static ReconcileResult terminal_error(std::string message) {
    return {Kind::terminal, {}, std::move(message)};
  }
};

// Reconciles one root. Runs on the root key's strand (co_await this_coro::executor).
// An exception counts as an error (with backoff) and is logged.
// The key is passed by value: the coroutine frame owns it.
using Reconciler = std::function<boost::asio::awaitable<ReconcileResult>(std::string key)>;

// Every root key, for the periodic resync (typically the root informer's store).
using RootLister = std::function<std::vector<std::string>()>;

inline QueueOptions abandon_on_shutdown() {
  QueueOptions q;
  q.drain_on_shutdown = false;
  return q;
}

struct ControllerOptions {
  std::string name = "controller";  // the `controller` metric label and queue name
  int workers = 2;                  // --workers
  Duration resync_period = std::chrono::minutes(10);  // --resync-period; 0 = never
  double resync_jitter = 0.1;  // each period is period * (1 + jitter * U[0,1))
  // The "work queue progress" line while keys wait (--progress-log-period); 0 = never.
  Duration progress_period = std::chrono::seconds(30);
  // Its name and registry default to the controller's. Shutdown abandons queued keys by
  // default: a graceful stop finishes in-flight reconciles and starts no new ones.
  QueueOptions queue = abandon_on_shutdown();
  net::metrics::Registry* registry = nullptr;  // nullptr = the process-wide registry
};

class Controller {
 public:
  // `executor` is the multi-threaded context's executor; `clock` must outlive this.
  Controller(boost::asio::any_io_executor executor, ControllerOptions options,
             Reconciler reconciler, RootLister roots,
             const net::Clock& clock = net::steady_clock());
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Spawns the workers and the resync timer. Call once, after the caches have synced
  // (and, with leader election, once leading).
  void start();

  // Stops taking new work (the queue drains or abandons per its options), cancels the
  // resync timer and waits for in-flight reconciles to finish (the last worker signals
  // it), up to `deadline` on the clock. Returns true when every worker finished in time.
  boost::asio::awaitable<bool> stop(Duration deadline);
  // The same without waiting (e.g. from a signal handler); stop() can follow.
  void shut_down();

  // Event-driven enqueue: a root is (re)considered. Clears a terminal error.
  void enqueue(const std::string& key);
  void enqueue_after(const std::string& key, Duration delay);
  // Enqueues every root now (what the resync timer does).
  void resync_now();
  // Looks at the clock again: promotes due delayed keys, runs a due resync, ends a
  // stop() whose deadline passed. The timers do this by themselves with the real clock;
  // tests with a FakeClock call it after advancing the clock.
  void poll();

  // What the progress line reports.
  struct Progress {
    std::uint64_t done = 0;     // reconciles finished since the previous progress line
    std::size_t queued = 0;     // keys ready for a worker
    std::size_t waiting = 0;    // keys waiting for a retry or a requeue
    std::size_t failing = 0;    // keys whose last reconcile failed
    std::size_t in_flight = 0;  // keys being reconciled
  };
  // The figures now; `take` starts the next period's `done` count.
  Progress progress(bool take = false);

  bool started() const { return started_.load(); }
  bool stopped() const;  // shut down and every worker has returned
  int active_workers() const;
  const std::string& name() const;
  RateLimitedQueue& queue();

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::atomic<bool> started_{false};
};

}  // namespace aop::runtime
