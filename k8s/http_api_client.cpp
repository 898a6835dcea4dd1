// The API client over net::HttpClient: authentication, client-side rate limiting,
// retries per retry_reason (k8s/api_request.hpp), request metrics with client-go's
// names, and watch streams framed by net::JsonStreamDecoder.
#include <deque>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/api_request.hpp"
#include "k8s/base64.hpp"
#include "k8s/kubeconfig.hpp"
#include "k8s/object_stream.hpp"
#include "net/error.hpp"
#include "net/http_client.hpp"
#include "net/json_stream.hpp"
#include "net/log.hpp"
#include "net/metrics.hpp"
#include "net/rate_limiter.hpp"

namespace aop::k8s {
namespace json = boost::json;
namespace asio = boost::asio;

namespace {

// CRD objects embed deep OpenAPI schemas; Boost.JSON's default depth limit of 32 is
// too small for them (same limit as the watch-stream framer).
constexpr std::size_t kMaxJsonDepth = 512;
// A watch's stream fails when nothing arrives for its timeout plus this slack: the
// server ends a healthy watch at its timeout, so silence beyond that is a stall.
constexpr auto kWatchIdleSlack = std::chrono::seconds(30);
// Lists restart from scratch when their continue token expires; a server that keeps
// expiring tokens faster than we can page is given up on after this many attempts.
constexpr int kMaxListRestarts = 3;
// How much of an error response body is read from a failed watch (a Status).
constexpr std::size_t kMaxErrorBody = std::size_t{64} * 1024;

// client-go's latency buckets (seconds).
std::vector<double> latency_buckets() {
  return {0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60};
}

json::value parse_json(std::string_view text, boost::system::error_code& ec) {
  json::parse_options opts;
  opts.max_depth = kMaxJsonDepth;
  return json::parse(text, ec, {}, opts);
}

struct ClientMetrics {
  net::metrics::Family<net::metrics::Counter>& requests;
  net::metrics::Family<net::metrics::Histogram>& latency;
  net::metrics::Family<net::metrics::Histogram>& limiter;
  net::metrics::Family<net::metrics::Counter>& retries;

  static ClientMetrics& instance() {
    auto& r = net::metrics::registry();
    static ClientMetrics m{
        r.counter("rest_client_requests_total",
                  "Number of HTTP requests to the API server, by status code, method and host.",
                  {"code", "method", "host"}),
        r.histogram("rest_client_request_duration_seconds",
                    "Request latency in seconds, by verb and host.", {"verb", "host"},
                    latency_buckets()),
        r.histogram("rest_client_rate_limiter_duration_seconds",
                    "Client-side rate limiter latency in seconds, by verb and host.",
                    {"verb", "host"}, latency_buckets()),
        r.counter("rest_client_request_retries_total",
                  "Number of request retries, by status code, verb and host.",
                  {"code", "verb", "host"}),
    };
    return m;
  }
};

// Connection failures that happen before the request could have been written.
bool before_send(const boost::system::error_code& ec) {
  return ec == asio::error::connection_refused || ec == asio::error::host_not_found ||
         ec == asio::error::host_not_found_try_again || ec == asio::error::network_unreachable ||
         ec == asio::error::host_unreachable || ec == net::Errc::connect_timeout ||
         ec == net::Errc::resolve_timeout || ec == net::Errc::tls_handshake_timeout;
}

std::string_view event_type_name(std::string_view t, WatchEvent::Type& out) {
  if (t == "ADDED")
    out = WatchEvent::Type::added;
  else if (t == "MODIFIED")
    out = WatchEvent::Type::modified;
  else if (t == "DELETED")
    out = WatchEvent::Type::deleted;
  else if (t == "BOOKMARK")
    out = WatchEvent::Type::bookmark;
  else if (t == "ERROR")
    out = WatchEvent::Type::error;
  else
    return {};
  return t;
}

ApiError unknown_kind(const GroupVersionKind& gvk) {
  ApiError e;
  e.transport = boost::system::errc::make_error_code(boost::system::errc::invalid_argument);
  e.message = "the API server does not serve kind " + gvk.api_version() + " " + gvk.kind +
              " (is its CustomResourceDefinition installed?)";
  return e;
}

ApiError bad_object(std::string message) {
  ApiError e;
  e.transport = boost::system::errc::make_error_code(boost::system::errc::invalid_argument);
  e.message = std::move(message);
  return e;
}

// --- watch streams -----------------------------------------------------------------

class HttpWatchStream final : public WatchStream {
 public:
  explicit HttpWatchStream(std::shared_ptr<net::HttpStream> stream) : stream_(std::move(stream)) {}
  ~HttpWatchStream() override { stream_->close(); }

