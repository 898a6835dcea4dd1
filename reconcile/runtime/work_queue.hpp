// RateLimitedQueue: the thread-safe, asynchronous face of QueueCore (queue_core.hpp).
//
// Producers (informer event handlers, the resync timer, workers requeueing) call add*
// from any thread; they never block beyond a short mutex. Workers co_await get(), which
// completes with the next key or with nullopt once the queue is shut down (and drained,
// in drain mode). Keys are handed over under the mutex at the moment they become ready,
// so no wakeup is lost and no key reaches two workers.
//
// Delayed keys are promoted by one timer on the queue's own strand, armed for the
// earliest due time. Time comes from the injected clock; with a FakeClock, tests advance
// it and call poll() instead of waiting for the timer.
//
// Metrics use client-go's workqueue names with label `name`: workqueue_depth,
// workqueue_adds_total, workqueue_retries_total, workqueue_queue_duration_seconds,
// workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
// workqueue_longest_running_processor_seconds.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>

#include "net/clock.hpp"
#include "net/metrics.hpp"
#include "reconcile/runtime/queue_core.hpp"

namespace aop::runtime {

struct QueueOptions {
  std::string name = "queue";  // the `name` label of the metrics
  QueuePolicy policy;
  // On shut_down(): true = keys already queued are still handed out (drain); false =
  // they are dropped and only in-flight work finishes (abandon).
  bool drain_on_shutdown = true;
  // How often workqueue_unfinished_work_seconds and _longest_running_processor_seconds
  // are refreshed while work is in flight (client-go: 500 ms).
  Duration metrics_period = std::chrono::milliseconds(500);
  // Where the metrics go; nullptr = the process-wide registry served on /metrics.
  net::metrics::Registry* registry = nullptr;
};

class RateLimitedQueue {
 public:
  using GetSignature = void(std::optional<std::string>);

  // `clock` must outlive the queue. The timer runs on a strand of `executor`.
  RateLimitedQueue(boost::asio::any_io_executor executor, QueueOptions options,
                   const net::Clock& clock = net::steady_clock());
  // Shuts the queue down (waiters complete with nullopt).
  ~RateLimitedQueue();
  RateLimitedQueue(const RateLimitedQueue&) = delete;
  RateLimitedQueue& operator=(const RateLimitedQueue&) = delete;

  QueueCore::AddResult add(const std::string& key);
  void add_after(const std::string& key, Duration delay);
  // Records a failure of `key` and adds it after its backoff; returns the delay.
  Duration add_rate_limited(const std::string& key, FailureKind kind = FailureKind::input);
  void forget(const std::string& key);
  int num_requeues(const std::string& key) const;

  // The worker is finished with `key` (must follow every key get() returned).
  void done(const std::string& key);

  // Completes with the next key, or nullopt when the queue is finished. Any completion
  // token; the handler runs on its associated executor.
  template <class CompletionToken>
  auto async_get(CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, GetSignature>(
        [this](auto handler) {
          start_get(boost::asio::any_completion_handler<GetSignature>(std::move(handler)));
        },
        token);
  }
  boost::asio::awaitable<std::optional<std::string>> get();

  // Stops accepting keys; see QueueOptions::drain_on_shutdown. Idempotent.
  void shut_down();
  bool is_shut_down() const;
  // True once shut down and nothing is in flight: every worker has returned.
  bool idle_after_shutdown() const;

  // Promotes delayed keys that are due by the clock now (the timer does this by itself;
  // tests with a FakeClock call it after advancing the clock). Also refreshes metrics.
  void poll();

  std::size_t len() const;         // ready keys
  std::size_t waiting() const;     // delayed keys
  std::size_t processing() const;  // keys in flight

 private:
  struct State;
  void start_get(boost::asio::any_completion_handler<GetSignature> handler);
  template <class Fn>
  auto mutate(Fn&& fn);

  std::shared_ptr<State> state_;
};

}  // namespace aop::runtime
