// The Kubernetes API client: typed verbs over one shared HTTP client, with client-side
// rate limiting (QPS/burst), retries with backoff for idempotent requests (429 with
// Retry-After, 5xx, connection errors), and request metrics with client-go's names
// (rest_client_requests_total{code,method,host}, rest_client_request_duration_seconds,
// rest_client_rate_limiter_duration_seconds).
//
// Objects are boost::json values at this layer. Resource paths come from a registry of
// kind -> resource (plural, namespaced) that starts with the built-in kinds and is
// filled from discovery, so a CRD installed after start-up can be used.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include "k8s/object.hpp"
#include "k8s/resource.hpp"
#include "net/backoff.hpp"

namespace aop::k8s {

struct ClientConfig;  // k8s/kubeconfig.hpp

// An API failure: the HTTP status and metav1.Status reason when the server answered,
// or a transport error when it did not (code 0).
struct ApiError {
  int code = 0;         // HTTP status; 0 = no response (see transport)
  std::string reason;   // NotFound, AlreadyExists, Conflict, Invalid, Gone, ...
  std::string message;  // the server's (or transport's) message
  boost::system::error_code transport;

  bool not_found() const { return code == 404; }
  bool conflict() const { return code == 409; }
  bool already_exists() const { return code == 409 && reason == "AlreadyExists"; }
  bool gone() const { return code == 410; }
  bool invalid() const { return code == 422; }
  // The server did not do its job, whatever was asked: no answer, throttling (429), a
  // server error (5xx), or credentials or permissions refused (401/403, fixed outside
  // the cluster objects an operator watches). The same request may succeed later
  // unchanged, and no watch event will say when.
  bool server_failure() const {
    return code == 0 || code == 401 || code == 403 || code == 429 || code >= 500;
  }
  std::string describe() const;  // one line for logs and conditions
  // The server ended a watch stream normally (its timeout, or it dropped the stream
  // between events): resume from the last resourceVersion.
  bool end_of_stream() const { return code == 0 && transport == boost::asio::error::eof; }
  // A watch stream received nothing (no event, no bookmark, no byte) for its idle
  // timeout: the connection is presumed dead (WatchOptions::idle_timeout).
  bool stalled() const;
};

[[noreturn]] void throw_exception_from_error(const ApiError& e, const boost::source_location&);

template <class T>
using ApiResult = boost::system::result<T, ApiError>;

// Resource metadata from discovery.
struct ResourceInfo {
  GroupVersionKind gvk;
  std::string resource;  // plural
  bool namespaced = true;
  bool has_status = false;
  std::vector<std::string> verbs;
};

// kind <-> resource mapping. Thread-safe.
class ResourceRegistry {
 public:
  ResourceRegistry();  // pre-filled with the built-in kinds the operator uses
  void add(ResourceInfo info);
  std::optional<ResourceInfo> find(const GroupVersionKind& gvk) const;
  std::optional<ResourceInfo> find_resource(const GroupVersionResource& gvr) const;

 private:
  mutable std::mutex mutex_;  // owns by_kind_
  std::map<GroupVersionKind, ResourceInfo> by_kind_;
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::size_t limit = 500;       // page size; 0 = no paging
  std::string resource_version;  // "" = most recent; "0" = any (served from cache)
  bool metadata_only = false;    // PartialObjectMetadataList
};

struct ListResult {
  std::vector<boost::json::value> items;
  std::string resource_version;  // of the list, to start a watch from
};

// One page of a LIST.
struct ListPage {
  std::vector<boost::json::value> items;
  std::string resource_version;  // of the list's snapshot
  std::string continue_token;    // "" on the last page
};

// One page of a LIST with its items decoded straight into cached objects
// (ApiClient::list_objects_page).
struct ObjectListPage {
  std::vector<ObjectPtr> items;
  std::string resource_version;  // of the list's snapshot
  std::string continue_token;    // "" on the last page
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;
  bool allow_bookmarks = true;
  std::chrono::seconds timeout{300};
  bool metadata_only = false;
  bool send_initial_events = false;  // streaming list
  // The stream fails (ApiError::stalled()) when nothing, not even a bookmark, arrives for
  // this long, so a stalled connection is noticed; 0 = timeout + 30 s.
  std::chrono::milliseconds idle_timeout{0};
};

// One event of a watch stream.
struct WatchEvent {
  enum class Type { added, modified, deleted, bookmark, error };
  Type type;
  boost::json::value object;  // for error: the metav1.Status
};

// A watch event with its object decoded straight into the cache's encoding
// (WatchStream::next_object).
struct ObjectWatchEvent {
  WatchEvent::Type type = WatchEvent::Type::added;
  // The object, encoded with the caller's Transform (null when the event's object is
  // not a JSON object). Not set for error events.
  ObjectPtr object;
  boost::json::value status;  // error events: the metav1.Status
};

// An open watch stream; events arrive in order. Destroying or closing it ends the
// stream promptly, also while another coroutine is waiting in next().
class WatchStream {
 public:
  virtual ~WatchStream() = default;
  // The next event; an ApiError with transport == operation_aborted after close(), and
  // with code 0 / transport == end of stream when the server ended it.
  virtual boost::asio::awaitable<ApiResult<WatchEvent>> next() = 0;
  // As next(), with the object encoded with `transform` (apiVersion and kind filled from
  // `kind` when missing) as it is read, without a JSON tree: what an informer caches.
  // Use either next() or next_object() on a stream, and one transform throughout. The
  // default encodes what next() returns.
  virtual boost::asio::awaitable<ApiResult<ObjectWatchEvent>> next_object(
      const Transform& transform, const GroupVersionKind& kind);
  virtual void close() = 0;
};

enum class PropagationPolicy { unset, orphan, background, foreground };

struct DeleteOptions {
  PropagationPolicy propagation = PropagationPolicy::unset;
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::optional<std::int64_t> grace_period_seconds;
};

enum class PatchType { merge, json };  // application/merge-patch+json, json-patch+json

// The verbs. All are coroutines safe to call concurrently from any strand. Mutating
// verbs retry on their own only when the server cannot have acted on them (429, or a
// connection error before the request was sent); GET/LIST/WATCH also retry 5xx and
// connection errors (k8s/api_request.hpp: retry_reason).
class ApiClient {
 public:
  virtual ~ApiClient() = default;

