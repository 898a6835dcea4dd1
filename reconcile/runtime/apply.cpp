#include "reconcile/runtime/apply.hpp"
#include "reconcile/runtime/json_fields.hpp"

#include <algorithm>
#include <atomic>
#include <set>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "net/log.hpp"

namespace aop::runtime {

namespace json = boost::json;

namespace {

using detail::ensure_object;
using detail::string_at;

// "<Kind> <namespace/name>" for messages.
std::string describe(const GroupKind& gk, const k8s::ObjectKey& key) {
  return gk.kind + " " + key.str();
}

std::string record_key(const GroupKind& gk, const k8s::ObjectKey& key) {
  return gk.group + "\n" + gk.kind + "\n" + key.ns + "\n" + key.name;
}

}  // namespace

// ---------------------------------------------------------------------------------------

struct ApplyEngine::Impl {
  Impl(k8s::ApiClient& c, const ObjectCache& ca, ApplyOptions o, const net::Clock& cl)
      : client(c),
        cache(ca),
        options(std::move(o)),
        clock(cl),
        registry(options.registry ? *options.registry : net::metrics::registry()),
        applied(registry.counter("agent_operator_apply_total",
                                 "Objects handled by the apply engine, by action "
                                 "(create, update, delete, recreate, unchanged).",
                                 {"controller", "kind", "action"})),
        errors(registry.counter("agent_operator_apply_errors_total",
                                "Objects the apply engine failed to write.",
                                {"controller", "kind"})),
        conflicts(registry.counter("agent_operator_apply_conflicts_total",
                                   "Writes that hit a conflict and were retried from fresh "
                                   "state.",
                                   {"controller", "kind"})),
        recreates(registry.counter("agent_operator_apply_recreates_total",
                                   "Objects deleted and created again because an update "
                                   "was rejected for immutable fields.",
                                   {"controller", "kind"})),
        echoes(registry.counter("agent_operator_apply_echoes_total",
                                "Watch events of owned objects that only reflected the "
                                "controller's own writes (no reconcile).",
                                {"controller", "kind"})) {}

  bool may_write() const { return !options.may_write || options.may_write(); }

  // What the engine's own last write of an object produced.
  struct Record {
    std::string uid;
    std::string hash;
    std::string resource_version;
    std::int64_t generation = 0;
    // The resourceVersions the engine's own recent writes of `uid` produced, newest
    // last: their watch events are echoes (see unless_own_write).
    std::vector<std::string> written;
    bool deleted = false;  // the engine deleted `uid` (hash and versions are empty)
  };
  // Own writes remembered per object: the caches catch up before the next write of a
  // root (caches_caught_up), so an echo is normally at most one write behind.
  static constexpr std::size_t kRecentWrites = 4;

  void remember(const std::string& rkey, const json::value& written, const std::string& hash) {
    const auto* obj = written.if_object();
    if (!obj) return;
    const auto* md_v = obj->if_contains("metadata");
    if (!md_v || !md_v->is_object()) return;
    const auto& md = md_v->get_object();
    Record r;
    r.uid = string_at(md, "uid");
    r.hash = hash;
    r.resource_version = string_at(md, "resourceVersion");
    if (const auto* g = md.if_contains("generation"); g && g->is_number()) {
      r.generation = g->to_number<std::int64_t>();
    }
    const std::lock_guard lock(records_mutex);
    Record& slot = records[rkey];
    if (slot.uid == r.uid && !slot.deleted) r.written = std::move(slot.written);
    r.written.push_back(r.resource_version);
    if (r.written.size() > kRecentWrites) r.written.erase(r.written.begin());
    slot = std::move(r);
  }

  void remember(const std::string& rkey, const k8s::Object& live, const std::string& hash) {
    Record r{std::string(live.uid()), hash, std::string(live.resource_version()),
             live.generation(),       {},   false};
    const std::lock_guard lock(records_mutex);
    Record& slot = records[rkey];
    if (slot.uid == r.uid && !slot.deleted) r.written = std::move(slot.written);
    slot = std::move(r);
  }

