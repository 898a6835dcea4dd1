#include "reconcile/runtime/controller.hpp"

#include <exception>
#include <mutex>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/log.hpp"
#include "reconcile/runtime/clock_timer.hpp"

namespace aop::runtime {

namespace {

// controller-runtime's reconcile_time_seconds buckets.
std::vector<double> reconcile_buckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
          0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
          6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60};
}

QueueOptions queue_options(const ControllerOptions& o) {
  QueueOptions q = o.queue;
  if (q.name == QueueOptions{}.name) q.name = o.name;
  if (!q.registry) q.registry = o.registry;
  return q;
}

}  // namespace

struct Controller::State : std::enable_shared_from_this<State> {
  State(boost::asio::any_io_executor ex, ControllerOptions opts, Reconciler rec, RootLister ls,
        const net::Clock& c)
      : executor(std::move(ex)),
        options(std::move(opts)),
        reconciler(std::move(rec)),
        roots(std::move(ls)),
        clock(c),
        queue(executor, queue_options(options), clock),
        resync_timer(executor, clock),
        progress_timer(executor, clock),
        stop_timer(executor, clock),
        rng(std::random_device{}()),
        registry(options.registry ? *options.registry : net::metrics::registry()),
        reconcile_total(registry.counter("controller_runtime_reconcile_total",
                                         "Reconciliations per controller and result.",
                                         {"controller", "result"})),
        errors(registry
                   .counter("controller_runtime_reconcile_errors_total",
                            "Reconciliations that ended in an error.", {"controller"})
                   .with({options.name})),
        terminal_errors(registry
                            .counter("controller_runtime_terminal_reconcile_errors_total",
                                     "Reconciliations that ended in a terminal error (no "
                                     "retry until the object changes).",
                                     {"controller"})
                            .with({options.name})),
        reconcile_time(registry
                           .histogram("controller_runtime_reconcile_time_seconds",
                                      "Seconds per reconciliation.", {"controller"},
                                      reconcile_buckets())
                           .with({options.name})),
        active(registry
                   .gauge("controller_runtime_active_workers",
                          "Workers currently running a reconciliation.", {"controller"})
                   .with({options.name})),
        max_concurrent(registry
                           .gauge("controller_runtime_max_concurrent_reconciles",
                                  "Configured number of workers.", {"controller"})
                           .with({options.name})) {
    max_concurrent.set(options.workers);
    for (const char* result : {"success", "error", "requeue_after"}) {
      reconcile_total.with({options.name, result});  // exported as 0 from the start
    }
  }

  boost::asio::strand<boost::asio::any_io_executor> acquire_strand(const std::string& key) {
    const std::lock_guard lock(strands_mutex);
    auto [it, inserted] =
        strands.try_emplace(key, KeyStrand{boost::asio::make_strand(executor), 0});
    ++it->second.users;
    return it->second.strand;
  }

  void release_strand(const std::string& key) {
    const std::lock_guard lock(strands_mutex);
    const auto it = strands.find(key);
    if (it != strands.end() && --it->second.users == 0) strands.erase(it);
  }

  boost::asio::awaitable<void> work() {
    while (auto key = co_await queue.get()) {
      co_await process(*key);
    }
    // The last worker out tells stop() (the completion signal it waits on).
    if (--workers_running == 0) stop_timer.notify();
  }

