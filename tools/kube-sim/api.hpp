// kube-sim's request handling, free of sockets: an HTTP request as plain values in, a
// response (or an open watch) out. The HTTP edge (server.cpp) only moves bytes; every
// Kubernetes semantic lives here and in store.hpp, and is unit-tested through handle().
//
// Threading: one ApiServer is used from one thread (the server's io_context thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "net/result.hpp"
#include "tools/kube-sim/api_error.hpp"
#include "tools/kube-sim/auth.hpp"
#include "tools/kube-sim/faults.hpp"
#include "tools/kube-sim/resources.hpp"
#include "tools/kube-sim/store.hpp"

namespace aop::sim {

struct Request {
  std::string method;  // GET, POST, PUT, PATCH, DELETE
  std::string target;  // path and query, e.g. /api/v1/namespaces/default/configmaps?limit=5
  std::string body;
  std::string content_type;
  std::string accept;
  std::string user_agent;
  std::string authorization;
  bool from_loopback = true;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<Piece> body;
  // A streaming watch: `body` is empty; the connection writes the watcher's output as it
  // comes and ends the response when the watcher closes. Call ApiServer::end_watch when
  // the connection goes away.
  WatcherPtr watch;
  // Injected latency: the connection waits this long before answering.
  std::chrono::milliseconds delay{0};

  std::string body_string() const { return flatten(body); }
};

struct Clock {
  std::function<std::chrono::system_clock::time_point()> wall = [] {
    return std::chrono::system_clock::now();
  };
  std::function<std::chrono::steady_clock::time_point()> mono = [] {
    return std::chrono::steady_clock::now();
  };
};

struct ServerOptions {
  std::size_t watch_history = 10'000;  // events kept per resource for resuming watches
  std::chrono::milliseconds bookmark_interval{60'000};
  std::chrono::seconds default_watch_timeout{1800};  // kube-apiserver's --min-request-timeout
  std::string token;  // the administrator's bearer token ("" = none); required when set
  // Authorize requests with RBAC over the stored Roles and bindings (--rbac). Requests
  // without credentials are then system:anonymous (403 for most), as on kube-apiserver.
  bool rbac = false;
  std::string server_address;  // host:port, for /api
  std::uint64_t seed = 0;      // 0: random
  // A watch from a resourceVersion older than the history: false answers HTTP 410 (the
  // issue's contract), true opens the stream and sends an ERROR 410 event (what
  // kube-apiserver's watch cache does).
  bool gone_as_event = false;
  Clock clock;
};

struct WriteRecord {
  std::uint64_t seq = 0;
  std::string time;
  std::string verb;      // create, update, patch, delete, deletecollection
  std::string resource;  // "configmaps", "deployments.apps", "deployments.apps/status"
  std::string ns;
  std::string name;
  std::string user_agent;
  int code = 0;
  std::uint64_t resource_version = 0;  // store resourceVersion after the write
};

// Requests counted by who made them and what they asked (GET /admin/access), like the
// real server's audit log at Metadata level. Reads by system:masters are left out.
struct AccessKey {
  std::string user;
  std::string user_agent;
  std::string verb;
  std::string group;
  std::string resource;
  std::string subresource;
  std::string ns;
  int code = 0;
  bool denied = false;  // refused by authorization (RBAC), not by anything else
  auto operator<=>(const AccessKey&) const = default;
};

class ApiServer {
 public:
  explicit ApiServer(ServerOptions options = {});

  Response handle(const Request& req);

  // Periodic work: watch bookmarks and timeouts. Call about once a second.
  void tick();
  // Background work queued by writes (garbage collection, namespace and CRD cleanup).
  bool has_background_work() const { return !gc_queue_.empty(); }
  void run_background();
  // The connection of a watch went away.
  void end_watch(const WatcherPtr& w);

  // Loads YAML/JSON files or directories of them (multi-document; `kind: List` expands).
  // Namespaces that preloaded objects need are created. Returns the number of objects.
  Result<std::size_t> preload(const std::string& path);
  // Creates one object as if POSTed (used by preload and tests).
  ApiResult<ObjectPtr> create_object(boost::json::value obj, const std::string& user_agent);

  Store& store() { return store_; }
  const ResourceRegistry& registry() const { return registry_; }
  Faults& faults() { return *faults_; }
  Authenticator& auth() { return auth_; }
  const ServerOptions& options() const { return options_; }
  // The address clients use (known once the listener is bound), reported by /api.
  void set_server_address(std::string address) { options_.server_address = std::move(address); }
  boost::json::object stats_json() const;
  void reset_stats();
  const std::deque<WriteRecord>& write_log() const { return write_log_; }

 public:
  // Implementation details, public for the helper functions of the .cpp files.
  struct Target;
  struct WriteContext;
  struct DeleteOptions {
    std::string propagation;  // Background, Foreground, Orphan
    std::string precondition_uid;
    std::string precondition_rv;
    bool dry_run = false;
  };