  std::optional<Record> recall(const std::string& rkey) const {
    const std::lock_guard lock(records_mutex);
    const auto it = records.find(rkey);
    if (it == records.end() || it->second.deleted) return std::nullopt;
    return it->second;
  }

  void forget(const std::string& rkey) {
    const std::lock_guard lock(records_mutex);
    records.erase(rkey);
  }

  // The engine deleted object `uid`: its deletion event is an echo.
  void remember_deleted(const std::string& rkey, std::string_view uid) {
    Record r;
    r.uid = std::string(uid);
    r.deleted = true;
    const std::lock_guard lock(records_mutex);
    records[rkey] = std::move(r);
  }

  // ---- echoes ---------------------------------------------------------------------------

  // An owned-object event whose verdict waits for a write in flight.
  struct PendingEvent {
    OwnedEvent what = OwnedEvent::updated;
    std::string uid;
    std::string resource_version;
    std::function<void()> act;
  };

  // Under records_mutex.
  bool echo_locked(const std::string& rkey, OwnedEvent what, std::string_view uid,
                   std::string_view rv) const {
    const auto it = records.find(rkey);
    if (it == records.end() || it->second.uid != uid) return false;
    const Record& r = it->second;
    if (what == OwnedEvent::deleted) return r.deleted;
    return !r.deleted && std::find(r.written.begin(), r.written.end(), rv) != r.written.end();
  }

  void count_echo(const GroupKind& gk) {
    ++echo_count;
    echoes.with({options.controller, gk.kind}).inc();
  }

  void unless_own_write(const GroupKind& gk, const k8s::Object& obj, OwnedEvent what,
                        std::function<void()> act) {
    const std::string rkey = record_key(gk, obj.key());
    {
      const std::lock_guard lock(records_mutex);
      if (echo_locked(rkey, what, obj.uid(), obj.resource_version())) {
        if (what == OwnedEvent::deleted) records.erase(rkey);
        count_echo(gk);
        return;
      }
      if (in_flight.contains(rkey)) {
        pending[rkey].push_back(PendingEvent{what, std::string(obj.uid()),
                                             std::string(obj.resource_version()), std::move(act)});
        return;
      }
    }
    act();
  }

  void begin_write(const std::string& rkey) {
    const std::lock_guard lock(records_mutex);
    ++in_flight[rkey];
  }

  // The write's outcome is recorded (or it failed): decide the events that waited for it.
  void end_write(const GroupKind& gk, const std::string& rkey) {
    std::vector<std::function<void()>> foreign;
    {
      const std::lock_guard lock(records_mutex);
      const auto it = in_flight.find(rkey);
      if (it == in_flight.end()) return;
      if (--it->second > 0) return;
      in_flight.erase(it);
      auto node = pending.extract(rkey);
      if (node.empty()) return;
      for (auto& p : node.mapped()) {
        if (echo_locked(rkey, p.what, p.uid, p.resource_version)) {
          count_echo(gk);
        } else {
          foreign.push_back(std::move(p.act));
        }
      }
    }
    for (auto& f : foreign) f();
  }

  // Marks one write of an object in flight for as long as it lives (a coroutine local
  // spanning the request and the recording of its answer).
  class WriteInFlight {
   public:
    WriteInFlight(Impl& impl, GroupKind gk, std::string rkey)
        : impl_(impl), gk_(std::move(gk)), rkey_(std::move(rkey)) {
      impl_.begin_write(rkey_);
    }
    ~WriteInFlight() { impl_.end_write(gk_, rkey_); }
    WriteInFlight(const WriteInFlight&) = delete;
    WriteInFlight& operator=(const WriteInFlight&) = delete;

   private:
    Impl& impl_;
    GroupKind gk_;
    std::string rkey_;
  };

  // Fresh state from the API server (after a conflict). nullptr: not found.
  boost::asio::awaitable<k8s::ApiResult<k8s::ObjectPtr>> fetch(const k8s::GroupVersionKind& gvk,
                                                               const k8s::ObjectKey& key) {
    auto r = co_await client.get(gvk, key);
    if (!r) {
      if (r.error().not_found()) co_return k8s::ObjectPtr{};
      co_return r.error();
    }
    co_return k8s::Object::from_json(r.value(), k8s::Transform{}, gvk);
  }