  asio::awaitable<ApiResult<WatchEvent>> next() override {
    while (values_.empty()) {
      if (ended_) co_return end_error_;
      auto piece = co_await stream_->read_some();
      if (!piece) {
        co_return end(error_from_transport(piece.error(), "reading the watch stream"));
      }
      std::vector<json::value> out;
      absorb(decoder_, *piece, out, &same_error);
      for (auto& v : out) values_.push_back(std::move(v));
    }
    ApiResult<WatchEvent> event = to_event(std::move(values_.front()));
    values_.pop_front();
    co_return event;
  }

  asio::awaitable<ApiResult<ObjectWatchEvent>> next_object(const Transform& transform,
                                                           const GroupVersionKind& kind) override {
    if (!objects_) objects_ = std::make_unique<WatchDecoder>(transform, kind);
    while (next_ == decoded_.size()) {
      decoded_.clear();
      next_ = 0;
      if (ended_) co_return end_error_;
      auto piece = co_await stream_->read_some();
      if (!piece) {
        co_return end(error_from_transport(piece.error(), "reading the watch stream"));
      }
      absorb(*objects_, *piece, decoded_, &decoder_error);
    }
    co_return to_object_event(decoded_[next_++]);
  }

  void close() override { stream_->close(); }

 private:
  // Feeds what one read returned to `decoder` (an empty piece: the server ended the
  // stream), its output going to `out`; ends the stream at its end or on bad bytes
  // (what was decoded before is returned first).
  template <class Decoder, class Out>
  void absorb(Decoder& decoder, std::string_view piece, Out& out,
              boost::system::error_code (*map_error)(const boost::system::error_code&)) {
    boost::system::error_code ec;
    if (piece.empty()) {
      ec = decoder.finish(out);
      if (!ec) {
        ApiError eos;
        eos.transport = asio::error::eof;
        eos.message = "the server ended the watch";
        end(std::move(eos));
        return;
      }
    } else {
      ec = decoder.feed(piece, out);
    }
    if (ec) {
      ApiError bad = error_from_transport(map_error(ec), "decoding the watch stream");
      bad.message = decoder.error_message();
      end(std::move(bad));
    }
  }

  static boost::system::error_code same_error(const boost::system::error_code& ec) { return ec; }

  // The stream decoder's errors as the net/ framer reports them.
  static boost::system::error_code decoder_error(const boost::system::error_code& ec) {
    if (ec == boost::system::errc::value_too_large) return net::Errc::value_too_large;
    if (ec == json::error::incomplete) return net::Errc::incomplete_json;
    return net::Errc::invalid_json;
  }

  static ApiResult<ObjectWatchEvent> to_object_event(DecodedWatchEvent& ev) {
    ObjectWatchEvent out;
    if (!ev.has_object || event_type_name(ev.type, out.type).empty()) {
      return bad_object("malformed watch event: type \"" + ev.type.substr(0, 40) + "\"" +
                        (ev.has_object ? "" : ", no object"));
    }
    if (out.type == WatchEvent::Type::error) {
      out.status = std::move(ev.status);
    } else {
      out.object = std::move(ev.object);
    }
    return out;
  }

