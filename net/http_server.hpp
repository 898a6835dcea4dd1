// HTTP/1.1 server for the operator's small endpoints (health, metrics) and for the
// Kubernetes API simulator: plain TCP or TLS, routing by method and path, keep-alive,
// coroutine handlers that send a whole response or stream a chunked one (watches),
// a request body limit, and a graceful stop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include "net/clock.hpp"
#include "net/http_types.hpp"
#include "net/result.hpp"
#include "net/tls_options.hpp"

namespace aop::net {

struct ServerRequest {
  Method method = Method::get;
  std::string target;  // as received: path and query, percent-encoded
  std::string path;    // target up to '?'
  std::string query;   // after '?', without it ("" if none)
  Headers headers;
  std::string body;
  std::string peer;  // "ip:port" of the client
  bool tls = false;
  // A verified TLS client certificate (only when the server has a client CA).
  bool client_cert = false;
  std::string client_cert_common_name;
  std::vector<std::string> client_cert_organizations;
};

// Why ResponseWriter::wait() returned.
enum class WakeReason { notified, timeout, client_gone, stopping };

// How a handler answers. Either respond() once, or start_stream(), write_chunk() any
// number of times, then end_stream(). Every call returns an error once the client has
// gone (Errc::client_gone) or a write failed; handlers then just return.
class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;

  // A whole response with a Content-Length.
  virtual boost::asio::awaitable<boost::system::error_code> respond(HttpResponse response) = 0;

  // A chunked streaming response. The connection closes after the stream ends.
  virtual boost::asio::awaitable<boost::system::error_code> start_stream(int status,
                                                                         Headers headers) = 0;
  virtual boost::asio::awaitable<boost::system::error_code> write_chunk(std::string_view data) = 0;
  virtual boost::asio::awaitable<boost::system::error_code> end_stream() = 0;

  // Suspends the handler until the notifier is called, the client disconnects, the
  // server starts stopping, or `timeout` passes, whichever comes first. A notification
  // that arrived while the handler was not waiting is not lost. `stopping` is reported
  // once; `client_gone` every time (the handler should return). The client's
  // disconnect is noticed while a stream is open. One timer: cheap enough for
  // thousands of concurrent watch streams.
  virtual boost::asio::awaitable<WakeReason> wait(Duration timeout) = 0;

  // Wakes wait(). Callable from any thread, any time, also after the request ended
  // (then it does nothing).
  virtual std::function<void()> notifier() = 0;

  virtual bool client_gone() const = 0;
  virtual bool stopping() const = 0;
};

// Handlers run on their connection's strand; they may suspend freely.
using Handler = std::function<boost::asio::awaitable<void>(const ServerRequest&, ResponseWriter&)>;

// Method+path routing. Exact routes first; then the longest matching prefix route (any
// method); then the fallback. An exact path with another method answers 405.
class Router {
 public:
  Router& add(Method method, std::string path, Handler handler);
  Router& add_prefix(std::string prefix, Handler handler);
  Router& set_fallback(Handler handler);

  struct Match {
    const Handler* handler = nullptr;  // nullptr: answer `status`
    int status = 404;
    std::string allow;  // for 405: the allowed methods
  };
  Match match(Method method, std::string_view path) const;

 private:
  std::map<std::string, std::map<Method, Handler>, std::less<>> exact_;
  std::vector<std::pair<std::string, Handler>> prefixes_;  // longest first
  Handler fallback_;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // an IP address; "" = all interfaces; "localhost"
  std::uint16_t port = 0;          // 0: pick a free port (see HttpServer::port())
  std::optional<TlsServerOptions> tls;
  // Larger request bodies get 413. The API server's own limit is 3 MiB.
  std::size_t body_limit = 16u << 20;
  std::uint32_t header_limit = 64 * 1024;
  // A connection may sit idle between requests, and take to send one, this long.
  Duration keep_alive_timeout = std::chrono::seconds(90);
  Duration write_timeout = std::chrono::seconds(30);
  Duration tls_handshake_timeout = std::chrono::seconds(10);
};

class HttpServer {
 public:
  struct Stats {
    std::uint64_t accepted = 0;  // connections accepted
    std::uint64_t requests = 0;  // requests read
    std::size_t active = 0;      // open connections now
  };

  // Binds and listens (not yet accepting). Errors name the address or the TLS part.
  static Result<std::unique_ptr<HttpServer>> create(boost::asio::any_io_executor executor,
                                                    HttpServerOptions options, Router router);
  ~HttpServer();  // closes everything at once; prefer stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void start();
  std::uint16_t port() const;

  // Graceful stop: stops accepting, closes idle keep-alive connections, tells
  // streaming handlers (wait() returns `stopping`), lets in-flight requests finish for
  // up to `grace`, then closes whatever is left. Completes when all are closed.
  boost::asio::awaitable<void> stop(Duration grace);

  Stats stats() const;

  class Impl;

 private:
  explicit HttpServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace aop::net