  void count(const GroupKind& gk, const char* action) {
    applied.with({options.controller, gk.kind, action}).inc();
  }

  // `server_failure`: the API server failed the request (ApplyReport::server_failure).
  void fail(ApplyReport& report, const GroupKind& gk, const k8s::ObjectKey& key,
            const std::string& root, std::string what, bool server_failure = false) {
    errors.with({options.controller, gk.kind}).inc();
    report.server_failure = report.server_failure || server_failure;
    std::string msg = describe(gk, key) + ": " + what;
    net::log::warn("apply failed", {{"controller", options.controller},
                                    {"root", root},
                                    {"object", describe(gk, key)},
                                    {"error", what}});
    report.errors.push_back(msg);
    outcome(report, gk, key, ObjectResult::failed, {}, std::move(msg));
  }

  // `live` is someone else's: reported, never written.
  void not_owned(ApplyReport& report, const GroupKind& gk, const k8s::ObjectKey& key,
                 const std::string& root, const k8s::Object& live, const std::string& owner_uid) {
    errors.with({options.controller, gk.kind}).inc();
    const std::string why = whose(live, owner_uid, options);
    std::string msg = describe(gk, key) + ": exists and is not this root's (" + why +
                      "); left unchanged: delete or rename it, or rename the root";
    net::log::warn("object not owned by the root; not taking it over",
                   {{"controller", options.controller},
                    {"root", root},
                    {"object", describe(gk, key)},
                    {"owner", why}});
    report.errors.push_back(msg);
    outcome(report, gk, key, ObjectResult::not_owned, {}, std::move(msg));
  }

  static void outcome(ApplyReport& report, const GroupKind& gk, const k8s::ObjectKey& key,
                      ObjectResult result, json::value written = {}, std::string error = {}) {
    report.objects.push_back(ObjectOutcome{gk, key, result, std::move(written), std::move(error)});
  }

  // One create or update, recorded as the engine's own write when it succeeds.
  boost::asio::awaitable<k8s::ApiResult<json::value>> write(GroupKind gk, std::string rkey,
                                                            bool create, json::object body,
                                                            std::string hash) {
    const WriteInFlight flight(*this, gk, rkey);
    k8s::ApiResult<json::value> r;
    if (create) {
      r = co_await client.create(json::value(std::move(body)));
    } else {
      r = co_await client.update(json::value(std::move(body)));
    }
    if (r) remember(rkey, r.value(), hash);
    co_return r;
  }

  // One delete with a UID precondition, recorded as the engine's own when it succeeds.
  boost::asio::awaitable<k8s::ApiResult<void>> delete_object(k8s::GroupVersionKind gvk,
                                                             k8s::ObjectKey key,
                                                             k8s::DeleteOptions opts) {
    const GroupKind gk = GroupKind::of(gvk);
    const std::string rkey = record_key(gk, key);
    const std::string uid = opts.precondition_uid.value_or(std::string());
    const WriteInFlight flight(*this, gk, rkey);
    auto r = co_await client.remove(gvk, key, opts);
    if (r && !uid.empty()) {
      remember_deleted(rkey, uid);
    } else {
      forget(rkey);
    }
    co_return r;
  }

  // Deletes `live` and waits until it is gone. Returns an error message or "".
  boost::asio::awaitable<std::string> delete_and_wait(const k8s::GroupVersionKind& gvk,
                                                      const k8s::ObjectKey& key,
                                                      const std::string& uid,
                                                      k8s::DeleteOptions opts) {
    opts.precondition_uid = uid;
    auto r = co_await delete_object(gvk, key, opts);
    if (!r && !r.error().not_found() && !r.error().conflict()) {
      co_return "delete before recreate: " + r.error().describe();
    }
    // The poll timer paces the GETs; the deadline is measured on the injected clock.
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    const auto deadline = clock.now() + options.recreate_timeout;
    for (;;) {
      auto g = co_await client.get(gvk, key);
      if (!g && g.error().not_found()) co_return std::string();
      if (g) {
        const auto* md =
            g.value().is_object() ? g.value().get_object().if_contains("metadata") : nullptr;
        if (md && md->is_object() && string_at(md->get_object(), "uid") != uid) {
          co_return std::string();  // already replaced by someone else
        }
      }
      if (clock.now() >= deadline) {
        co_return "still present " +
            std::to_string(
                std::chrono::duration_cast<std::chrono::seconds>(options.recreate_timeout)
                    .count()) +
            " s after it was deleted for recreation (finalizers?)";
      }
      timer.expires_after(options.recreate_poll);
      boost::system::error_code ec;
      co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    }
  }