  boost::asio::awaitable<void> process(const std::string& key) {
    const auto strand = acquire_strand(key);
    active.inc();
    const TimePoint start = clock.now();
    ReconcileResult result;
    try {
      result = co_await boost::asio::co_spawn(strand, reconciler(key), boost::asio::use_awaitable);
    } catch (const std::exception& e) {
      result = ReconcileResult::failed(std::string("reconcile threw: ") + e.what());
    }
    reconcile_time.observe(std::chrono::duration<double>(clock.now() - start).count());
    active.dec();
    release_strand(key);
    ++done;
    {
      const std::lock_guard lock(failing_mutex);
      if (result.kind == ReconcileResult::Kind::error ||
          result.kind == ReconcileResult::Kind::terminal) {
        failing.insert(key);
      } else {
        failing.erase(key);
      }
    }

    switch (result.kind) {
      case ReconcileResult::Kind::success:
        reconcile_total.with({options.name, "success"}).inc();
        queue.forget(key);
        break;
      case ReconcileResult::Kind::requeue_after:
        reconcile_total.with({options.name, "requeue_after"}).inc();
        queue.forget(key);
        queue.add_after(key, result.after);
        break;
      case ReconcileResult::Kind::error: {
        reconcile_total.with({options.name, "error"}).inc();
        errors.inc();
        const Duration retry = queue.add_rate_limited(key, result.failure);
        net::log::warn(
            "reconcile failed; will retry",
            {{"controller", options.name},
             {"key", key},
             {"error", result.message},
             {"api_failure", result.failure == FailureKind::api},
             {"retry_in_ms",
              static_cast<std::int64_t>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(retry).count())}});
        break;
      }
      case ReconcileResult::Kind::terminal: {
        reconcile_total.with({options.name, "error"}).inc();
        errors.inc();
        terminal_errors.inc();
        queue.forget(key);
        {
          const std::lock_guard lock(terminal_mutex);
          terminal.insert(key);
        }
        net::log::warn("reconcile failed; no retry until it changes",
                       {{"controller", options.name}, {"key", key}, {"error", result.message}});
        break;
      }
    }
    queue.done(key);
  }

  Duration next_resync_delay() {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double factor = 1.0 + std::max(0.0, options.resync_jitter) * unit(rng);
    return Duration(
        static_cast<Duration::rep>(static_cast<double>(options.resync_period.count()) * factor));
  }

  boost::asio::awaitable<void> resync_loop(TimePoint due) {
    // The only user of resync_timer and rng (after start()).
    for (bool first = true; !shutting_down.load(); first = false) {
      if (!first) due = clock.now() + next_resync_delay();
      ClockTimer::Woke woke = ClockTimer::Woke::notified;
      while (woke == ClockTimer::Woke::notified) woke = co_await resync_timer.wait_until(due);
      if (woke == ClockTimer::Woke::cancelled || shutting_down.load()) break;
      net::log::debug("periodic resync", {{"controller", options.name}});
      resync();
    }
  }

  // The progress line, every period while keys are queued.
  // `due`: the first line's time, counted from start() (not from whenever the loop first
  // runs).
  boost::asio::awaitable<void> progress_loop(TimePoint due) {
    // The only user of progress_timer.
    for (; !shutting_down.load(); due = clock.now() + options.progress_period) {
      ClockTimer::Woke woke = ClockTimer::Woke::notified;
      while (woke == ClockTimer::Woke::notified) woke = co_await progress_timer.wait_until(due);
      if (woke == ClockTimer::Woke::cancelled || shutting_down.load()) break;
      if (queue.len() == 0) {
        done = 0;  // a quiet period: the next line counts from here
        continue;
      }
      const Progress p = progress(true);
      net::log::info("work queue progress", {{"controller", options.name},
                                             {"done", p.done},
                                             {"queued", p.queued},
                                             {"waiting", p.waiting},
                                             {"failing", p.failing},
                                             {"in_flight", p.in_flight}});
    }
  }

  Progress progress(bool take) {
    Progress p;
    p.done = take ? done.exchange(0) : done.load();
    p.queued = queue.len();
    p.waiting = queue.waiting();
    p.in_flight = queue.processing();
    const std::lock_guard lock(failing_mutex);
    p.failing = failing.size();
    return p;
  }

  void resync() {
    std::vector<std::string> keys = roots ? roots() : std::vector<std::string>{};
    std::unordered_set<std::string> skip;
    {
      const std::lock_guard lock(terminal_mutex);
      skip = terminal;
    }
    for (const auto& key : keys) {
      if (!skip.contains(key)) queue.add(key);
    }
  }

  void enqueue(const std::string& key) {
    {
      const std::lock_guard lock(terminal_mutex);
      terminal.erase(key);
    }
    queue.add(key);
  }

  void shut_down() {
    if (shutting_down.exchange(true)) return;
    queue.shut_down();
    resync_timer.cancel();
    progress_timer.cancel();
  }

  boost::asio::any_io_executor executor;
  const ControllerOptions options;
  const Reconciler reconciler;
  const RootLister roots;
  const net::Clock& clock;
  RateLimitedQueue queue;

  ClockTimer resync_timer;    // waited on by resync_loop only (thread-safe pokes)
  ClockTimer progress_timer;  // waited on by progress_loop only
  ClockTimer stop_timer;      // waited on by stop(); notified by the last worker
  std::mt19937_64 rng;        // owned by resync_loop

  struct KeyStrand {
    boost::asio::strand<boost::asio::any_io_executor> strand;
    int users = 0;
  };
  std::mutex strands_mutex;  // owns strands
  // The strand of each key being reconciled (a key's next reconcile may get a new one:
  // the queue already keeps two reconciles of a key from overlapping).
  std::unordered_map<std::string, KeyStrand> strands;

  std::mutex terminal_mutex;  // owns terminal
  std::unordered_set<std::string> terminal;

  std::atomic<std::uint64_t> done{0};       // reconciles finished since the last progress line
  std::mutex failing_mutex;                 // owns failing
  std::unordered_set<std::string> failing;  // keys whose last reconcile failed

  std::atomic<bool> shutting_down{false};
  std::atomic<int> workers_running{0};

  net::metrics::Registry& registry;
  net::metrics::Family<net::metrics::Counter>& reconcile_total;
  net::metrics::Counter& errors;
  net::metrics::Counter& terminal_errors;
  net::metrics::Histogram& reconcile_time;
  net::metrics::Gauge& active;
  net::metrics::Gauge& max_concurrent;
};