  ApiError end(ApiError e) {
    ended_ = true;
    end_error_ = std::move(e);
    return end_error_;
  }

  static ApiResult<WatchEvent> to_event(json::value v) {
    auto* o = v.if_object();
    const json::value* type = o != nullptr ? o->if_contains("type") : nullptr;
    json::value* object = o != nullptr ? o->if_contains("object") : nullptr;
    WatchEvent ev{WatchEvent::Type::error, nullptr};
    if (type == nullptr || !type->is_string() || object == nullptr ||
        event_type_name(type->get_string(), ev.type).empty()) {
      return bad_object("malformed watch event: " + json::serialize(v).substr(0, 200));
    }
    ev.object = std::move(*object);
    return ev;
  }

  std::shared_ptr<net::HttpStream> stream_;
  net::JsonStreamDecoder decoder_;
  std::deque<json::value> values_;  // decoded, not yet returned
  // next_object(): events decoded straight into objects; decoded_[next_...] not yet returned.
  std::unique_ptr<WatchDecoder> objects_;
  std::vector<DecodedWatchEvent> decoded_;
  std::size_t next_ = 0;
  bool ended_ = false;
  ApiError end_error_;
};

// --- the client --------------------------------------------------------------------

class HttpApiClient final : public ApiClient {
 public:
  HttpApiClient(std::shared_ptr<net::HttpClient> http, const ClientConfig& config,
                ApiClientOptions options)
      : http_(std::move(http)),
        options_(std::move(options)),
        token_(config.token),
        limiter_(options_.qps, static_cast<std::uint32_t>(std::max(options_.burst, 1))),
        host_(http_->endpoint().authority()),
        metrics_(ClientMetrics::instance()) {
    if (!config.username.empty() || !config.password.empty()) {
      basic_auth_ = "Basic " + base64_encode(config.username + ":" + config.password);
    }
  }

  ~HttpApiClient() override { http_->close(); }

  ResourceRegistry& registry() override { return registry_; }

  asio::awaitable<ApiResult<void>> discover() override {
    auto core = co_await get_json("/api/v1");
    if (!core) co_return core.error();
    for (auto& info : parse_api_resource_list(*core, "", "v1")) registry_.add(std::move(info));
    auto groups = co_await get_json("/apis");
    if (!groups) co_return groups.error();
    for (const auto& gv : parse_api_group_list(*groups)) {
      auto list = co_await get_json("/apis/" + gv);
      if (!list) {
        // A group whose aggregated server is down must not stop discovery of the rest.
        if (list.error().code == 0 || list.error().code >= 500 || list.error().code == 404) {
          net::log::warn("discovery of an API group failed",
                         {{"group_version", gv}, {"error", list.error().describe()}});
          continue;
        }
        co_return list.error();
      }
      const auto [group, version] = split_api_version(gv);
      for (auto& info : parse_api_resource_list(*list, group, version)) {
        registry_.add(std::move(info));
      }
    }
    co_return ApiResult<void>{};
  }

  asio::awaitable<ApiResult<json::value>> get(const GroupVersionKind& gvk,
                                              const ObjectKey& key) override {
    const auto info = registry_.find(gvk);
    if (!info) co_return unknown_kind(gvk);
    co_return co_await get_json(resource_path(*info, key.ns, key.name));
  }

  asio::awaitable<ApiResult<ListResult>> list(const GroupVersionKind& gvk, std::string_view ns,
                                              const ListOptions& options) override {
    ListResult result;
    for (int restart = 0;; ++restart) {
      result.items.clear();
      std::string token;
      bool expired = false;
      do {
        auto page = co_await list_page(gvk, ns, options, token);
        if (!page) {
          if (page.error().gone() && !token.empty() && restart < kMaxListRestarts) {
            expired = true;  // the continue token expired: start over
            break;
          }
          co_return page.error();
        }
        for (auto& item : page->items) result.items.push_back(std::move(item));
        result.resource_version = std::move(page->resource_version);
        token = std::move(page->continue_token);
      } while (!token.empty());
      if (!expired) co_return result;
    }
  }

