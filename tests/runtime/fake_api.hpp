// A fake Kubernetes API server for runtime tests: objects in memory with UIDs,
// resourceVersions, generations (bumped when anything but metadata/status changes),
// optimistic concurrency, delete preconditions, and injectable failures. It counts every
// call and write, and can copy its state into bare Stores to play the informer caches
// (deliberately stale until sync() is called). The API methods are thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/store.hpp"
#include "reconcile/runtime/apply.hpp"
#include "reconcile/runtime/object_cache.hpp"

namespace aop::runtime::testing {

namespace json = boost::json;

inline std::string str_at(const json::object& o, std::string_view k) {
  const auto* v = o.if_contains(k);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

class FakeApi final : public k8s::ApiClient {
 public:
  struct Call {
    std::string verb;  // get, create, update, update_status, delete
    std::string kind;
    std::string key;  // namespace/name
  };
  // Returns an error to fail the call with, or nullopt to proceed.
  using Inject = std::function<std::optional<k8s::ApiError>(const Call&, const json::value*)>;

  std::vector<Call> calls;
  Inject inject;

  k8s::ResourceRegistry& registry() override { return registry_; }
  boost::asio::awaitable<k8s::ApiResult<void>> discover() override {
    co_return k8s::ApiResult<void>{};
  }

  // Server-side state, for tests to inspect and edit ("someone else" writing).
  std::map<std::string, json::object>& objects() { return objects_; }
  json::object* find(std::string_view kind, std::string_view ns, std::string_view name) {
    const auto it = objects_.find(id(kind, ns, name));
    return it == objects_.end() ? nullptr : &it->second;
  }
  // Writes as another actor would: bumps resourceVersion (and generation when `spec`).
  void touch(json::object& obj, bool spec_changed) {
    auto& md = obj["metadata"].as_object();
    md["resourceVersion"] = std::to_string(++rv_);
    if (spec_changed && md.contains("generation")) {
      md["generation"] = md["generation"].to_number<std::int64_t>() + 1;
    }
  }
  // Like the API server, Secrets and ConfigMaps carry no generation.
  static bool has_generation(std::string_view kind) {
    return kind != "Secret" && kind != "ConfigMap";
  }
  void put(json::object obj) {
    auto& md = obj["metadata"].as_object();
    if (!md.contains("uid")) md["uid"] = "uid-" + std::to_string(++uid_);
    md["resourceVersion"] = std::to_string(++rv_);
    if (!md.contains("generation") && has_generation(str_at(obj, "kind"))) md["generation"] = 1;
    objects_[id(str_at(obj, "kind"), str_at(md, "namespace"), str_at(md, "name"))] = std::move(obj);
  }

  // The resourceVersion the next write will produce (for the test's own thread, e.g.
  // from `inject`, which runs inside a call).
  std::string next_resource_version() const { return std::to_string(rv_ + 1); }

  int writes() const {
    int n = 0;
    for (const auto& c : calls) n += c.verb != "get" ? 1 : 0;
    return n;
  }
  int count(std::string_view verb) const {
    int n = 0;
    for (const auto& c : calls) n += c.verb == verb ? 1 : 0;
    return n;
  }

  // Fills `store` with the server's objects of `kind` (the cache catching up).
  void sync(std::string_view kind, k8s::Store& store) const {
    std::vector<k8s::ObjectPtr> objs;
    for (const auto& [k, o] : objects_) {
      if (str_at(o, "kind") == kind) objs.push_back(k8s::Object::from_json(json::value(o)));
    }
    store.replace(std::move(objs));
  }

  boost::asio::awaitable<k8s::ApiResult<json::value>> get(const k8s::GroupVersionKind& gvk,
                                                          const k8s::ObjectKey& key) override {
    const std::lock_guard lock(mutex_);
    Call c{"get", gvk.kind, key.str()};
    calls.push_back(c);
    if (auto e = injected(c, nullptr)) co_return *e;
    const auto* o = find(gvk.kind, key.ns, key.name);
    if (!o) co_return error(404, "NotFound", "not found");
    co_return json::value(*o);
  }

  boost::asio::awaitable<k8s::ApiResult<k8s::ListResult>> list(const k8s::GroupVersionKind&,
                                                               std::string_view,
                                                               const k8s::ListOptions&) override {
    co_return error(405, "MethodNotAllowed", "list is not faked");
  }
  boost::asio::awaitable<k8s::ApiResult<std::unique_ptr<k8s::WatchStream>>> watch(
      const k8s::GroupVersionKind&, std::string_view, const k8s::WatchOptions&) override {
    co_return error(405, "MethodNotAllowed", "watch is not faked");
  }
  boost::asio::awaitable<k8s::ApiResult<json::value>> patch(const k8s::GroupVersionKind&,
                                                            const k8s::ObjectKey&, k8s::PatchType,
                                                            const json::value&, bool) override {
    co_return error(405, "MethodNotAllowed", "patch is not faked");
  }

  boost::asio::awaitable<k8s::ApiResult<json::value>> create(const json::value& v) override {
    const std::lock_guard lock(mutex_);
    json::object obj = v.as_object();
    auto& md = obj["metadata"].as_object();
    Call c{"create", str_at(obj, "kind"), key_of(md)};
    calls.push_back(c);
    if (auto e = injected(c, &v)) co_return *e;
    if (find(c.kind, str_at(md, "namespace"), str_at(md, "name"))) {
      co_return error(409, "AlreadyExists", "already exists");
    }
    md.erase("resourceVersion");
    md.erase("uid");
    md.erase("generation");
    put(obj);
    co_return json::value(*find(c.kind, str_at(md, "namespace"), str_at(md, "name")));
  }

  boost::asio::awaitable<k8s::ApiResult<json::value>> update(const json::value& v) override {
    const std::lock_guard lock(mutex_);
    json::object obj = v.as_object();
    auto& md = obj["metadata"].as_object();
    Call c{"update", str_at(obj, "kind"), key_of(md)};
    calls.push_back(c);
    if (auto e = injected(c, &v)) co_return *e;
    json::object* cur = find(c.kind, str_at(md, "namespace"), str_at(md, "name"));
    if (!cur) co_return error(404, "NotFound", "not found");
    auto& cur_md = (*cur)["metadata"].as_object();
    if (str_at(md, "resourceVersion") != str_at(cur_md, "resourceVersion")) {
      co_return error(409, "Conflict", "the object has been modified");
    }
    json::object before = *cur;
    md["uid"] = cur_md["uid"];
    md.erase("generation");
    if (const auto* g = cur_md.if_contains("generation")) md["generation"] = *g;
    if (auto* st = cur->if_contains("status")) obj["status"] = *st;  // status is not updated
    *cur = std::move(obj);
    if (content(before) != content(*cur)) {
      auto& m = (*cur)["metadata"].as_object();
      if (m.contains("generation")) m["generation"] = m["generation"].to_number<std::int64_t>() + 1;
    }
    if (before != *cur) touch(*cur, false);
    co_return json::value(*cur);
  }

  boost::asio::awaitable<k8s::ApiResult<json::value>> update_status(const json::value& v) override {
    const std::lock_guard lock(mutex_);
    const json::object& obj = v.as_object();
    const auto& md = obj.at("metadata").as_object();
    Call c{"update_status", str_at(obj, "kind"), key_of(md)};
    calls.push_back(c);
    if (auto e = injected(c, &v)) co_return *e;
    json::object* cur = find(c.kind, str_at(md, "namespace"), str_at(md, "name"));
    if (!cur) co_return error(404, "NotFound", "not found");
    if (str_at(md, "resourceVersion") !=
        str_at((*cur)["metadata"].as_object(), "resourceVersion")) {
      co_return error(409, "Conflict", "the object has been modified");
    }
    if (const auto* st = obj.if_contains("status")) {
      (*cur)["status"] = *st;
    } else {
      cur->erase("status");
    }
    touch(*cur, false);
    co_return json::value(*cur);
  }

  boost::asio::awaitable<k8s::ApiResult<void>> remove(const k8s::GroupVersionKind& gvk,
                                                      const k8s::ObjectKey& key,
                                                      const k8s::DeleteOptions& options) override {
    const std::lock_guard lock(mutex_);
    Call c{"delete", gvk.kind, key.str()};
    calls.push_back(c);
    last_delete = options;
    if (auto e = injected(c, nullptr)) co_return *e;
    const auto it = objects_.find(id(gvk.kind, key.ns, key.name));
    if (it == objects_.end()) co_return error(404, "NotFound", "not found");
    if (options.precondition_uid &&
        *options.precondition_uid != str_at(it->second["metadata"].as_object(), "uid")) {
      co_return error(409, "Conflict", "precondition failed: UID");
    }
    objects_.erase(it);
    co_return k8s::ApiResult<void>{};
  }

  std::optional<k8s::DeleteOptions> last_delete;

 private:
  static std::string id(std::string_view kind, std::string_view ns, std::string_view name) {
    return std::string(kind) + "/" + std::string(ns) + "/" + std::string(name);
  }
  static std::string key_of(const json::object& md) {
    const std::string ns = str_at(md, "namespace");
    return ns.empty() ? str_at(md, "name") : ns + "/" + str_at(md, "name");
  }
  static json::object content(json::object o) {
    o.erase("metadata");
    o.erase("status");
    return o;
  }
  static k8s::ApiError error(int code, std::string reason, std::string message) {
    k8s::ApiError e;
    e.code = code;
    e.reason = std::move(reason);
    e.message = std::move(message);
    return e;
  }
  std::optional<k8s::ApiError> injected(const Call& c, const json::value* body) {
    return inject ? inject(c, body) : std::nullopt;
  }

  k8s::ResourceRegistry registry_;
  // Serializes the API methods (the controller calls them from several threads); the
  // inspection helpers are for the test's own thread.
  std::mutex mutex_;
  std::map<std::string, json::object> objects_;
  int rv_ = 100;
  int uid_ = 0;
};

// Runs a coroutine to completion on a fresh io_context and returns its result.
template <class T>
T run(boost::asio::awaitable<T> a) {
  boost::asio::io_context io;
  std::optional<T> out;
  std::exception_ptr error;
  boost::asio::co_spawn(io, std::move(a), [&](std::exception_ptr e, T v) {
    error = e;
    if (!e) out = std::move(v);
  });
  io.run();
  if (error) std::rethrow_exception(error);
  return std::move(*out);
}

}  // namespace aop::runtime::testing