 private:
  Response route(const Request& req, Target& t);
  Response handle_admin(const Request& req, std::string_view path, std::string_view query);
  Response handle_discovery(const Request& req, const std::vector<std::string>& segs,
                            bool& handled);
  Response handle_resource(const Request& req, Target& t);
  Response openapi(const std::vector<std::string>& segs);

  Response do_get(const Request& req, Target& t);
  Response do_list(const Request& req, Target& t);
  Response do_watch(const Request& req, Target& t);
  Response do_create(const Request& req, Target& t);
  Response do_update(const Request& req, Target& t);
  Response do_patch(const Request& req, Target& t);
  Response do_apply(const Request& req, Target& t);  // server-side apply (apply.cpp)
  Response do_delete(const Request& req, Target& t);
  Response do_delete_collection(const Request& req, Target& t);
  Response do_scale(const Request& req, Target& t);
  Response do_token_request(const Request& req, Target& t);

  // Shared write paths (API and internal callers).
  ApiResult<ObjectPtr> create_in(const TypePtr& type, const std::string& ns,
                                 boost::json::object obj, const WriteContext& ctx);
  // `obj` is the desired object for the main resource or the status subresource.
  ApiResult<ObjectPtr> update_in(const TypePtr& type, Collection& c, const ObjectPtr& old,
                                 boost::json::object obj, bool status, const WriteContext& ctx);
  ApiResult<ObjectPtr> delete_in(const TypePtr& type, Collection& c, const ObjectPtr& old,
                                 const DeleteOptions& opts);
  // Final removal (no finalizers left).
  ObjectPtr remove_now(const TypePtr& type, Collection& c, const ObjectPtr& old,
                       boost::json::object last);
  // Commits an update and, if the object is being deleted and has no finalizers left,
  // removes it.
  ObjectPtr commit_update(const TypePtr& type, Collection& c, const ObjectPtr& old,
                          boost::json::object obj);

  // ResourceQuota admission of a create (object counts only); charges the quotas unless
  // `dry_run`.
  ApiResult<void> admit_quota(const ResourceType& type, const std::string& ns,
                              const std::string& name, bool dry_run);
  std::vector<StatusCause> validate_metadata(const TypePtr& type, const boost::json::object& obj,
                                             bool create);
  void on_crd_written(const ObjectPtr& crd);
  void on_crd_removed(const ObjectPtr& crd);
  TypePtr storage_type_of(const TypePtr& t) const;

  // Garbage collection.
  struct GcItem {
    enum Kind { dangling, owner_gone, orphan, foreground, namespace_cleanup } kind;
    std::string storage_key;
    std::string key;
    std::string uid;
  };
  void index_owners(const std::string& storage_key, const ObjectPtr& before,
                    const ObjectPtr& after);
  bool owner_alive(const boost::json::object& ref, std::string_view ns, bool& resolvable) const;
  void gc_dangling(const std::string& storage_key, const std::string& key);
  void gc_orphan(const GcItem& item);
  void gc_foreground(const GcItem& item);
  void gc_namespace(const std::string& ns);
  ObjectPtr remove_finalizer(const TypePtr& type, Collection& c, const ObjectPtr& obj,
                             std::string_view finalizer);

  void record_write(const Request& req, std::string verb, const Target& t, int code);
  void record_access(const Request& req, const Target& t, int code, bool denied = false);
  std::string now_rfc3339() const;
  std::string new_uid();
  std::string random_suffix();

  ServerOptions options_;
  Authenticator auth_;
  ResourceRegistry registry_;
  Store store_;
  std::shared_ptr<Faults> faults_;
  std::mt19937_64 rng_;
  std::deque<GcItem> gc_queue_;
  // owner uid -> dependents (storage key, object key)
  std::unordered_map<std::string, std::set<std::pair<std::string, std::string>>> dependents_;
  std::vector<WatcherPtr> watchers_;  // every open watch, for tick() and expiry
  // CRD name -> spec as written in the preloaded file (before defaulting), so that the
  // same CRD preloaded again is recognised as a repeat.
  std::map<std::string, boost::json::value> preloaded_crd_specs_;
  // Server-side apply: object uid -> field manager -> the configuration it last applied,
  // to remove what a manager stops applying (entries of deleted objects are not pruned:
  // uids are never reused).
  std::map<std::string, std::map<std::string, boost::json::object>> applied_configs_;

  // Statistics.
  std::uint64_t requests_total_ = 0;
  std::map<std::string, std::uint64_t> requests_by_verb_;
  std::uint64_t writes_total_ = 0;
  std::map<std::string, std::uint64_t> writes_by_verb_;
  std::map<std::string, std::uint64_t> writes_by_resource_;
  std::map<std::string, std::uint64_t> writes_by_user_agent_;
  std::uint64_t watches_started_ = 0;
  std::uint64_t write_seq_ = 0;
  std::deque<WriteRecord> write_log_;
  std::map<AccessKey, std::uint64_t> access_;
};

}  // namespace aop::sim