  // Applies one desired object. Returns false when it failed (or writes are blocked).
  boost::asio::awaitable<bool> apply_one(const json::object& desired, const std::string& hash,
                                         const std::string& root, const std::string& owner_uid,
                                         ApplyReport& report) {
    const auto gvk = gvk_of(desired);
    const json::object* md = nullptr;
    if (const auto* v = desired.if_contains("metadata")) md = v->if_object();
    k8s::ObjectKey key;
    if (md) key = {string_at(*md, "namespace"), string_at(*md, "name")};
    if (!gvk || key.name.empty()) {
      std::string error = "desired object of root " + root +
                          " lacks apiVersion, kind or metadata.name (a controller bug)";
      report.errors.push_back(error);
      outcome(report, gvk ? GroupKind::of(*gvk) : GroupKind{}, key, ObjectResult::failed, {},
              std::move(error));
      co_return false;
    }
    const GroupKind gk = GroupKind::of(*gvk);
    const std::string rkey = record_key(gk, key);

    // Owned kinds are read from their cache; a kind without one costs a GET.
    k8s::ObjectPtr live;
    if (cache.has(gk)) {
      live = cache.get(gk, key);
    } else {
      auto fetched = co_await fetch(*gvk, key);
      if (!fetched) {
        fail(report, gk, key, root, "read: " + fetched.error().describe(),
             fetched.error().server_failure());
        co_return false;
      }
      live = fetched.value();
    }
    bool recreating = false;
    for (int attempt = 0;; ++attempt) {
      if (attempt > options.conflict_retries + 1) {
        fail(report, gk, key, root,
             "conflicting writes persisted after " + std::to_string(options.conflict_retries) +
                 " retries; will retry later",
             true);
        co_return false;
      }
      if (!live) {
        if (!may_write()) {
          report.write_blocked = true;
          co_return false;
        }
        json::object body = desired;
        ensure_object(ensure_object(body, "metadata"), "annotations")[options.hash_annotation] =
            hash;
        k8s::ApiResult<json::value> r = co_await write(gk, rkey, true, std::move(body), hash);
        if (r) {
          outcome(report, gk, key, recreating ? ObjectResult::recreated : ObjectResult::created,
                  std::move(r.value()));
          if (recreating) {
            ++report.recreated;
            count(gk, "recreate");
            recreates.with({options.controller, gk.kind}).inc();
          } else {
            ++report.created;
            count(gk, "create");
          }
          net::log::info(
              recreating ? "recreated" : "created",
              {{"controller", options.controller}, {"root", root}, {"object", describe(gk, key)}});
          co_return true;
        }
        if (r.error().conflict()) {  // AlreadyExists: our cache is behind
          ++report.conflicts;
          conflicts.with({options.controller, gk.kind}).inc();
          auto fresh = co_await fetch(*gvk, key);
          if (!fresh) {
            fail(report, gk, key, root, "read after AlreadyExists: " + fresh.error().describe(),
                 fresh.error().server_failure());
            co_return false;
          }
          live = fresh.value();
          continue;
        }
        fail(report, gk, key, root, "create: " + r.error().describe(), r.error().server_failure());
        co_return false;
      }

      if (live->being_deleted()) {
        // Wait for it to go (an owner's deletion or someone's kubectl delete), then create.
        report.waiting = true;
        outcome(report, gk, key, ObjectResult::waiting);
        co_return true;
      }

      // Never take over someone else's object (apply.hpp, Ownership).
      switch (ownership(*live, owner_uid, &desired, options)) {
        case Ownership::owned:
          break;
        case Ownership::stale_owner:
          net::log::info(
              "waiting for the garbage collector: the object belongs to an earlier "
              "root of the same name",
              {{"controller", options.controller}, {"root", root}, {"object", describe(gk, key)}});
          report.waiting = true;
          outcome(report, gk, key, ObjectResult::waiting);
          co_return true;
        case Ownership::not_owned:
          not_owned(report, gk, key, root, *live, owner_uid);
          co_return false;
      }

      bool drift_repair = false;
      if (live->annotation(options.hash_annotation) == std::optional<std::string_view>(hash)) {
        const auto rec = recall(rkey);
        if (!rec || rec->hash != hash) {
          remember(rkey, *live, hash);  // first sight: the live object is the baseline
          ++report.unchanged;
          count(gk, "unchanged");
          outcome(report, gk, key, ObjectResult::unchanged);
          co_return true;
        }
        const bool same =
            rec->uid == live->uid() &&
            (live->generation() > 0 ? rec->generation == live->generation()
                                    : rec->resource_version == live->resource_version());
        if (same) {
          ++report.unchanged;
          count(gk, "unchanged");
          outcome(report, gk, key, ObjectResult::unchanged);
          co_return true;
        }
        drift_repair = true;  // someone else wrote it since: check what they changed
      }

      const json::value live_json = live->to_json();
      static const json::object kEmpty;
      const json::object& live_obj = live_json.is_object() ? live_json.get_object() : kEmpty;
      json::object body = update_body(desired, live_obj, options, hash, drift_repair);
      if (drift_repair && update_is_noop(body, live_obj)) {
        remember(rkey, *live, hash);
        ++report.unchanged;
        count(gk, "unchanged");
        outcome(report, gk, key, ObjectResult::unchanged);
        co_return true;
      }
      if (!may_write()) {
        report.write_blocked = true;
        co_return false;
      }
      k8s::ApiResult<json::value> r = co_await write(gk, rkey, false, std::move(body), hash);
      if (r) {
        outcome(report, gk, key, ObjectResult::updated, std::move(r.value()));
        ++report.updated;
        count(gk, "update");
        net::log::info("updated", {{"controller", options.controller},
                                   {"root", root},
                                   {"object", describe(gk, key)},
                                   {"drift", drift_repair}});
        co_return true;
      }
      const k8s::ApiError& e = r.error();
      if (e.conflict()) {
        ++report.conflicts;
        conflicts.with({options.controller, gk.kind}).inc();
        auto fresh = co_await fetch(*gvk, key);
        if (!fresh) {
          fail(report, gk, key, root, "read after Conflict: " + fresh.error().describe(),
               fresh.error().server_failure());
          co_return false;
        }
        live = fresh.value();
        continue;
      }
      if (e.not_found()) {  // deleted meanwhile: create it
        live = nullptr;
        continue;
      }
      const auto recreate = options.recreate_on_invalid.find(gk);
      if ((e.invalid() || e.code == 406) && recreate != options.recreate_on_invalid.end() &&
          !recreating) {
        net::log::info("update rejected; deleting to recreate", {{"controller", options.controller},
                                                                 {"root", root},
                                                                 {"object", describe(gk, key)},
                                                                 {"reason", e.describe()}});
        if (!may_write()) {
          report.write_blocked = true;
          co_return false;
        }
        std::string err =
            co_await delete_and_wait(*gvk, key, std::string(live->uid()), recreate->second);
        if (!err.empty()) {
          fail(report, gk, key, root, err);
          co_return false;
        }
        recreating = true;
        live = nullptr;
        continue;
      }
      fail(report, gk, key, root, "update: " + e.describe(), e.server_failure());
      co_return false;
    }
  }