  asio::awaitable<ApiResult<ListPage>> list_page(const GroupVersionKind& gvk, std::string_view ns,
                                                 const ListOptions& options,
                                                 std::string continue_token) override {
    const auto info = registry_.find(gvk);
    if (!info) co_return unknown_kind(gvk);
    Call call = list_call(*info, ns, options, continue_token);
    auto response = co_await send(std::move(call));
    if (!response) co_return response.error();
    boost::system::error_code ec;
    json::value body = parse_json(response->body, ec);
    if (ec || !body.is_object()) co_return bad_object("the LIST response is not a JSON object");
    auto& o = body.get_object();
    ListPage page;
    if (auto* items = o.if_contains("items"); items != nullptr && items->is_array()) {
      auto& a = items->get_array();
      page.items.reserve(a.size());
      for (auto& item : a) page.items.push_back(std::move(item));
    }
    if (auto* md = o.if_contains("metadata"); md != nullptr && md->is_object()) {
      if (auto* rv = md->get_object().if_contains("resourceVersion"); rv && rv->is_string()) {
        page.resource_version = rv->get_string();
      }
      if (auto* c = md->get_object().if_contains("continue"); c && c->is_string()) {
        page.continue_token = c->get_string();
      }
    }
    co_return page;
  }

  asio::awaitable<ApiResult<ObjectListPage>> list_objects_page(const GroupVersionKind& gvk,
                                                               std::string_view ns,
                                                               const ListOptions& options,
                                                               std::string continue_token,
                                                               Transform transform) override {
    const auto info = registry_.find(gvk);
    if (!info) co_return unknown_kind(gvk);
    Call call = list_call(*info, ns, options, continue_token);
    ListSink sink(transform, gvk);
    auto response = co_await send(std::move(call), &sink);
    if (!response) co_return response.error();
    if (sink.decoder.finish()) {
      co_return bad_object("the LIST response cannot be decoded: " + sink.decoder.error_message());
    }
    ObjectListPage page;
    page.items = std::move(sink.decoder.items());
    page.resource_version = sink.decoder.resource_version();
    page.continue_token = sink.decoder.continue_token();
    co_return page;
  }

  asio::awaitable<ApiResult<std::unique_ptr<WatchStream>>> watch(
      const GroupVersionKind& gvk, std::string_view ns, const WatchOptions& options) override {
    const auto info = registry_.find(gvk);
    if (!info) co_return unknown_kind(gvk);
    const std::string target = resource_path(*info, ns) + watch_query(options);
    const auto idle = options.idle_timeout.count() > 0
                          ? net::Duration(options.idle_timeout)
                          : net::Duration(options.timeout + kWatchIdleSlack);
    net::Backoff backoff(options_.retry_backoff);
    for (int attempt = 0;; ++attempt) {
      auto req = co_await make_request(net::Method::get, target,
                                       options.metadata_only ? kAcceptMetadata : "");
      if (!req) co_return req.error();
      req->timeout = idle;
      co_await wait_for_limiter("WATCH");
      const auto started = std::chrono::steady_clock::now();
      auto opened = co_await http_->open_stream(std::move(*req));
      ApiError error;
      std::optional<net::Duration> retry_after;
      if (!opened) {
        error = error_from_transport(opened.error(), "GET " + target);
        observe("GET", "WATCH", "<error>", started);
      } else if ((*opened)->status() != 200) {
        auto& stream = *opened;
        const int status = stream->status();
        observe("GET", "WATCH", std::to_string(status), started);
        std::string body;
        while (body.size() < kMaxErrorBody) {
          auto piece = co_await stream->read_some();
          if (!piece || piece->empty()) break;
          body.append(*piece);
        }
        stream->close();
        error = error_from_response(status, body);
        if (auto ra = stream->headers().get("Retry-After")) retry_after = parse_retry_after(*ra);
      } else {
        observe("GET", "WATCH", "200", started);
        co_return std::unique_ptr<WatchStream>(new HttpWatchStream(std::move(*opened)));
      }
      const auto delay = retry_delay(error, true, !opened ? !before_send(opened.error()) : true,
                                     attempt, retry_after, backoff, "WATCH");
      if (!delay) co_return error;
      co_await sleep(*delay);
    }
  }

