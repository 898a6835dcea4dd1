// The reflector as a pure state machine: it decides what to request next (a list page,
// a watch, a wait) and applies what comes back to a Store, but performs no I/O and
// reads no clock. The informer (k8s/informer.cpp) drives it with coroutines; tests
// drive it with scripted responses and explicit time points.
//
//            start
//              |
//              v          page with continue token
//          +--------+ <----------------+
//   +----> | listing | -----------------+
//   |      +--------+
//   |  410     | last page: store.replace(all pages) -> synced
//   |          v
//   |   +---------------+  open failed (not 410)   +-------------+
//   +---| opening watch | -----------------------> | backing off |
//   |   +---------------+ <----------------------- +-------------+
//   |          | opened                 wake          ^
//   |          v                                      |
//   |    +----------+  stream ended: reopen from      | stream failed, ERROR event
//   +----| watching |  the last resourceVersion       | (not 410)
//   410  +----------+ --------------------------------+
//
// With `streaming_list`, the first state is instead a watch with sendInitialEvents:
// ADDED events are buffered until the `k8s.io/initial-events-end` bookmark, then
// replace the store just as a list does. A server that refuses it (4xx) makes the
// machine fall back to list+watch for good.
//
// Every failure waits for the backoff (800 ms doubling to 30 s with jitter, reset after
// two minutes of health). A relist always replaces the store atomically, so objects
// deleted while disconnected are reported as deletions.
//
// Liveness: every watch asks for bookmarks, which kube-apiserver sends about once a
// minute, so a healthy stream is never silent for long. A watch that receives nothing
// for `stall_timeout` (a multiple of that interval; the transport enforces it per byte
// and reports ApiError::stalled()) is presumed dead, like a half-open connection behind
// a failed load balancer: it is closed and resumed from the last resourceVersion after
// the backoff, as any failed stream is. The machine keeps when it last heard from the
// server (last_event_at) and since when it has had no working watch
// (disconnected_since), for the informer's metric and readiness check.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "k8s/api_client.hpp"
#include "k8s/object.hpp"
#include "k8s/store.hpp"
#include "net/backoff.hpp"
#include "net/clock.hpp"

namespace aop::k8s {

// Randomized watch timeouts keep the watches of many clients (and of one client's many
// informers) from all ending, and reconnecting, at the same moment: client-go's 5-10 min.
inline constexpr std::chrono::seconds kMinWatchTimeout{300};
inline constexpr std::chrono::seconds kMaxWatchTimeout{600};
// A watch that ends cleanly this soon without delivering anything counts as a failure,
// so a server that closes every watch at once is not hammered in a tight loop.
inline constexpr std::chrono::seconds kMinHealthyWatch{1};
// Two bookmark intervals of kube-apiserver (one minute): with the backoff's first delay
// a stalled stream is replaced about 121 s after the last byte it delivered.
inline constexpr std::chrono::seconds kDefaultStallTimeout{120};
// The bookmark annotation that ends the initial events of a streaming list.
inline constexpr std::string_view kInitialEventsEnd = "k8s.io/initial-events-end";

struct ReflectorConfig {
  GroupVersionKind gvk;  // fills apiVersion/kind of list items, which lack them
  Transform transform;
  std::size_t page_size = 500;
  bool streaming_list = false;
  net::BackoffPolicy backoff;  // client-go's reflector defaults
  std::chrono::seconds min_watch_timeout = kMinWatchTimeout;
  std::chrono::seconds max_watch_timeout = kMaxWatchTimeout;
  // A watch silent for this long (no event, bookmark or byte) is replaced.
  std::chrono::milliseconds stall_timeout = kDefaultStallTimeout;
  std::uint64_t seed = std::random_device{}();  // watch timeouts and backoff jitter
};

class Reflector {
 public:
  enum class Phase { idle, listing, opening_watch, watching, backing_off, stopped };

  // --- actions: what the driver does next -------------------------------------------
  // LIST one page and report it with on_list_page().
  struct ListRequest {
    std::string continue_token;  // "" = first page
    std::size_t limit = 0;
  };
  // Open a watch and report with on_watch_opened().
  struct WatchRequest {
    std::string resource_version;
    std::chrono::seconds timeout{0};
    bool send_initial_events = false;
    // The stream fails as stalled when nothing arrives for this long (the transport's
    // idle timeout between reads, WatchOptions::idle_timeout).
    std::chrono::milliseconds idle_timeout{0};
  };
  // Read the next event of the open watch and report it with on_event().
  struct ReadEvent {};
  // Wait, then call on_wake().
  struct Sleep {
    net::Duration delay{};
  };
  struct Stopped {};
  using Action = std::variant<ListRequest, WatchRequest, ReadEvent, Sleep, Stopped>;

