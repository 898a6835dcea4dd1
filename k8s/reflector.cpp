#include "k8s/reflector.hpp"

#include <algorithm>

#include <boost/json.hpp>

namespace aop::k8s {
namespace json = boost::json;

namespace {

// Status codes with which a server refuses a streaming list it does not support
// (sendInitialEvents or resourceVersionMatch on a watch): fall back to list+watch.
bool refuses_streaming_list(const ApiError& e) {
  return e.code == 400 || e.code == 405 || e.code == 406 || e.code == 415 || e.code == 422 ||
         e.code == 501;
}

// The ApiError a watch ERROR event carries (its object is a metav1.Status).
ApiError status_error(const json::value& status) {
  ApiError e;
  if (const auto* o = status.if_object()) {
    if (const auto* c = o->if_contains("code"); c != nullptr && c->is_number()) {
      e.code = static_cast<int>(c->to_number<std::int64_t>());
    }
    if (const auto* r = o->if_contains("reason"); r != nullptr && r->is_string()) {
      e.reason = r->get_string();
    }
    if (const auto* m = o->if_contains("message"); m != nullptr && m->is_string()) {
      e.message = m->get_string();
    }
  }
  // A status without a code but with reason Expired/Gone is still a 410.
  if (e.code == 0 && (e.reason == "Expired" || e.reason == "Gone")) e.code = 410;
  if (e.code == 0) e.code = 500;
  return e;
}

}  // namespace

std::string_view phase_name(Reflector::Phase phase) {
  switch (phase) {
    case Reflector::Phase::idle:
      return "idle";
    case Reflector::Phase::listing:
      return "listing";
    case Reflector::Phase::opening_watch:
      return "opening_watch";
    case Reflector::Phase::watching:
      return "watching";
    case Reflector::Phase::backing_off:
      return "backing_off";
    case Reflector::Phase::stopped:
      return "stopped";
  }
  return "unknown";
}

Reflector::Reflector(ReflectorConfig config, Store& store)
    : config_(std::move(config)),
      store_(store),
      streaming_(config_.streaming_list),
      backoff_(config_.backoff, config_.seed),
      rng_(config_.seed ^ 0x9e3779b97f4a7c15ULL) {
  config_.max_watch_timeout = std::max(config_.max_watch_timeout, config_.min_watch_timeout);
}

ObjectPtr Reflector::encode(const json::value& v) const {
  return Object::from_json(v, config_.transform, config_.gvk);
}

Reflector::Step Reflector::start(net::TimePoint now) {
  if (phase_ == Phase::stopped) return {{}, Stopped{}};
  last_event_at_ = now;
  disconnected_since_ = now;
  return relist();
}

Reflector::Step Reflector::relist() {
  pending_.clear();
  if (streaming_) {
    phase_ = Phase::opening_watch;
    initial_ = true;
    return {{}, WatchRequest{"", watch_timeout(), true, config_.stall_timeout}};
  }
  phase_ = Phase::listing;
  initial_ = false;
  return {{}, ListRequest{"", config_.page_size}};
}

Reflector::Step Reflector::rewatch() {
  phase_ = Phase::opening_watch;
  initial_ = false;
  return {{}, WatchRequest{resource_version_, watch_timeout(), false, config_.stall_timeout}};
}

std::chrono::seconds Reflector::watch_timeout() {
  std::uniform_int_distribution<std::chrono::seconds::rep> pick(config_.min_watch_timeout.count(),
                                                                config_.max_watch_timeout.count());
  return std::chrono::seconds(pick(rng_));
}

Reflector::Step Reflector::fail(net::TimePoint now, Resume resume, const ApiError& error) {
  last_error_ = error;
  ++stats_.failures;
  if (!disconnected_since_) disconnected_since_ = now;
  phase_ = Phase::backing_off;
  // Resuming a watch needs a stored list to resume from.
  after_wake_ = synced_ ? resume : Resume::relist;
  if (after_wake_ == Resume::relist) pending_.clear();
  return {{}, Sleep{backoff_.next(now)}};
}

Reflector::Step Reflector::on_wake(net::TimePoint) {
  if (phase_ != Phase::backing_off) return {{}, Stopped{}};
  return after_wake_ == Resume::relist ? relist() : rewatch();
}

Reflector::Step Reflector::stop() {
  phase_ = Phase::stopped;
  pending_.clear();
  return {{}, Stopped{}};
}

Reflector::Step Reflector::store_list(std::string resource_version) {
  Step step{store_.replace(std::move(pending_)), ReadEvent{}};
  pending_.clear();
  ++stats_.lists;
  synced_ = true;
  initial_ = false;
  resource_version_ = std::move(resource_version);
  return step;
}

Reflector::Step Reflector::on_list_page(net::TimePoint now, ApiResult<ListPage> page) {
  if (!page) return on_object_page(now, page.error());
  ObjectListPage objects;
  objects.items.reserve(page->items.size());
  for (auto& item : page->items) {
    if (auto obj = encode(item)) objects.items.push_back(std::move(obj));
  }
  page->items.clear();
  objects.resource_version = std::move(page->resource_version);
  objects.continue_token = std::move(page->continue_token);
  return on_object_page(now, std::move(objects));
}

Reflector::Step Reflector::on_object_page(net::TimePoint now, ApiResult<ObjectListPage> page) {
  if (phase_ != Phase::listing) return {{}, Stopped{}};
  if (page) last_event_at_ = now;
  if (!page) {
    const ApiError& e = page.error();
    // An expired continue token: the snapshot is gone; list again from the start at
    // once (this is progress, not a failure of the server).
    if (e.gone() && !continue_token_.empty()) {
      last_error_ = e;
      continue_token_.clear();
      return relist();
    }
    continue_token_.clear();
    return fail(now, Resume::relist, e);
  }
  if (pending_.empty()) {
    pending_ = std::move(page->items);
  } else {
    pending_.insert(pending_.end(), std::make_move_iterator(page->items.begin()),
                    std::make_move_iterator(page->items.end()));
  }
  std::erase(pending_, nullptr);
  if (!page->continue_token.empty()) {
    continue_token_ = page->continue_token;
    return {{}, ListRequest{continue_token_, config_.page_size}};
  }
  continue_token_.clear();
  Step step = store_list(std::move(page->resource_version));
  step.next = rewatch().next;
  return step;
}

Reflector::Step Reflector::on_watch_opened(net::TimePoint now, const ApiResult<void>& opened) {
  if (phase_ != Phase::opening_watch) return {{}, Stopped{}};
  if (!opened) {
    const ApiError& e = opened.error();
    if (initial_ && refuses_streaming_list(e)) {
      // The server does not support streaming lists: list+watch from now on.
      last_error_ = e;
      streaming_ = false;
      return relist();
    }
    if (e.gone()) {
      ++stats_.relists_gone;
      return fail(now, Resume::relist, e);
    }
    return fail(now, initial_ ? Resume::relist : Resume::rewatch, e);
  }
  phase_ = Phase::watching;
  watch_opened_at_ = now;
  last_event_at_ = now;
  disconnected_since_.reset();
  watch_events_ = 0;
  ++stats_.watches;
  return {{}, ReadEvent{}};
}

Reflector::Step Reflector::on_event(net::TimePoint now, ApiResult<WatchEvent> event) {
  if (!event) return on_object_event(now, event.error());
  ObjectWatchEvent ev;
  ev.type = event->type;
  if (ev.type == WatchEvent::Type::error) {
    ev.status = std::move(event->object);
  } else {
    ev.object = encode(event->object);
  }
  return on_object_event(now, std::move(ev));
}

Reflector::Step Reflector::on_object_event(net::TimePoint now, ApiResult<ObjectWatchEvent> event) {
  if (phase_ != Phase::watching) return {{}, Stopped{}};
  if (!event) {
    const ApiError& e = event.error();
    if (e.end_of_stream() && !initial_) {
      const bool healthy = watch_events_ > 0 || now - watch_opened_at_ >= kMinHealthyWatch;
      if (healthy) {
        disconnected_since_ = now;
        return rewatch();
      }
    }
    if (e.stalled()) {
      // Dead since it last delivered anything, not since the timeout noticed it.
      ++stats_.stalls;
      disconnected_since_ = last_event_at_;
    }
    return fail(now, initial_ ? Resume::relist : Resume::rewatch, e);
  }
  last_event_at_ = now;
  return apply_event(now, *event);
}

Reflector::Step Reflector::apply_event(net::TimePoint now, ObjectWatchEvent& event) {
  switch (event.type) {
    case WatchEvent::Type::bookmark: {
      const ObjectPtr& bookmark = event.object;
      std::string rv(bookmark != nullptr ? bookmark->resource_version() : std::string_view{});
      if (initial_) {
        if (bookmark != nullptr && bookmark->annotation(kInitialEventsEnd) == "true") {
          return store_list(std::move(rv));
        }
        return {{}, ReadEvent{}};
      }
      if (!rv.empty()) resource_version_ = std::move(rv);
      return {{}, ReadEvent{}};
    }
    case WatchEvent::Type::error: {
      const ApiError e = status_error(event.status);
      if (e.gone()) ++stats_.relists_gone;
      return fail(now, e.gone() || initial_ ? Resume::relist : Resume::rewatch, e);
    }
    case WatchEvent::Type::added:
    case WatchEvent::Type::modified:
    case WatchEvent::Type::deleted:
      break;
  }
  ObjectPtr obj = std::move(event.object);
  if (!obj) return {{}, ReadEvent{}};  // not an object: nothing to apply
  ++watch_events_;
  if (initial_) {
    // Initial events of a streaming list build the list; only ADDED is expected, but
    // a later state of the same key replaces an earlier one.
    const ObjectKey key = obj->key();
    if (event.type == WatchEvent::Type::deleted) {
      std::erase_if(pending_, [&](const ObjectPtr& p) { return p->key() == key; });
    } else {
      pending_.push_back(std::move(obj));
    }
    return {{}, ReadEvent{}};
  }
  ++stats_.events;
  if (!obj->resource_version().empty()) resource_version_ = std::string(obj->resource_version());
  Step step{{}, ReadEvent{}};
  if (event.type == WatchEvent::Type::deleted) {
    if (store_.remove(obj->key())) {
      // Handlers get the object's final state, as the DELETED event carries it.
      step.changes.push_back({StoreChange::Type::deleted, std::move(obj), nullptr});
    }
  } else if (auto change = store_.upsert(std::move(obj))) {
    step.changes.push_back(std::move(*change));
  }
  return step;
}

}  // namespace aop::k8s