  // Deletes `key` if it exists, carries the managed-by label and is the root's (someone
  // else's object of that name is left alone: it is not in the root's way). Returns false
  // when the delete failed (or writes are blocked).
  boost::asio::awaitable<bool> delete_if_managed(
      const k8s::GroupVersionKind& gvk, const k8s::ObjectKey& key, const std::string& root,
      const std::string& owner_uid, ApplyReport& report,
      std::vector<std::pair<GroupKind, k8s::ObjectKey>>& deleted) {
    const GroupKind gk = GroupKind::of(gvk);
    const k8s::ObjectPtr live = cache.get(gk, key);
    if (!live ||
        live->label(options.managed_by_label) !=
            std::optional<std::string_view>(options.managed_by_value) ||
        ownership(*live, owner_uid, nullptr, options) != Ownership::owned) {
      outcome(report, gk, key, ObjectResult::absent);
      co_return true;
    }
    if (!may_write()) {
      report.write_blocked = true;
      co_return false;
    }
    k8s::DeleteOptions opts;
    opts.precondition_uid = std::string(live->uid());
    auto r = co_await delete_object(gvk, key, opts);
    if (!r && !r.error().not_found()) {
      fail(report, gk, key, root, "delete: " + r.error().describe(), r.error().server_failure());
      co_return false;
    }
    if (r) {
      ++report.deleted;
      deleted.emplace_back(gk, key);
      count(gk, "delete");
      net::log::info(
          "deleted (no longer desired)",
          {{"controller", options.controller}, {"root", root}, {"object", describe(gk, key)}});
    }
    outcome(report, gk, key, r ? ObjectResult::deleted : ObjectResult::absent);
    co_return true;
  }

