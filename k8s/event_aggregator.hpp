// The pure core of the Events recorder: which Event to write for each record, when
// repeats are folded into one Event's count, and when a noisy object is silenced.
//
// Records wait in a queue keyed by (object, type, reason, message); a repeat of a
// queued record only raises its count, so a hot loop costs one write, not thousands.
// Each write is either a create (first time, or the last write of that key is older
// than the aggregation window) or a count/lastTimestamp patch of the existing Event.
// Writes per object are limited by a token bucket (client-go's spam filter: burst 25,
// then one per five minutes); records over budget are dropped and counted.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "k8s/event_recorder.hpp"
#include "net/clock.hpp"
#include "net/rate_limiter.hpp"

namespace aop::k8s {

// Repeats within this window update the same Event (client-go: 10 minutes).
inline constexpr std::chrono::minutes kEventAggregationWindow{10};
// Per-object write budget (client-go's EventSourceObjectSpamFilter).
inline constexpr std::uint32_t kEventBurst = 25;
inline constexpr double kEventRefillPerSecond = 1.0 / 300.0;
// Records waiting to be written; beyond this the oldest are dropped (the API server is
// unreachable or far too slow, and Events are best-effort).
inline constexpr std::size_t kMaxPendingEvents = 1000;
// Aggregation and budget entries kept (least recently used go first).
inline constexpr std::size_t kMaxTrackedEvents = 4096;
// The API server rejects longer messages; keep the start.
inline constexpr std::size_t kMaxEventMessage = 1024;

struct EventWrite {
  enum class Kind { create, patch };
  Kind kind = Kind::create;
  std::string ns;    // the Event's namespace
  std::string name;  // the Event's name
  EventSubject subject;
  EventType type = EventType::normal;
  std::string reason;
  std::string message;
  std::int64_t count = 1;       // the Event's total count after this write
  std::string first_timestamp;  // RFC 3339
  std::string last_timestamp;
};

class EventAggregator {
 public:
  // Queues a record. `wall_now` (RFC 3339) stamps it.
  void add(const EventSubject& subject, EventType type, std::string reason, std::string message,
           std::string wall_now);

  // The next write, or nullopt when nothing is pending. Records of an object over its
  // budget are dropped here (see dropped()). `name_suffix` makes new Event names unique
  // (client-go: the creation time in hex nanoseconds).
  std::optional<EventWrite> next(net::TimePoint now, std::string_view name_suffix);

  // The outcome of a write returned by next(). A failed patch (the Event was deleted
  // or expired) makes the next write of that key a create.
  void written(const EventWrite& write, bool ok, net::TimePoint now);

  std::size_t pending() const { return queue_.size(); }
  std::uint64_t dropped() const { return dropped_; }

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string, int, std::string,
                         std::string>;  // uid, kind, ns, name, type, reason, message
  struct Pending {
    Key key;
    EventSubject subject;
    EventType type;
    std::string reason, message;
    std::int64_t count = 0;  // records folded into this write
    std::string last_timestamp;
  };
  struct Aggregate {
    std::string ns, name;  // the Event written for this key
    std::int64_t count = 0;
    std::string first_timestamp;
    net::TimePoint last_write{};
    bool valid = false;  // false after a failed patch: create anew
  };
  struct Budget {
    net::TokenBucket bucket;
    net::TimePoint last_used{};
  };

  void evict();

  std::deque<Pending> queue_;
  std::map<Key, Aggregate> aggregates_;
  std::map<std::string, Budget> budgets_;  // by object (uid or kind/ns/name)
  std::uint64_t dropped_ = 0;
};

}  // namespace aop::k8s