  // The result of one input. `changes` have been applied to the store already and are
  // for the event handlers, in order. Any open watch must be closed when `next` is not
  // ReadEvent.
  struct Step {
    std::vector<StoreChange> changes;
    Action next;
  };

  // Counters for metrics and tests.
  struct Stats {
    std::uint64_t lists = 0;         // complete lists (or streaming lists) stored
    std::uint64_t relists_gone = 0;  // relists caused by 410 Gone
    std::uint64_t watches = 0;       // watches opened
    std::uint64_t failures = 0;      // failures that waited for the backoff
    std::uint64_t events = 0;        // watch events applied
    std::uint64_t stalls = 0;        // watches replaced because they went silent
  };

  Reflector(ReflectorConfig config, Store& store);

  Step start(net::TimePoint now);
  Step on_list_page(net::TimePoint now, ApiResult<ListPage> page);
  // The same with the items already encoded with config().transform and gvk
  // (ApiClient::list_objects_page): what the informer uses.
  Step on_object_page(net::TimePoint now, ApiResult<ObjectListPage> page);
  Step on_watch_opened(net::TimePoint now, const ApiResult<void>& opened);
  Step on_event(net::TimePoint now, ApiResult<WatchEvent> event);
  // The same with the object already encoded (WatchStream::next_object).
  Step on_object_event(net::TimePoint now, ApiResult<ObjectWatchEvent> event);
  Step on_wake(net::TimePoint now);
  Step stop();

  const ReflectorConfig& config() const { return config_; }
  Phase phase() const { return phase_; }
  bool has_synced() const { return synced_; }
  // The resourceVersion the next watch resumes from.
  const std::string& resource_version() const { return resource_version_; }
  // False once the server refused a streaming list.
  bool streaming_list() const { return streaming_; }
  const Stats& stats() const { return stats_; }
  const std::optional<ApiError>& last_error() const { return last_error_; }
  // When the server was last heard from: an event or bookmark, an opened watch, a list
  // page (the start before any of these).
  net::TimePoint last_event_at() const { return last_event_at_; }
  // Since when no watch has been working (from the start until the first watch opens;
  // from the end or failure of a watch until the next one opens; for a stalled watch,
  // from the last time it delivered anything). Empty while a watch is open.
  const std::optional<net::TimePoint>& disconnected_since() const { return disconnected_since_; }

 private:
  enum class Resume { relist, rewatch };

  // Lists from scratch (or starts a streaming list).
  Step relist();
  // Opens a watch from resource_version_.
  Step rewatch();
  Step fail(net::TimePoint now, Resume resume, const ApiError& error);
  // Replaces the store with pending_: a list (or the initial events) is complete.
  Step store_list(std::string resource_version);
  Step apply_event(net::TimePoint now, ObjectWatchEvent& event);
  std::chrono::seconds watch_timeout();
  ObjectPtr encode(const boost::json::value& v) const;

  ReflectorConfig config_;
  Store& store_;  // written only through this machine (one reflector per store)
  Phase phase_ = Phase::idle;
  bool streaming_ = false;        // try streaming lists (until refused)
  bool initial_ = false;          // the open watch is a streaming list still sending initial events
  bool synced_ = false;           // the first list has been stored
  std::string resource_version_;  // where the next watch starts
  std::vector<ObjectPtr> pending_;  // objects of the list (pages or initial events) so far
  std::string continue_token_;      // of the page being listed
  Resume after_wake_ = Resume::relist;
  net::TimePoint watch_opened_at_{};
  net::TimePoint last_event_at_{};
  std::optional<net::TimePoint> disconnected_since_;
  std::uint64_t watch_events_ = 0;  // events delivered by the current watch
  net::Backoff backoff_;
  std::mt19937_64 rng_;
  Stats stats_;
  std::optional<ApiError> last_error_;
};

std::string_view phase_name(Reflector::Phase phase);

}  // namespace aop::k8s
