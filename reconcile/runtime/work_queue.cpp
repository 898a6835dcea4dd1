#include "reconcile/runtime/work_queue.hpp"

#include <deque>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/log.hpp"

namespace aop::runtime {

namespace {

double seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

// client-go's workqueue histograms: 10 ns to 10 s, factor 10.
std::vector<double> duration_buckets() {
  return net::metrics::exponential_buckets(1e-8, 10, 10);
}

}  // namespace

struct RateLimitedQueue::State : std::enable_shared_from_this<State> {
  using Handler = boost::asio::any_completion_handler<GetSignature>;
  struct Waiter {
    Handler handler;
    // Keeps the waiter's execution context running while it waits, as any pending
    // asynchronous operation does.
    boost::asio::any_completion_executor work;
  };
  struct Delivery {
    Waiter waiter;
    std::optional<std::string> key;
  };

  State(boost::asio::any_io_executor ex, QueueOptions opts, const net::Clock& c)
      : executor(std::move(ex)),
        strand(boost::asio::make_strand(executor)),
        timer(strand),
        clock(c),
        options(std::move(opts)),
        core(options.policy, clock.now()),
        registry(options.registry ? *options.registry : net::metrics::registry()),
        depth(registry.gauge("workqueue_depth", "Current depth of the work queue.", {"name"})
                  .with({options.name})),
        adds(registry.counter("workqueue_adds_total", "Keys added to the work queue.", {"name"})
                 .with({options.name})),
        retries(registry
                    .counter("workqueue_retries_total",
                             "Rate-limited re-adds (retries after failures).", {"name"})
                    .with({options.name})),
        queue_duration(registry
                           .histogram("workqueue_queue_duration_seconds",
                                      "Seconds a key waits in the queue before it is handed out.",
                                      {"name"}, duration_buckets())
                           .with({options.name})),
        work_duration(registry
                          .histogram("workqueue_work_duration_seconds",
                                     "Seconds a worker spends processing one key.", {"name"},
                                     duration_buckets())
                          .with({options.name})),
        unfinished(registry
                       .gauge("workqueue_unfinished_work_seconds",
                              "Seconds of work in progress not yet observed by "
                              "work_duration; large values suggest stuck workers.",
                              {"name"})
                       .with({options.name})),
        longest(registry
                    .gauge("workqueue_longest_running_processor_seconds",
                           "Seconds the longest-running key has been processed.", {"name"})
                    .with({options.name})) {}

  // Hands ready keys to parked waiters; when the queue is finished, releases all of them.
  // Called with `mutex` held; the deliveries run after it is released.
  std::vector<Delivery> collect_handoffs(TimePoint now) {
    std::vector<Delivery> out;
    while (!waiters.empty()) {
      auto item = core.get(now);
      if (!item) break;
      queue_duration.observe(seconds(item->queued_for));
      out.push_back(Delivery{std::move(waiters.front()), std::move(item->key)});
      waiters.pop_front();
    }
    if (core.finished()) {
      while (!waiters.empty()) {
        out.push_back(Delivery{std::move(waiters.front()), std::nullopt});
        waiters.pop_front();
      }
    }
    update_gauges(now);
    return out;
  }

  void update_gauges(TimePoint now) {
    depth.set(static_cast<double>(core.len()));
    unfinished.set(seconds(core.unfinished_work(now)));
    longest.set(seconds(core.longest_running(now)));
  }

  // Never runs a handler inline: post() goes through the queue's executor and then to
  // the handler's own associated executor (the worker coroutine's).
  void deliver(std::vector<Delivery> deliveries) const {
    for (auto& d : deliveries) {
      boost::asio::post(executor,
                        boost::asio::append(std::move(d.waiter.handler), std::move(d.key)));
    }
  }

  // Re-arms the timer for the earliest due key (and the metrics refresh while work is in
  // flight). Runs on the strand, which owns `timer` and `armed_for`.
  void arm() {
    std::optional<TimePoint> wake;
    TimePoint now;
    {
      const std::lock_guard lock(mutex);
      if (core.is_shut_down()) {
        timer.cancel();
        return;
      }
      now = clock.now();
      wake = core.next_due();
      if (core.processing() > 0) {
        const TimePoint tick = now + options.metrics_period;
        if (!wake || tick < *wake) wake = tick;
      }
    }
    if (wake == armed_for) return;
    armed_for = wake;
    if (!wake) {
      timer.cancel();
      return;
    }
    const Duration delay = std::max(Duration::zero(), *wake - now);
    timer.expires_after(delay);  // cancels a previous wait
    timer.async_wait(boost::asio::bind_executor(
        strand, [self = shared_from_this()](const boost::system::error_code& ec) {
          if (ec == boost::asio::error::operation_aborted) return;
          self->armed_for.reset();
          self->poll();
          self->arm();
        }));
  }

  void request_arm() {
    boost::asio::post(strand, [self = shared_from_this()] { self->arm(); });
  }

  void poll() {
    std::vector<Delivery> out;
    {
      const std::lock_guard lock(mutex);
      const TimePoint now = clock.now();
      core.promote_due(now);
      out = collect_handoffs(now);
    }
    deliver(std::move(out));
  }

  boost::asio::any_io_executor executor;
  boost::asio::strand<boost::asio::any_io_executor> strand;
  boost::asio::steady_timer timer;     // owned by `strand`
  std::optional<TimePoint> armed_for;  // owned by `strand`
  const net::Clock& clock;
  const QueueOptions options;

