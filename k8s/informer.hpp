// Informers: a reflector keeping a Store equal to the server's contents for one kind
// (optionally one namespace and selectors), and event handlers told of every change.
//
// The reflector is an explicit state machine (k8s/reflector.hpp):
//   Listing (paginated) -> Watching (from the list's resourceVersion, bookmarks on,
//   randomized 5-10 min timeout) -> on stream end: Watching again from the last seen
//   resourceVersion -> on 410 Gone: Listing again, and the relist replaces the store
//   atomically, emitting deletions for objects that vanished while disconnected.
// A watch silent for `stall_timeout` (no event, bookmark or byte) is closed and resumed
// the same way. Every informer shows in two metrics, labelled by kind, namespace and
// selector: informer_last_event_age_seconds (how long since the server was last heard
// from) and informer_watch_stalls_total.
// Failures back off 800 ms doubling to 30 s with jitter, reset after 2 min of health.
// Optional streaming list (sendInitialEvents) falls back to list+watch when refused.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "k8s/api_client.hpp"
#include "k8s/object.hpp"
#include "k8s/reflector.hpp"
#include "k8s/store.hpp"

namespace aop::k8s {

struct InformerOptions {
  GroupVersionKind gvk;
  std::string ns;  // "" = all namespaces
  std::string label_selector;
  std::string field_selector;
  Transform transform;  // e.g. metadata_only for Secrets
  std::size_t page_size = 500;
  bool streaming_list = false;  // try sendInitialEvents=true first
  // Resync delivers no events by itself: controllers resync from their own timer.

  // Tuning with client-go's defaults (k8s/reflector.hpp); tests shorten them.
  net::BackoffPolicy backoff;
  std::chrono::seconds min_watch_timeout = kMinWatchTimeout;
  std::chrono::seconds max_watch_timeout = kMaxWatchTimeout;
  // A watch that receives nothing (not even a bookmark) for this long is replaced: a
  // multiple of the API server's bookmark interval (--watch-bookmark-interval times
  // --watch-stall-multiple in the operator).
  std::chrono::milliseconds stall_timeout = kDefaultStallTimeout;
};

// How an informer's connection is doing, readable from any thread.
struct InformerHealth {
  bool synced = false;
  // When the server was last heard from (event, bookmark, opened watch, list page).
  std::chrono::steady_clock::time_point last_event_at{};
  // Since when no watch has been working; empty while one is open.
  std::optional<std::chrono::steady_clock::time_point> disconnected_since;
};

// Handlers run on the informer's strand, one event at a time, in stream order. They
// must not block: typically they look up dependents and enqueue keys.
struct EventHandler {
  std::function<void(const ObjectPtr&)> on_add;
  std::function<void(const ObjectPtr& old_obj, const ObjectPtr& new_obj)> on_update;
  std::function<void(const ObjectPtr&)> on_delete;
};

class Informer {
 public:
  virtual ~Informer() = default;
  virtual const InformerOptions& options() const = 0;
  virtual void add_handler(EventHandler handler) = 0;  // before start()
  virtual Store& store() = 0;
  virtual void add_index(std::string name, IndexFunc fn) = 0;  // before start()
  // Starts list+watch on the informer's strand; returns at once.
  virtual void start() = 0;
  // Stops the watch and any pending retry; handlers are not called after stop() returns
  // control to the strand.
  virtual void stop() = 0;
  // True once the first list has been stored and its events delivered.
  virtual bool has_synced() const = 0;
  virtual InformerHealth health() const = 0;
};

// The client must outlive the informer's coroutine: stop() the informer and let its
// executor run until the coroutine has returned (or stop the io_context) before
// destroying the client. Destroying the informer stops it.
std::unique_ptr<Informer> make_informer(boost::asio::any_io_executor executor, ApiClient& client,
                                        InformerOptions options);

}  // namespace aop::k8s