  // The checks of a prune scope beyond kind, namespace and managed-by label.
  static bool in_scope(const PruneScope& scope, const k8s::Object& obj) {
    for (const auto& [k, v] : scope.match_labels) {
      if (obj.label(k) != std::optional<std::string_view>(v)) return false;
    }
    if (scope.controller_only) {
      const auto refs = obj.owner_references();
      const bool controlled = std::any_of(refs.begin(), refs.end(), [&](const auto& ref) {
        return ref.controller && ref.uid == scope.owner_uid;
      });
      if (!controlled) return false;
    }
    return !scope.owned || scope.owned(obj);
  }

  boost::asio::awaitable<void> prune(const PruneScope& scope, const std::set<std::string>& keep,
                                     const std::string& root, const std::string& owner_uid,
                                     ApplyReport& report,
                                     std::vector<std::pair<GroupKind, k8s::ObjectKey>>& deleted) {
    if (options.managed_by_value.empty()) {
      report.errors.push_back("pruning needs ApplyOptions::managed_by_value (a controller bug)");
      co_return;
    }
    if (scope.owner_uid.empty() && scope.namespaces.empty()) co_return;
    for (const auto& gvk : scope.kinds) {
      const GroupKind gk = GroupKind::of(gvk);
      std::vector<k8s::ObjectPtr> candidates;
      if (!scope.owner_uid.empty()) {
        candidates = cache.owned_by(gk, scope.owner_uid);
      } else {
        for (const auto& ns : scope.namespaces) {
          auto more = cache.list(gk, ns);
          candidates.insert(candidates.end(), more.begin(), more.end());
        }
      }
      for (const auto& obj : candidates) {
        if (!obj || obj->being_deleted()) continue;
        if (!scope.namespaces.empty() && std::find(scope.namespaces.begin(), scope.namespaces.end(),
                                                   obj->ns()) == scope.namespaces.end()) {
          continue;
        }
        if (obj->label(options.managed_by_label) !=
            std::optional<std::string_view>(options.managed_by_value)) {
          continue;
        }
        const k8s::ObjectKey key = obj->key();
        const std::string rkey = record_key(gk, key);
        if (keep.contains(rkey) || !in_scope(scope, *obj) ||
            ownership(*obj, owner_uid, nullptr, options) != Ownership::owned) {
          continue;
        }
        if (!may_write()) {
          report.write_blocked = true;
          co_return;
        }
        k8s::DeleteOptions opts{k8s::PropagationPolicy::background};
        opts.precondition_uid = std::string(obj->uid());
        auto r = co_await delete_object(gvk, key, opts);
        if (r) {
          ++report.deleted;
          deleted.emplace_back(gk, key);
          outcome(report, gk, key, ObjectResult::deleted);
          count(gk, "delete");
          net::log::info(
              "deleted (no longer desired)",
              {{"controller", options.controller}, {"root", root}, {"object", describe(gk, key)}});
        } else if (!r.error().not_found() && !r.error().conflict()) {
          fail(report, gk, key, root, "delete: " + r.error().describe(),
               r.error().server_failure());
          if (options.stop_on_error) co_return;
        }
      }
    }
  }

