// The object store: one collection per resource (shared by its versions), one global
// resourceVersion counter, a bounded per-collection event history (the API server's
// watch cache), and the open watches.
//
// Scale decisions:
//  - Every object version is kept only as its serialized JSON plus the few fields needed
//    to index and select it (key, labels, uid): a LIST concatenates stored strings, and
//    a watch event is serialized once and shared by every watcher.
//  - Versions are immutable and reference-counted, so a LIST or a watch backlog keeps
//    the versions it is sending alive without copying them.
//  - Lists at an older resourceVersion (continue tokens, resourceVersionMatch=Exact) are
//    answered from the current contents plus the event history ("undoing" the events
//    after that version), which gives the consistent snapshot of etcd's MVCC with the
//    same failure mode: 410 Expired once the history no longer reaches back that far.
//
// Owned by the API server's single thread; nothing here locks.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

#include <boost/json/object.hpp>

#include "k8s/label_selector.hpp"
#include "tools/kube-sim/api_error.hpp"
#include "tools/kube-sim/faults.hpp"
#include "tools/kube-sim/field_selector.hpp"
#include "tools/kube-sim/resources.hpp"

namespace aop::sim {

// One version of one object.
class StoredObject {
 public:
  // Serializes `obj` as {"kind","apiVersion","metadata",...rest}. `obj` must carry
  // kind, apiVersion and metadata.name (and metadata.namespace when namespaced).
  static std::shared_ptr<const StoredObject> make(const boost::json::object& obj, std::uint64_t rv);

  std::string_view json() const { return json_; }
  std::string_view key() const { return key_; }
  std::string_view ns() const { return std::string_view(key_).substr(0, ns_len_); }
  std::string_view name() const {
    return ns_len_ == 0 ? std::string_view(key_) : std::string_view(key_).substr(ns_len_ + 1);
  }
  std::string_view uid() const { return {uid_.data(), uid_len_}; }
  std::uint64_t rv() const { return rv_; }
  std::string_view metadata_json() const {
    return std::string_view(json_).substr(meta_begin_, meta_end_ - meta_begin_);
  }
  // The serialized object with another apiVersion (for a CRD version other than the one
  // it was written through).
  std::string with_api_version(std::string_view api_version) const;
  std::string_view api_version() const;
  bool terminating() const { return terminating_; }
  bool has_owner_refs() const { return has_owner_refs_; }

  std::optional<std::string_view> label(std::string_view key) const;

  // Parses the stored JSON (writes and selectors on non-metadata fields only).
  boost::json::object parse() const;

  // The key an object has in its collection: "ns/name" or "name".
  static std::string make_key(std::string_view ns, std::string_view name);

  // Approximate heap bytes used by this version (for the benchmark's accounting).
  std::size_t footprint() const;

 private:
  friend class Collection;  // sets the key of its lookup probe
  std::string json_;
  std::string key_;
  std::string labels_;  // "k\0v\0k\0v\0", sorted by key
  std::uint64_t rv_ = 0;
  std::uint32_t meta_begin_ = 0;
  std::uint32_t meta_end_ = 0;
  std::uint32_t av_begin_ = 0;  // offset of the apiVersion value
  std::uint32_t av_end_ = 0;
  std::uint16_t ns_len_ = 0;
  std::uint8_t uid_len_ = 0;
  bool terminating_ = false;
  bool has_owner_refs_ = false;
  std::array<char, 40> uid_{};
};

using ObjectPtr = std::shared_ptr<const StoredObject>;

// Adapter for k8s::LabelSelector.
class StoredLabels final : public k8s::LabelView {
 public:
  explicit StoredLabels(const StoredObject& o) : o_(o) {}
  std::optional<std::string_view> get(std::string_view key) const override { return o_.label(key); }