  mutable std::mutex mutex;  // owns core and waiters
  QueueCore core;
  std::deque<Waiter> waiters;

  net::metrics::Registry& registry;
  net::metrics::Gauge& depth;
  net::metrics::Counter& adds;
  net::metrics::Counter& retries;
  net::metrics::Histogram& queue_duration;
  net::metrics::Histogram& work_duration;
  net::metrics::Gauge& unfinished;
  net::metrics::Gauge& longest;
};

RateLimitedQueue::RateLimitedQueue(boost::asio::any_io_executor executor, QueueOptions options,
                                   const net::Clock& clock)
    : state_(std::make_shared<State>(std::move(executor), std::move(options), clock)) {}

RateLimitedQueue::~RateLimitedQueue() {
  shut_down();
}

// Runs `fn` on the core under the mutex, hands out what became ready, and re-arms the
// timer when the earliest due time or the need for the metrics tick changed.
template <class Fn>
auto RateLimitedQueue::mutate(Fn&& fn) {
  std::vector<State::Delivery> out;
  bool rearm = false;
  using R = std::invoke_result_t<Fn&, QueueCore&, TimePoint>;
  std::conditional_t<std::is_void_v<R>, int, R> result{};
  {
    const std::lock_guard lock(state_->mutex);
    QueueCore& core = state_->core;
    const TimePoint now = state_->clock.now();
    const auto due_before = core.next_due();
    const bool busy_before = core.processing() > 0;
    if constexpr (std::is_void_v<R>) {
      fn(core, now);
    } else {
      result = fn(core, now);
    }
    out = state_->collect_handoffs(now);
    rearm = core.next_due() != due_before || (core.processing() > 0) != busy_before;
  }
  state_->deliver(std::move(out));
  if (rearm) state_->request_arm();
  if constexpr (!std::is_void_v<R>) return result;
}

QueueCore::AddResult RateLimitedQueue::add(const std::string& key) {
  return mutate([&](QueueCore& core, TimePoint now) {
    const auto result = core.add(key, now);
    if (result == QueueCore::AddResult::queued || result == QueueCore::AddResult::deferred) {
      state_->adds.inc();
    }
    return result;
  });
}

void RateLimitedQueue::add_after(const std::string& key, Duration delay) {
  mutate([&](QueueCore& core, TimePoint now) {
    if (delay <= Duration::zero()) {
      const auto result = core.add(key, now);
      if (result == QueueCore::AddResult::queued || result == QueueCore::AddResult::deferred) {
        state_->adds.inc();
      }
      return;
    }
    core.add_after(key, delay, now);
  });
}

Duration RateLimitedQueue::add_rate_limited(const std::string& key, FailureKind kind) {
  return mutate([&](QueueCore& core, TimePoint now) {
    if (core.is_shut_down()) return Duration::zero();
    state_->retries.inc();
    return core.add_rate_limited(key, now, kind);
  });
}

void RateLimitedQueue::forget(const std::string& key) {
  const std::lock_guard lock(state_->mutex);
  state_->core.forget(key);
}

int RateLimitedQueue::num_requeues(const std::string& key) const {
  const std::lock_guard lock(state_->mutex);
  return state_->core.num_requeues(key);
}

void RateLimitedQueue::done(const std::string& key) {
  mutate([&](QueueCore& core, TimePoint now) {
    const auto worked = core.done(key, now);
    if (!worked) {
      net::log::error("work queue: done() for a key that was not being processed",
                      {{"queue", state_->options.name}, {"key", key}});
    } else {
      state_->work_duration.observe(seconds(*worked));
    }
  });
}

void RateLimitedQueue::start_get(boost::asio::any_completion_handler<GetSignature> handler) {
  auto work = boost::asio::prefer(boost::asio::get_associated_executor(handler, state_->executor),
                                  boost::asio::execution::outstanding_work.tracked);
  mutate([&](QueueCore&, TimePoint) {
    state_->waiters.push_back(State::Waiter{std::move(handler), std::move(work)});
  });
}

boost::asio::awaitable<std::optional<std::string>> RateLimitedQueue::get() {
  co_return co_await async_get(boost::asio::use_awaitable);
}

void RateLimitedQueue::shut_down() {
  mutate([&](QueueCore& core, TimePoint) { core.shut_down(state_->options.drain_on_shutdown); });
  state_->request_arm();  // cancels the timer
}

bool RateLimitedQueue::is_shut_down() const {
  const std::lock_guard lock(state_->mutex);
  return state_->core.is_shut_down();
}

bool RateLimitedQueue::idle_after_shutdown() const {
  const std::lock_guard lock(state_->mutex);
  return state_->core.finished() && state_->core.processing() == 0;
}

void RateLimitedQueue::poll() {
  state_->poll();
  state_->request_arm();
}

std::size_t RateLimitedQueue::len() const {
  const std::lock_guard lock(state_->mutex);
  return state_->core.len();
}

std::size_t RateLimitedQueue::waiting() const {
  const std::lock_guard lock(state_->mutex);
  return state_->core.waiting();
}

std::size_t RateLimitedQueue::processing() const {
  const std::lock_guard lock(state_->mutex);
  return state_->core.processing();
}

}  // namespace aop::runtime