  struct Expectation {
    struct Present {
      GroupKind kind;
      k8s::ObjectKey key;
      std::string hash;
    };
    std::vector<Present> present;
    std::vector<std::pair<GroupKind, k8s::ObjectKey>> absent;
    net::TimePoint deadline;
  };

  bool expectation_met(const Expectation& e) const {
    if (clock.now() >= e.deadline) return true;
    for (const auto& p : e.present) {
      const auto live = cache.get(p.kind, p.key);
      if (!live ||
          live->annotation(options.hash_annotation) != std::optional<std::string_view>(p.hash)) {
        return false;
      }
    }
    return std::none_of(e.absent.begin(), e.absent.end(),
                        [&](const auto& a) { return cache.get(a.first, a.second) != nullptr; });
  }

  k8s::ApiClient& client;
  const ObjectCache& cache;
  const ApplyOptions options;
  const net::Clock& clock;

  std::mutex expectations_mutex;                              // owns expectations
  std::unordered_map<std::string, Expectation> expectations;  // by root

  mutable std::mutex records_mutex;  // owns records, in_flight, pending
  std::unordered_map<std::string, Record> records;
  std::unordered_map<std::string, int> in_flight;  // writes awaiting an answer, by object
  std::unordered_map<std::string, std::vector<PendingEvent>> pending;
  std::atomic<std::uint64_t> echo_count{0};

  net::metrics::Registry& registry;
  net::metrics::Family<net::metrics::Counter>& applied;
  net::metrics::Family<net::metrics::Counter>& errors;
  net::metrics::Family<net::metrics::Counter>& conflicts;
  net::metrics::Family<net::metrics::Counter>& recreates;
  net::metrics::Family<net::metrics::Counter>& echoes;
};

ApplyEngine::ApplyEngine(k8s::ApiClient& client, const ObjectCache& cache, ApplyOptions options,
                         const net::Clock& clock)
    : impl_(std::make_unique<Impl>(client, cache, std::move(options), clock)) {}

ApplyEngine::~ApplyEngine() = default;

const ApplyOptions& ApplyEngine::options() const {
  return impl_->options;
}

std::string ApplyEngine::content_hash(const json::object& desired) const {
  return runtime::content_hash(desired, impl_->options.hash_annotation);
}

const ObjectOutcome* ApplyReport::find(const GroupKind& kind, const k8s::ObjectKey& key) const {
  for (const auto& o : objects) {
    if (o.kind == kind && o.key == key) return &o;
  }
  return nullptr;
}

std::vector<std::string> ApplyReport::objects_with(ObjectResult result) const {
  std::vector<std::string> out;
  for (const auto& o : objects) {
    if (o.result == result) out.push_back(describe(o.kind, o.key));
  }
  return out;
}

boost::asio::awaitable<ApplyReport> ApplyEngine::apply(const ApplyPlan& plan) {
  ApplyReport report;
  // What the plan applies is never pruned by it.
  std::set<std::string> keep;
  std::vector<std::string> hashes(plan.steps.size());
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const ApplyStep& step = plan.steps[i];
    if (step.action != ApplyStep::Action::apply) continue;
    keep.insert(record_key(GroupKind::of(step.kind), step.key));
    hashes[i] = step.hash.empty() ? content_hash(step.object) : step.hash;
  }
  bool failed = false;
  std::vector<std::pair<GroupKind, k8s::ObjectKey>> deleted;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const ApplyStep& step = plan.steps[i];
    if (failed && (impl_->options.stop_on_error || step.action == ApplyStep::Action::prune)) {
      if (impl_->options.stop_on_error) break;
      continue;  // nothing is pruned after a failure
    }
    bool ok = true;
    switch (step.action) {
      case ApplyStep::Action::apply:
        ok = co_await impl_->apply_one(step.object, hashes[i], plan.root, plan.owner_uid, report);
        break;
      case ApplyStep::Action::delete_if_managed:
        ok = co_await impl_->delete_if_managed(step.kind, step.key, plan.root, plan.owner_uid,
                                               report, deleted);
        break;
      case ApplyStep::Action::prune: {
        const auto errors = report.errors.size();
        co_await impl_->prune(step.prune, keep, plan.root, plan.owner_uid, report, deleted);
        ok = report.errors.size() == errors;
        break;
      }
    }
    if (report.write_blocked) co_return report;
    failed = failed || !ok;
  }

  // What the owned caches must show before the next decision about this root: every
  // object written or found as desired, with its hash, and none of those deleted.
  const std::lock_guard lock(impl_->expectations_mutex);
  if (report.writes() == 0) {
    if (report.ok()) impl_->expectations.erase(plan.root);  // caches agree already
    co_return report;
  }
  Impl::Expectation e;
  e.deadline = impl_->clock.now() + impl_->options.expectation_timeout;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const ApplyStep& step = plan.steps[i];
    if (step.action != ApplyStep::Action::apply) continue;
    const GroupKind gk = GroupKind::of(step.kind);
    const ObjectOutcome* o = report.find(gk, step.key);
    if (o == nullptr || o->result == ObjectResult::failed || o->result == ObjectResult::waiting ||
        o->result == ObjectResult::not_owned || !impl_->cache.has(gk)) {
      continue;
    }
    e.present.push_back({gk, step.key, hashes[i]});
  }
  for (auto& d : deleted) {
    if (impl_->cache.has(d.first)) e.absent.push_back(std::move(d));
  }
  impl_->expectations.insert_or_assign(plan.root, std::move(e));
  co_return report;
}