 private:
  const StoredObject& o_;
};

// The value of a field-selector field of an object ("" when absent; booleans as
// "true"/"false").
std::string field_value(const StoredObject& o, std::string_view field);

enum class EventType { added, modified, deleted };
std::string_view event_type_name(EventType t);

struct WatchEvent {
  EventType type = EventType::added;
  ObjectPtr object;  // the new state (for deleted: the last state, at the deletion's rv)
  ObjectPtr prev;    // the state before (null for added)

  std::uint64_t rv() const { return object->rv(); }
  // `{"type":...,"object":...}\n`, built once and shared by every watcher.
  std::shared_ptr<const std::string> line() const;
  // The same event with a PartialObjectMetadata object.
  std::shared_ptr<const std::string> metadata_line() const;

 private:
  mutable std::shared_ptr<const std::string> line_;
  mutable std::shared_ptr<const std::string> metadata_line_;
};
using EventPtr = std::shared_ptr<const WatchEvent>;

// Renders `{"type":<type>,"object":<object as the watcher wants it>}\n`.
std::string render_event_line(std::string_view type, const StoredObject& o, bool metadata_only,
                              std::string_view api_version);
std::string render_partial_metadata(const StoredObject& o);

// A piece of response body: bytes kept alive by `owner`.
struct Piece {
  std::shared_ptr<const void> owner;
  std::string_view data;
};
Piece piece(std::string s);
Piece piece(std::shared_ptr<const std::string> s);
Piece piece_static(std::string_view s);
std::string flatten(const std::vector<Piece>& pieces);

struct WatchOptions {
  std::string ns;  // empty: every namespace
  k8s::LabelSelector labels;
  FieldSelector fields;
  bool metadata_only = false;
  bool bookmarks = false;
  std::string api_version;  // as requested (may differ from the stored one)
  std::string kind;
  bool builtin = true;  // bookmarks of built-in kinds carry "creationTimestamp":null
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::duration bookmark_interval = std::chrono::seconds(60);
  std::size_t max_pending_bytes = 256u << 20;  // a client this far behind is cut off
  // Renders the object of each event another way (server-side printing to a Table).
  std::function<std::string(const StoredObject&)> transform;
};

// One open watch: filters events, applies per-stream faults and buffers the output
// until the connection writes it.
class Watcher {
 public:
  Watcher(WatchOptions options, std::shared_ptr<Faults> faults,
          std::chrono::steady_clock::time_point now);

  const WatchOptions& options() const { return options_; }
  bool matches(const StoredObject& o) const;

  // Store side.
  void deliver(const WatchEvent& e);
  void send_initial(const ObjectPtr& o);  // ADDED for the initial state (already filtered)
  void send_bookmark(std::uint64_t rv, bool initial_events_end);
  void send_error(const ApiError& e);  // an ERROR event, then the stream ends
  void close();                        // the stream ends after what is buffered
  // Periodic bookmark and timeoutSeconds.
  void tick(std::chrono::steady_clock::time_point now, std::uint64_t rv);

  // Connection side.
  std::vector<Piece> take();
  bool closed() const { return closed_; }
  bool stalled() const { return stalled_; }
  bool has_pending() const { return !pending_.empty(); }
  std::size_t pending_bytes() const { return pending_bytes_; }
  std::uint64_t events_sent() const { return events_; }
  // Called (from the store's thread) when output or the end becomes available; once per
  // take(), however many events arrive in between.
  void set_wakeup(std::function<void()> f) { wakeup_ = std::move(f); }

 private:
  void push(Piece p, bool is_event);
  void wake();
  std::string render(std::string_view type, const StoredObject& o) const;

  WatchOptions options_;
  std::shared_ptr<Faults> faults_;
  std::deque<Piece> pending_;
  std::size_t pending_bytes_ = 0;
  std::uint64_t events_ = 0;
  bool closed_ = false;
  bool stalled_ = false;
  bool woken_ = false;  // a wake-up is outstanding until the next take()
  std::chrono::steady_clock::time_point next_bookmark_;
  std::function<void()> wakeup_;
};
using WatcherPtr = std::shared_ptr<Watcher>;

struct KeyLess {
  bool operator()(const ObjectPtr& a, const ObjectPtr& b) const { return a->key() < b->key(); }
};
// Ordered by key (namespace/name, like etcd keys), with ranks for remainingItemCount.
using ObjectSet =
    __gnu_pbds::tree<ObjectPtr, __gnu_pbds::null_type, KeyLess, __gnu_pbds::rb_tree_tag,
                     __gnu_pbds::tree_order_statistics_node_update>;

class Collection {
 public:
  Collection(TypePtr type, std::uint64_t created_rv, std::size_t history_limit);

