// The informer: the thin coroutine that performs what the reflector state machine
// (k8s/reflector.hpp) asks for, and delivers the resulting store changes to handlers.
#include "k8s/informer.hpp"

#include <limits>
#include <map>
#include <mutex>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/log.hpp"
#include "net/metrics.hpp"

namespace aop::k8s {
namespace asio = boost::asio;

namespace {

std::string describe_kind(const InformerOptions& o) {
  std::string s = o.gvk.api_version() + " " + o.gvk.kind;
  if (!o.ns.empty()) s += " in " + o.ns;
  return s;
}

ReflectorConfig reflector_config(const InformerOptions& o) {
  ReflectorConfig c;
  c.gvk = o.gvk;
  c.transform = o.transform;
  c.page_size = o.page_size;
  c.streaming_list = o.streaming_list;
  c.backoff = o.backoff;
  c.min_watch_timeout = o.min_watch_timeout;
  c.max_watch_timeout = o.max_watch_timeout;
  c.stall_timeout = o.stall_timeout;
  return c;
}

using SteadyTime = std::chrono::steady_clock::time_point;
constexpr std::int64_t kConnected = std::numeric_limits<std::int64_t>::min();

std::int64_t ticks(SteadyTime t) {
  return t.time_since_epoch().count();
}
SteadyTime from_ticks(std::int64_t n) {
  return SteadyTime(SteadyTime::duration(n));
}

// The metric labels of an informer: what it watches.
std::vector<std::string> metric_labels(const InformerOptions& o) {
  std::string kind = o.gvk.kind;
  if (!o.gvk.group.empty()) kind += "." + o.gvk.group;
  std::string selector = o.label_selector;
  if (!o.field_selector.empty()) selector += (selector.empty() ? "" : ",") + o.field_selector;
  return {std::move(kind), o.ns, std::move(selector)};
}

// Everything the coroutine uses, shared with it so that destroying the Informer while
// the coroutine is suspended is safe: the coroutine notices `stopped` and returns.
struct State {
  State(const asio::any_io_executor& executor, ApiClient& c, InformerOptions o)
      : options(std::move(o)),
        client(c),
        strand(asio::make_strand(executor)),
        timer(strand),
        reflector(reflector_config(options), store),
        kind(describe_kind(options)) {}

  const InformerOptions options;
  ApiClient& client;
  asio::strand<asio::any_io_executor> strand;
  Store store;                         // thread-safe on its own
  std::vector<EventHandler> handlers;  // fixed before start()
  asio::steady_timer timer;            // strand
  Reflector reflector;                 // strand
  std::atomic<bool> started{false};
  std::atomic<bool> stopped{false};
  std::atomic<bool> synced{false};
  std::mutex watch_mutex;  // owns watch (stop() closes it from any thread)
  std::unique_ptr<WatchStream> watch;
  const std::string kind;  // for logs
  // The reflector's liveness, published after every step for health() and the metric.
  std::atomic<std::int64_t> last_event_at{ticks(net::steady_clock().now())};
  std::atomic<std::int64_t> disconnected_since{kConnected};
  net::metrics::Counter* stalls = nullptr;  // informer_watch_stalls_total child

  void publish() {
    last_event_at.store(ticks(reflector.last_event_at()), std::memory_order_relaxed);
    const auto& since = reflector.disconnected_since();
    disconnected_since.store(since ? ticks(*since) : kConnected, std::memory_order_relaxed);
  }
  InformerHealth health() const {
    InformerHealth h;
    h.synced = synced.load(std::memory_order_acquire);
    h.last_event_at = from_ticks(last_event_at.load(std::memory_order_relaxed));
    const auto since = disconnected_since.load(std::memory_order_relaxed);
    if (since != kConnected) h.disconnected_since = from_ticks(since);
    return h;
  }
};

// Every informer alive in the process, for the metric scraped from any thread.
struct LiveInformers {
  std::mutex mutex;  // owns states
  std::vector<std::weak_ptr<State>> states;

  static LiveInformers& instance() {
    static LiveInformers live;
    return live;
  }

  void add(const std::shared_ptr<State>& s) {
    const std::lock_guard lock(mutex);
    std::erase_if(states, [](const auto& w) { return w.expired(); });
    states.push_back(s);
  }