Controller::Controller(boost::asio::any_io_executor executor, ControllerOptions options,
                       Reconciler reconciler, RootLister roots, const net::Clock& clock)
    : state_(std::make_shared<State>(std::move(executor), std::move(options), std::move(reconciler),
                                     std::move(roots), clock)) {}

Controller::~Controller() {
  state_->shut_down();
}

void Controller::start() {
  if (started_.exchange(true) || state_->shutting_down.load()) return;
  const int workers = std::max(1, state_->options.workers);
  state_->workers_running = workers;
  for (int i = 0; i < workers; ++i) {
    boost::asio::co_spawn(
        state_->executor, [s = state_]() { return s->work(); }, boost::asio::detached);
  }
  if (state_->options.resync_period > Duration::zero()) {
    // The first period counts from now, not from whenever the loop first runs.
    const TimePoint due = state_->clock.now() + state_->next_resync_delay();
    boost::asio::co_spawn(
        state_->executor, [s = state_, due]() { return s->resync_loop(due); },
        boost::asio::detached);
  }
  if (state_->options.progress_period > Duration::zero()) {
    const TimePoint due = state_->clock.now() + state_->options.progress_period;
    boost::asio::co_spawn(
        state_->executor, [s = state_, due]() { return s->progress_loop(due); },
        boost::asio::detached);
  }
  net::log::info("controller started",
                 {{"controller", state_->options.name}, {"workers", workers}});
}

void Controller::shut_down() {
  state_->shut_down();
}

boost::asio::awaitable<bool> Controller::stop(Duration deadline) {
  const auto s = state_;
  s->shut_down();
  const TimePoint until = s->clock.now() + deadline;
  while (!stopped()) {
    const ClockTimer::Woke woke = co_await s->stop_timer.wait_until(until);
    if (stopped()) break;
    if (woke != ClockTimer::Woke::notified) {
      net::log::warn("controller stop: reconciles still running at the deadline",
                     {{"controller", s->options.name},
                      {"in_flight", static_cast<std::uint64_t>(s->queue.processing())}});
      co_return false;
    }
  }
  co_return true;
}

void Controller::enqueue(const std::string& key) {
  state_->enqueue(key);
}

void Controller::enqueue_after(const std::string& key, Duration delay) {
  state_->queue.add_after(key, delay);
}

void Controller::resync_now() {
  state_->resync();
}

void Controller::poll() {
  state_->queue.poll();
  state_->resync_timer.wake();
  state_->progress_timer.wake();
  state_->stop_timer.wake();
}

Controller::Progress Controller::progress(bool take) {
  return state_->progress(take);
}

bool Controller::stopped() const {
  return state_->shutting_down.load() && state_->workers_running.load() == 0;
}

int Controller::active_workers() const {
  return static_cast<int>(state_->active.value());
}

const std::string& Controller::name() const {
  return state_->options.name;
}

RateLimitedQueue& Controller::queue() {
  return state_->queue;
}

}  // namespace aop::runtime