  const TypePtr& type() const { return type_; }
  void set_type(TypePtr t) { type_ = std::move(t); }
  std::size_t size() const { return objects_.size(); }
  ObjectPtr get(std::string_view key) const;

  // Visits the objects as of resourceVersion `at_rv` (0: now) whose key starts with
  // `prefix` and sorts after `after` (exclusive; "" from the start), in key order, until
  // `visit` returns false. 410 Expired when the history no longer reaches `at_rv`.
  ApiResult<void> scan(std::string_view prefix, std::string_view after, std::uint64_t at_rv,
                       std::uint64_t current_rv,
                       const std::function<bool(const ObjectPtr&)>& visit) const;
  // Number of objects as of `at_rv` with `prefix` sorting after `after`.
  ApiResult<std::size_t> count_after(std::string_view prefix, std::string_view after,
                                     std::uint64_t at_rv, std::uint64_t current_rv) const;

  // Events with rv > `rv` (410 Expired when older than the history).
  ApiResult<std::vector<EventPtr>> events_since(std::uint64_t rv) const;
  std::uint64_t history_floor() const { return history_floor_; }
  std::size_t history_size() const { return history_.size(); }

  const std::vector<WatcherPtr>& watchers() const { return watchers_; }
  void add_watcher(WatcherPtr w) { watchers_.push_back(std::move(w)); }
  void remove_watcher(const Watcher* w);
  void close_watchers();

  // Object-set access for the store and the benchmark.
  const ObjectSet& objects() const { return objects_; }

 private:
  friend class Store;
  ObjectSet::const_iterator lower(std::string_view key) const;
  // Versions as of `at_rv` for keys changed after it (nullptr: absent at at_rv).
  ApiResult<std::map<std::string_view, ObjectPtr>> overrides(std::uint64_t at_rv,
                                                             std::uint64_t current_rv) const;
  void record(EventPtr e);

  TypePtr type_;
  ObjectSet objects_;
  std::deque<EventPtr> history_;
  std::size_t history_limit_;
  std::uint64_t history_floor_;  // every event with rv > floor is in history_
  std::vector<WatcherPtr> watchers_;
  mutable std::shared_ptr<StoredObject> probe_;
};

class Store {
 public:
  explicit Store(std::size_t history_limit) : history_limit_(history_limit) {}

  std::uint64_t rv() const { return rv_; }
  std::size_t history_limit() const { return history_limit_; }

  Collection* find(std::string_view storage_key);
  const Collection* find(std::string_view storage_key) const;
  Collection& ensure(const TypePtr& storage_type);
  // Removes a collection (a deleted CRD); its watches end.
  void drop(std::string_view storage_key);

  // Writes. `obj` is complete except metadata.resourceVersion, which these set.
  ObjectPtr create(Collection& c, boost::json::object obj);
  ObjectPtr update(Collection& c, const ObjectPtr& old, boost::json::object obj);
  // Removes `old`; `last` is the object's final state (its rv is set here).
  ObjectPtr remove(Collection& c, const ObjectPtr& old, boost::json::object last);

  std::size_t object_count() const;
  std::size_t watch_count() const;
  const std::map<std::string, std::unique_ptr<Collection>, std::less<>>& collections() const {
    return collections_;
  }

 private:
  void publish(Collection& c, const EventPtr& e);

  std::uint64_t rv_ = 0;
  std::size_t history_limit_;
  std::map<std::string, std::unique_ptr<Collection>, std::less<>> collections_;
};

}  // namespace aop::sim