  virtual ResourceRegistry& registry() = 0;
  // Refreshes the registry from /api and /apis (CRDs installed since start-up).
  virtual boost::asio::awaitable<ApiResult<void>> discover() = 0;

  virtual boost::asio::awaitable<ApiResult<boost::json::value>> get(const GroupVersionKind& gvk,
                                                                    const ObjectKey& key) = 0;
  // All pages; restarts from scratch when a continue token expires (410).
  virtual boost::asio::awaitable<ApiResult<ListResult>> list(const GroupVersionKind& gvk,
                                                             std::string_view ns,
                                                             const ListOptions& options) = 0;
  // One page (`continue_token` from the previous page, "" for the first); an expired
  // continue token is a 410 for the caller to handle. The reflector lists page by page
  // so a large list never sits in memory as JSON all at once. The default serves
  // everything as one page through list().
  virtual boost::asio::awaitable<ApiResult<ListPage>> list_page(const GroupVersionKind& gvk,
                                                                std::string_view ns,
                                                                const ListOptions& options,
                                                                std::string continue_token);
  // As list_page, with the items encoded with `transform` (apiVersion and kind filled
  // from `gvk`) while the response is read: no JSON tree of the page is ever built, and
  // the response body is never held whole. The default encodes list_page's items.
  virtual boost::asio::awaitable<ApiResult<ObjectListPage>> list_objects_page(
      const GroupVersionKind& gvk, std::string_view ns, const ListOptions& options,
      std::string continue_token, Transform transform);
  virtual boost::asio::awaitable<ApiResult<std::unique_ptr<WatchStream>>> watch(
      const GroupVersionKind& gvk, std::string_view ns, const WatchOptions& options) = 0;
  virtual boost::asio::awaitable<ApiResult<boost::json::value>> create(
      const boost::json::value& object) = 0;
  // PUT of the whole object; metadata.resourceVersion gives optimistic concurrency.
  virtual boost::asio::awaitable<ApiResult<boost::json::value>> update(
      const boost::json::value& object) = 0;
  virtual boost::asio::awaitable<ApiResult<boost::json::value>> update_status(
      const boost::json::value& object) = 0;
  virtual boost::asio::awaitable<ApiResult<boost::json::value>> patch(
      const GroupVersionKind& gvk, const ObjectKey& key, PatchType type,
      const boost::json::value& patch, bool status_subresource = false) = 0;
  virtual boost::asio::awaitable<ApiResult<void>> remove(const GroupVersionKind& gvk,
                                                         const ObjectKey& key,
                                                         const DeleteOptions& options = {}) = 0;
};

struct ApiClientOptions {
  double qps = 50;  // client-side rate limit (--kube-api-qps)
  int burst = 100;  // (--kube-api-burst)
  std::string user_agent = "agent-operator";
  int max_retries = 5;  // see retry_reason (k8s/api_request.hpp)
  std::chrono::milliseconds request_timeout{30000};
  // Between retries of one request when the server gives no Retry-After: short, since
  // the caller (a reflector, a reconcile) has its own, longer backoff on top.
  net::BackoffPolicy retry_backoff{std::chrono::milliseconds(200), 2.0, std::chrono::seconds(5),
                                   0.5, std::chrono::minutes(2)};
  std::size_t max_connections = 32;  // pooled connections for short requests
};

// The real client over net::HttpClient.
std::unique_ptr<ApiClient> make_api_client(boost::asio::any_io_executor executor,
                                           const ClientConfig& config,
                                           const ApiClientOptions& options);

}  // namespace aop::k8s