  // The age of each informer's last event; informers with the same labels (two caches
  // of one kind differing only in what they keep) report the oldest.
  net::metrics::Registry::Samples ages() {
    const auto now = net::steady_clock().now();
    std::map<std::vector<std::string>, double> by_labels;
    const std::lock_guard lock(mutex);
    std::erase_if(states, [](const auto& w) { return w.expired(); });
    for (const auto& w : states) {
      const auto s = w.lock();
      if (!s || !s->started.load() || s->stopped.load()) continue;
      const double age = std::chrono::duration<double>(now - s->health().last_event_at).count();
      double& slot = by_labels[metric_labels(s->options)];
      slot = std::max(slot, age);
    }
    return {by_labels.begin(), by_labels.end()};
  }
};

void register_metrics_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    net::metrics::registry().gauge_callback(
        "informer_last_event_age_seconds",
        "Seconds since each informer last heard from the API server (a watch event or "
        "bookmark, an opened watch, a list page). Bookmarks arrive about once a minute, so "
        "a value well above that means a stalled or disconnected watch.",
        {"kind", "namespace", "selector"}, [] { return LiveInformers::instance().ages(); });
  });
}

net::metrics::Counter& stalls_counter(const InformerOptions& o) {
  return net::metrics::registry()
      .counter("informer_watch_stalls_total",
               "Watches closed and resumed because they received nothing, not even a "
               "bookmark, for the stall timeout.",
               {"kind", "namespace", "selector"})
      .with(metric_labels(o));
}

void deliver(State& s, std::vector<StoreChange>& changes) {
  for (auto& c : changes) {
    for (const auto& h : s.handlers) {
      if (s.stopped.load(std::memory_order_acquire)) return;
      switch (c.type) {
        case StoreChange::Type::added:
          if (h.on_add) h.on_add(c.new_object);
          break;
        case StoreChange::Type::updated:
          if (h.on_update) h.on_update(c.old_object, c.new_object);
          break;
        case StoreChange::Type::deleted:
          if (h.on_delete) h.on_delete(c.old_object);
          break;
      }
    }
  }
}

void close_watch(State& s) {
  std::unique_ptr<WatchStream> w;
  {
    const std::lock_guard lock(s.watch_mutex);
    w = std::move(s.watch);
  }
  if (w) w->close();
}

void log_failure(const State& s, net::Duration delay) {
  const auto& e = s.reflector.last_error();
  if (e && e->stalled()) {
    net::log::warn(
        "watch stalled: nothing received, not even a bookmark; replacing it",
        {{"kind", s.kind},
         {"silent_for_ms",
          static_cast<std::int64_t>(
              std::chrono::duration_cast<std::chrono::milliseconds>(s.options.stall_timeout)
                  .count())},
         {"resource_version", s.reflector.resource_version()},
         {"retry_in_ms",
          static_cast<std::int64_t>(
              std::chrono::duration_cast<std::chrono::milliseconds>(delay).count())}});
    return;
  }
  net::log::warn(
      "list/watch failed; retrying",
      {{"kind", s.kind},
       {"error", e ? e->describe() : std::string("unknown")},
       {"retry_in_ms", static_cast<std::int64_t>(
                           std::chrono::duration_cast<std::chrono::milliseconds>(delay).count())}});
}