bool ApplyEngine::caches_caught_up(const std::string& root) {
  const std::lock_guard lock(impl_->expectations_mutex);
  const auto it = impl_->expectations.find(root);
  if (it == impl_->expectations.end()) return true;
  if (!impl_->expectation_met(it->second)) return false;
  impl_->expectations.erase(it);
  return true;
}

void ApplyEngine::unless_own_write(const GroupKind& kind, const k8s::Object& object,
                                   OwnedEvent what, std::function<void()> otherwise) {
  impl_->unless_own_write(kind, object, what, std::move(otherwise));
}

std::uint64_t ApplyEngine::echoes() const {
  return impl_->echo_count.load();
}

k8s::EventHandler without_own_writes(ApplyEngine& engine, const GroupKind& owned,
                                     k8s::EventHandler handler) {
  auto all = std::make_shared<const k8s::EventHandler>(std::move(handler));
  k8s::EventHandler h;
  if (all->on_add) {
    h.on_add = [all, &engine, owned](const k8s::ObjectPtr& o) {
      if (!o) return;
      engine.unless_own_write(owned, *o, OwnedEvent::added, [all, o] { all->on_add(o); });
    };
  }
  if (all->on_update) {
    h.on_update = [all, &engine, owned](const k8s::ObjectPtr& old_obj,
                                        const k8s::ObjectPtr& new_obj) {
      if (!new_obj) return;
      engine.unless_own_write(owned, *new_obj, OwnedEvent::updated,
                              [all, old_obj, new_obj] { all->on_update(old_obj, new_obj); });
    };
  }
  if (all->on_delete) {
    h.on_delete = [all, &engine, owned](const k8s::ObjectPtr& o) {
      if (!o) return;
      engine.unless_own_write(owned, *o, OwnedEvent::deleted, [all, o] { all->on_delete(o); });
    };
  }
  return h;
}

k8s::EventHandler owner_event_handler(GroupKind owner, bool owner_namespaced, bool controller_only,
                                      Enqueue enqueue, ApplyEngine& engine,
                                      const GroupKind& owned) {
  return without_own_writes(
      engine, owned,
      owner_event_handler(std::move(owner), owner_namespaced, controller_only, std::move(enqueue)));
}

}  // namespace aop::runtime