  asio::awaitable<ApiResult<json::value>> create(const json::value& object) override {
    auto target = object_target(object, false, false);
    if (!target) co_return target.error();
    co_return co_await write(net::Method::post, "POST", std::move(*target), object,
                             "application/json");
  }

  asio::awaitable<ApiResult<json::value>> update(const json::value& object) override {
    auto target = object_target(object, true, false);
    if (!target) co_return target.error();
    co_return co_await write(net::Method::put, "PUT", std::move(*target), object,
                             "application/json");
  }

  asio::awaitable<ApiResult<json::value>> update_status(const json::value& object) override {
    auto target = object_target(object, true, true);
    if (!target) co_return target.error();
    co_return co_await write(net::Method::put, "PUT", std::move(*target), object,
                             "application/json");
  }

  asio::awaitable<ApiResult<json::value>> patch(const GroupVersionKind& gvk, const ObjectKey& key,
                                                PatchType type, const json::value& patch,
                                                bool status_subresource) override {
    const auto info = registry_.find(gvk);
    if (!info) co_return unknown_kind(gvk);
    co_return co_await write(
        net::Method::patch, "PATCH",
        resource_path(*info, key.ns, key.name, status_subresource ? "status" : ""), patch,
        type == PatchType::merge ? "application/merge-patch+json" : "application/json-patch+json");
  }

  asio::awaitable<ApiResult<void>> remove(const GroupVersionKind& gvk, const ObjectKey& key,
                                          const DeleteOptions& options) override {
    const auto info = registry_.find(gvk);
    if (!info) co_return unknown_kind(gvk);
    Call call;
    call.method = net::Method::delete_;
    call.verb = "DELETE";
    call.target = resource_path(*info, key.ns, key.name);
    call.body = json::serialize(delete_body(options));
    call.content_type = "application/json";
    auto response = co_await send(std::move(call));
    if (!response) co_return response.error();
    co_return ApiResult<void>{};
  }

 private:
  struct Call {
    net::Method method = net::Method::get;
    std::string_view verb;  // metrics: GET, LIST, POST, PUT, PATCH, DELETE
    std::string target;
    std::string body;
    std::string_view content_type;
    std::string_view accept;
  };

  // Decodes a 2xx LIST response while it is read. A body that is not valid JSON is read
  // to its end all the same (the error is reported after the exchange, like a parse
  // error of a whole body, and not retried).
  struct ListSink final : net::BodySink {
    ListSink(Transform t, const GroupVersionKind& gvk) : decoder(t, gvk) {}
    boost::system::error_code on_body(std::string_view piece) override {
      decoder.feed(piece);  // a failed decoder ignores the rest
      return {};
    }
    ListDecoder decoder;
  };

  // A LIST of one page.
  static Call list_call(const ResourceInfo& info, std::string_view ns, const ListOptions& options,
                        const std::string& continue_token) {
    Call call;
    call.method = net::Method::get;
    call.verb = "LIST";
    call.target = resource_path(info, ns) + list_query(options, continue_token);
    if (options.metadata_only) call.accept = kAcceptMetadataList;
    return call;
  }