asio::awaitable<void> run(std::shared_ptr<State> s) {
  auto now = [] { return std::chrono::steady_clock::now(); };
  Reflector::Step step = s->reflector.start(now());
  std::uint64_t stalls_seen = 0;
  while (!s->stopped.load(std::memory_order_acquire)) {
    s->publish();
    if (s->reflector.stats().stalls != stalls_seen) {
      s->stalls->inc(static_cast<double>(s->reflector.stats().stalls - stalls_seen));
      stalls_seen = s->reflector.stats().stalls;
    }
    deliver(*s, step.changes);
    if (s->reflector.has_synced() && !s->synced.load(std::memory_order_relaxed)) {
      s->synced.store(true, std::memory_order_release);
      net::log::info("informer synced", {{"kind", s->kind}, {"objects", s->store.size()}});
    }
    if (!std::holds_alternative<Reflector::ReadEvent>(step.next)) close_watch(*s);
    if (s->stopped.load(std::memory_order_acquire)) break;

    if (const auto* list = std::get_if<Reflector::ListRequest>(&step.next)) {
      ListOptions lo;
      lo.label_selector = s->options.label_selector;
      lo.field_selector = s->options.field_selector;
      lo.limit = list->limit;
      lo.metadata_only = s->options.transform.metadata_only;
      auto page = co_await s->client.list_objects_page(s->options.gvk, s->options.ns, lo,
                                                       list->continue_token, s->options.transform);
      step = s->reflector.on_object_page(now(), std::move(page));
    } else if (const auto* w = std::get_if<Reflector::WatchRequest>(&step.next)) {
      WatchOptions wo;
      wo.label_selector = s->options.label_selector;
      wo.field_selector = s->options.field_selector;
      wo.resource_version = w->resource_version;
      wo.timeout = w->timeout;
      wo.allow_bookmarks = true;
      wo.metadata_only = s->options.transform.metadata_only;
      wo.send_initial_events = w->send_initial_events;
      wo.idle_timeout = w->idle_timeout;
      auto opened = co_await s->client.watch(s->options.gvk, s->options.ns, wo);
      if (opened) {
        const std::lock_guard lock(s->watch_mutex);
        s->watch = std::move(*opened);
        if (s->stopped.load(std::memory_order_acquire)) s->watch->close();
        step = s->reflector.on_watch_opened(now(), {});
      } else {
        step = s->reflector.on_watch_opened(now(), ApiResult<void>(opened.error()));
      }
    } else if (std::holds_alternative<Reflector::ReadEvent>(step.next)) {
      WatchStream* w = nullptr;
      {
        const std::lock_guard lock(s->watch_mutex);
        w = s->watch.get();
      }
      if (w == nullptr) break;  // closed by stop()
      // The stream stays alive while we wait: only this coroutine destroys it
      // (close_watch); stop() merely closes it, which ends the wait.
      auto event = co_await w->next_object(s->options.transform, s->options.gvk);
      step = s->reflector.on_object_event(now(), std::move(event));
    } else if (const auto* sleep = std::get_if<Reflector::Sleep>(&step.next)) {
      log_failure(*s, sleep->delay);
      s->timer.expires_after(sleep->delay);
      boost::system::error_code ec;
      co_await s->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      step = s->reflector.on_wake(now());
    } else {
      break;  // Stopped
    }
  }
  s->reflector.stop();
  close_watch(*s);
}

class ReflectorInformer final : public Informer {
 public:
  ReflectorInformer(const asio::any_io_executor& executor, ApiClient& client,
                    InformerOptions options)
      : s_(std::make_shared<State>(executor, client, std::move(options))) {
    register_metrics_once();
    s_->stalls = &stalls_counter(s_->options);
    LiveInformers::instance().add(s_);
  }

  ~ReflectorInformer() override { stop(); }

  const InformerOptions& options() const override { return s_->options; }

  void add_handler(EventHandler handler) override {
    if (s_->started.load()) throw std::logic_error("Informer::add_handler after start()");
    s_->handlers.push_back(std::move(handler));
  }

  Store& store() override { return s_->store; }

  void add_index(std::string name, IndexFunc fn) override {
    s_->store.add_index(std::move(name), std::move(fn));
  }

  void start() override {
    if (s_->started.exchange(true)) return;
    asio::co_spawn(s_->strand, run(s_), asio::detached);
  }

  void stop() override {
    if (s_->stopped.exchange(true)) return;
    {
      // Close (but keep) the stream: a pending next() returns operation_aborted and
      // the coroutine, seeing `stopped`, releases it.
      const std::lock_guard lock(s_->watch_mutex);
      if (s_->watch) s_->watch->close();
    }
    asio::post(s_->strand, [s = s_] { s->timer.cancel(); });
  }

  bool has_synced() const override { return s_->synced.load(std::memory_order_acquire); }

  InformerHealth health() const override { return s_->health(); }

 private:
  std::shared_ptr<State> s_;
};

}  // namespace

std::unique_ptr<Informer> make_informer(asio::any_io_executor executor, ApiClient& client,
                                        InformerOptions options) {
  return std::make_unique<ReflectorInformer>(std::move(executor), client, std::move(options));
}

}  // namespace aop::k8s
