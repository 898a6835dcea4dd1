// Events: the aggregator (k8s/event_aggregator.hpp) and the coroutine that writes.
#include "k8s/event_recorder.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/json.hpp>

#include "k8s/event_aggregator.hpp"
#include "k8s/timestamp.hpp"
#include "net/log.hpp"
#include "net/metrics.hpp"
#include "net/redact.hpp"

namespace aop::k8s {
namespace json = boost::json;
namespace asio = boost::asio;

namespace {

std::string object_id(const EventSubject& s) {
  return s.uid.empty() ? s.kind + "/" + s.ns + "/" + s.name : s.uid;
}

std::string_view type_name(EventType t) {
  return t == EventType::warning ? "Warning" : "Normal";
}

}  // namespace

// --- aggregator --------------------------------------------------------------------

void EventAggregator::add(const EventSubject& subject, EventType type, std::string reason,
                          std::string message, std::string wall_now) {
  if (message.size() > kMaxEventMessage) message.resize(kMaxEventMessage);
  Key key{subject.uid, subject.kind, subject.ns, subject.name, static_cast<int>(type),
          reason,      message};
  for (auto& p : queue_) {
    if (p.key == key) {
      ++p.count;
      p.last_timestamp = std::move(wall_now);
      p.subject.resource_version = subject.resource_version;
      return;
    }
  }
  if (queue_.size() >= kMaxPendingEvents) {
    dropped_ += static_cast<std::uint64_t>(queue_.front().count);
    queue_.pop_front();
  }
  queue_.push_back(Pending{std::move(key), subject, type, std::move(reason), std::move(message), 1,
                           std::move(wall_now)});
}

std::optional<EventWrite> EventAggregator::next(net::TimePoint now, std::string_view name_suffix) {
  while (!queue_.empty()) {
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    const std::string object = object_id(p.subject);
    auto b = budgets_.find(object);
    if (b == budgets_.end()) {
      b = budgets_
              .emplace(object,
                       Budget{net::TokenBucket(kEventRefillPerSecond, kEventBurst, now), now})
              .first;
    }
    b->second.last_used = now;
    if (!b->second.bucket.try_take(now)) {
      dropped_ += static_cast<std::uint64_t>(p.count);
      continue;
    }
    EventWrite w;
    w.subject = p.subject;
    w.type = p.type;
    w.reason = p.reason;
    w.message = p.message;
    w.last_timestamp = p.last_timestamp;
    // Events of cluster-scoped objects live in "default", as client-go puts them.
    w.ns = p.subject.ns.empty() ? "default" : p.subject.ns;
    auto agg = aggregates_.find(p.key);
    if (agg != aggregates_.end() && agg->second.valid &&
        now - agg->second.last_write < kEventAggregationWindow) {
      w.kind = EventWrite::Kind::patch;
      w.name = agg->second.name;
      w.ns = agg->second.ns;
      w.count = agg->second.count + p.count;
      w.first_timestamp = agg->second.first_timestamp;
    } else {
      w.kind = EventWrite::Kind::create;
      w.name = p.subject.name + "." + std::string(name_suffix);
      w.count = p.count;
      w.first_timestamp = p.last_timestamp;
    }
    evict();
    return w;
  }
  return std::nullopt;
}

void EventAggregator::written(const EventWrite& w, bool ok, net::TimePoint now) {
  Key key{w.subject.uid, w.subject.kind, w.subject.ns, w.subject.name, static_cast<int>(w.type),
          w.reason,      w.message};
  auto& agg = aggregates_[key];
  if (!ok) {
    agg.valid = false;
    return;
  }
  agg.ns = w.ns;
  agg.name = w.name;
  agg.count = w.count;
  agg.first_timestamp = w.first_timestamp;
  agg.last_write = now;
  agg.valid = true;
}

void EventAggregator::evict() {
  // Bounded memory: forget the least recently written aggregates and least recently
  // used budgets once over the cap (a forgotten key just starts a new Event).
  if (aggregates_.size() > kMaxTrackedEvents) {
    auto oldest = std::min_element(aggregates_.begin(), aggregates_.end(), [](auto& a, auto& b) {
      return a.second.last_write < b.second.last_write;
    });
    aggregates_.erase(oldest);
  }
  if (budgets_.size() > kMaxTrackedEvents) {
    auto oldest = std::min_element(budgets_.begin(), budgets_.end(), [](auto& a, auto& b) {
      return a.second.last_used < b.second.last_used;
    });
    budgets_.erase(oldest);
  }
}

// --- recorder ----------------------------------------------------------------------

namespace {

json::value event_body(const EventWrite& w, const EventRecorderOptions& o) {
  json::object involved;
  involved["apiVersion"] = w.subject.api_version;
  involved["kind"] = w.subject.kind;
  if (!w.subject.ns.empty()) involved["namespace"] = w.subject.ns;
  involved["name"] = w.subject.name;
  if (!w.subject.uid.empty()) involved["uid"] = w.subject.uid;
  if (!w.subject.resource_version.empty()) {
    involved["resourceVersion"] = w.subject.resource_version;
  }
  json::object md;
  md["name"] = w.name;
  md["namespace"] = w.ns;
  json::object source;
  source["component"] = o.component;
  json::object e;
  e["apiVersion"] = "v1";
  e["kind"] = "Event";
  e["metadata"] = std::move(md);
  e["involvedObject"] = std::move(involved);
  e["reason"] = w.reason;
  e["message"] = w.message;
  e["type"] = type_name(w.type);
  e["source"] = std::move(source);
  e["firstTimestamp"] = w.first_timestamp;
  e["lastTimestamp"] = w.last_timestamp;
  e["count"] = w.count;
  e["reportingComponent"] = o.component;
  e["reportingInstance"] = o.instance;
  return e;
}

struct RecorderMetrics {
  net::metrics::Family<net::metrics::Counter>& written;
  net::metrics::Family<net::metrics::Counter>& dropped;
  static RecorderMetrics& instance() {
    auto& r = net::metrics::registry();
    static RecorderMetrics m{
        r.counter("events_written_total", "Kubernetes Event writes, by verb.", {"verb"}),
        r.counter("events_dropped_total",
                  "Event records dropped by the per-object rate limit or a full "
                  "queue.")};
    return m;
  }
};

struct RecorderState {
  RecorderState(const asio::any_io_executor& executor, ApiClient& c, EventRecorderOptions o)
      : client(c), options(std::move(o)), strand(asio::make_strand(executor)) {}
  ApiClient& client;
  const EventRecorderOptions options;
  asio::strand<asio::any_io_executor> strand;
  EventAggregator aggregator;          // strand
  bool writing = false;                // strand: the writer coroutine is running
  std::uint64_t dropped_reported = 0;  // strand
};

const GroupVersionKind& event_kind() {
  static const GroupVersionKind kind{"", "v1", "Event"};
  return kind;
}

asio::awaitable<void> write_events(std::shared_ptr<RecorderState> s) {
  auto& metrics = RecorderMetrics::instance();
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    const auto suffix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%llx", static_cast<unsigned long long>(suffix_ns));
    auto w = s->aggregator.next(now, suffix);
    if (const auto d = s->aggregator.dropped(); d > s->dropped_reported) {
      metrics.dropped().inc(static_cast<double>(d - s->dropped_reported));
      s->dropped_reported = d;
    }
    if (!w) break;
    bool ok = false;
    if (w->kind == EventWrite::Kind::patch) {
      json::object patch;
      patch["count"] = w->count;
      patch["lastTimestamp"] = w->last_timestamp;
      patch["message"] = w->message;
      const ObjectKey key{w->ns, w->name};
      const json::value body = std::move(patch);
      auto r = co_await s->client.patch(event_kind(), key, PatchType::merge, body, false);
      ok = r.has_value();
      metrics.written.with({"patch"}).inc();
      if (!ok && r.error().not_found()) {
        // The Event expired (the API server keeps them an hour): start a new one.
        s->aggregator.written(*w, false, now);
        w->kind = EventWrite::Kind::create;
        w->name = w->subject.name + "." + suffix;
      }
    }
    if (w->kind == EventWrite::Kind::create) {
      const json::value body = event_body(*w, s->options);
      auto r = co_await s->client.create(body);
      ok = r.has_value();
      metrics.written.with({"create"}).inc();
      if (!ok) {
        net::log::debug("cannot write an Event",
                        {{"reason", w->reason}, {"error", r.error().describe()}});
      }
    }
    s->aggregator.written(*w, ok, std::chrono::steady_clock::now());
  }
  s->writing = false;
}

class AggregatingRecorder final : public EventRecorder {
 public:
  AggregatingRecorder(const asio::any_io_executor& executor, ApiClient& client,
                      EventRecorderOptions options)
      : s_(std::make_shared<RecorderState>(executor, client, std::move(options))) {
    // Exported at 0 from the start, so that rates and alerts see the series before the
    // first Event.
    auto& m = RecorderMetrics::instance();
    m.written.with({"create"});
    m.written.with({"patch"});
    m.dropped();
  }

  void record(const EventSubject& subject, EventType type, std::string reason,
              std::string message) override {
    // Messages quote user input (URLs from annotations, say): never their credentials.
    if (net::needs_redaction(message)) message = net::redact(message);
    std::string now = format_rfc3339(std::chrono::system_clock::now());
    asio::post(s_->strand, [s = s_, subject, type, reason = std::move(reason),
                            message = std::move(message), now = std::move(now)]() mutable {
      s->aggregator.add(subject, type, std::move(reason), std::move(message), std::move(now));
      if (!s->writing) {
        s->writing = true;
        asio::co_spawn(s->strand, write_events(s), asio::detached);
      }
    });
  }

 private:
  std::shared_ptr<RecorderState> s_;
};

}  // namespace

std::unique_ptr<EventRecorder> make_event_recorder(asio::any_io_executor executor,
                                                   ApiClient& client,
                                                   EventRecorderOptions options) {
  return std::make_unique<AggregatingRecorder>(std::move(executor), client, std::move(options));
}

}  // namespace aop::k8s