  asio::awaitable<ApiResult<json::value>> get_json(std::string target) {
    Call call;
    call.method = net::Method::get;
    call.verb = "GET";
    call.target = target;
    auto response = co_await send(std::move(call));
    if (!response) co_return response.error();
    boost::system::error_code ec;
    json::value v = parse_json(response->body, ec);
    if (ec) co_return bad_object("the response to GET " + target + " is not JSON");
    co_return v;
  }

  asio::awaitable<ApiResult<json::value>> write(net::Method method, std::string_view verb,
                                                std::string target, const json::value& body,
                                                std::string_view content_type) {
    Call call;
    call.method = method;
    call.verb = verb;
    call.target = std::move(target);
    call.body = json::serialize(body);
    call.content_type = content_type;
    auto response = co_await send(std::move(call));
    if (!response) co_return response.error();
    boost::system::error_code ec;
    json::value v = parse_json(response->body, ec);
    if (ec) co_return bad_object("the response to " + std::string(verb) + " is not JSON");
    co_return v;
  }

  // The path of an object given as JSON (its apiVersion, kind, namespace and name).
  ApiResult<std::string> object_target(const json::value& object, bool with_name,
                                       bool status) const {
    const auto* o = object.if_object();
    if (o == nullptr) return bad_object("the object to write is not a JSON object");
    auto str = [](const json::object& obj, std::string_view k) -> std::string_view {
      const auto* v = obj.if_contains(k);
      return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : "";
    };
    const auto [group, version] = split_api_version(str(*o, "apiVersion"));
    const GroupVersionKind gvk{group, version, std::string(str(*o, "kind"))};
    if (gvk.version.empty() || gvk.kind.empty()) {
      return bad_object("the object to write has no apiVersion or kind");
    }
    const auto info = registry_.find(gvk);
    if (!info) return unknown_kind(gvk);
    const auto* md = o->if_contains("metadata");
    const json::object empty;
    const json::object& meta = md != nullptr && md->is_object() ? md->get_object() : empty;
    const std::string_view name = str(meta, "name");
    if (with_name && name.empty()) return bad_object("the object to write has no metadata.name");
    return resource_path(*info, str(meta, "namespace"), with_name ? name : "",
                         status ? "status" : "");
  }

  asio::awaitable<ApiResult<net::HttpRequest>> make_request(net::Method method, std::string target,
                                                            std::string_view accept) {
    net::HttpRequest req;
    req.method = method;
    req.target = std::move(target);
    req.headers.set("Accept", accept.empty() ? "application/json" : std::string(accept));
    req.headers.set("User-Agent", options_.user_agent);
    if (token_) {
      auto token = token_->token();
      if (!token) {
        ApiError e;
        e.transport = boost::system::errc::make_error_code(boost::system::errc::permission_denied);
        e.message = "cannot get a bearer token: " + token.error().message;
        co_return e;
      }
      if (!token->empty()) req.headers.set("Authorization", "Bearer " + *token);
    } else if (!basic_auth_.empty()) {
      req.headers.set("Authorization", basic_auth_);
    }
    co_return req;
  }

  asio::awaitable<void> wait_for_limiter(std::string_view verb) {
    const auto before = std::chrono::steady_clock::now();
    co_await limiter_.acquire();
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - before;
    metrics_.limiter.with({verb, host_}).observe(waited.count());
  }

  void observe(std::string_view method, std::string_view verb, const std::string& code,
               std::chrono::steady_clock::time_point started) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    metrics_.requests.with({code, method, host_}).inc();
    metrics_.latency.with({verb, host_}).observe(took.count());
  }

  // How long to wait before retrying, or nullopt when the error is final.
  std::optional<net::Duration> retry_delay(const ApiError& error, bool read_only, bool sent,
                                           int attempt, std::optional<net::Duration> retry_after,
                                           net::Backoff& backoff, std::string_view verb) {
    const RetryPolicy policy{options_.max_retries};
    if (attempt >= policy.max_retries) return std::nullopt;
    if (retry_reason(error, read_only, sent) == RetryReason::none) return std::nullopt;
    metrics_.retries.with({error.code == 0 ? "<error>" : std::to_string(error.code), verb, host_})
        .inc();
    const net::Duration drawn = backoff.next(std::chrono::steady_clock::now());
    if (retry_after) return std::min(*retry_after, policy.max_retry_after);
    return drawn;
  }

  static asio::awaitable<void> sleep(net::Duration d) {
    asio::steady_timer timer(co_await asio::this_coro::executor, d);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }

  // Sends with retries. With `sink`, the body of a 2xx response goes to it as it arrives
  // (its decoder is reset before every attempt).
  asio::awaitable<ApiResult<net::HttpResponse>> send(Call call, ListSink* sink = nullptr) {
    const std::string_view method_name = net::method_name(call.method);
    const bool read_only = call.method == net::Method::get;
    net::Backoff backoff(options_.retry_backoff);
    for (int attempt = 0;; ++attempt) {
      auto req = co_await make_request(call.method, call.target, call.accept);
      if (!req) co_return req.error();
      req->body = call.body;
      if (!call.content_type.empty())
        req->headers.set("Content-Type", std::string(call.content_type));
      req->timeout = net::Duration(options_.request_timeout);
      co_await wait_for_limiter(call.verb);
      const auto started = std::chrono::steady_clock::now();
      boost::system::result<net::HttpResponse> response;
      if (sink != nullptr) {
        sink->decoder.reset();
        response = co_await http_->request_streamed(std::move(*req), *sink);
      } else {
        response = co_await http_->request(std::move(*req));
      }
      ApiError error;
      std::optional<net::Duration> retry_after;
      bool sent = true;
      if (!response) {
        observe(method_name, call.verb, "<error>", started);
        error =
            error_from_transport(response.error(), std::string(method_name) + " " + call.target);
        sent = !before_send(response.error());
      } else {
        observe(method_name, call.verb, std::to_string(response->status), started);
        if (response->status < 300) co_return std::move(*response);
        error = error_from_response(response->status, response->body);
        if (auto ra = response->headers.get("Retry-After")) retry_after = parse_retry_after(*ra);
      }
      const auto delay =
          retry_delay(error, read_only, sent, attempt, retry_after, backoff, call.verb);
      if (!delay) co_return error;
      net::log::debug("retrying API request", {{"verb", call.verb},
                                               {"path", call.target},
                                               {"attempt", attempt + 1},
                                               {"error", error.describe()}});
      co_await sleep(*delay);
    }
  }

  std::shared_ptr<net::HttpClient> http_;
  ApiClientOptions options_;
  std::shared_ptr<TokenSource> token_;
  std::string basic_auth_;
  ResourceRegistry registry_;  // thread-safe on its own
  net::RateLimiter limiter_;   // thread-safe on its own
  std::string host_;           // metrics label
  ClientMetrics& metrics_;
};

}  // namespace

std::unique_ptr<ApiClient> make_api_client(asio::any_io_executor executor,
                                           const ClientConfig& config,
                                           const ApiClientOptions& options) {
  net::HttpClientOptions http;
  http.tls.ca_pem = config.ca_pem;
  http.tls.cert_pem = config.client_cert_pem;
  http.tls.key_pem = config.client_key_pem;
  http.tls.server_name = config.tls_server_name;
  http.tls.insecure_skip_verify = config.insecure_skip_tls_verify;
  http.user_agent = options.user_agent;
  http.max_connections = options.max_connections;
  auto client = net::HttpClient::create(std::move(executor), config.server, std::move(http));
  if (!client) {
    throw std::invalid_argument("cannot create the API client for " + config.server + " (" +
                                config.source + "): " + client.error().message);
  }
  return std::make_unique<HttpApiClient>(std::move(*client), config, options);
}

}  // namespace aop::k8s
