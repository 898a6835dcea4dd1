// HTTP/1.1 client for one endpoint (one per API server): plain TCP or TLS, a capped
// keep-alive connection pool, a deadline on every network operation, responses of any
// size up to a configurable limit, and streaming responses for long-lived watches.
//
// All operations are coroutines returning errors as values; the client is safe to use
// from many coroutines on a multi-threaded io_context at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include "net/clock.hpp"
#include "net/http_types.hpp"
#include "net/result.hpp"
#include "net/tls_options.hpp"

namespace aop::net {

// Where the client connects: parsed from "https://host:port/prefix".
struct HttpEndpoint {
  bool tls = false;
  std::string host;  // name or IP address (IPv6 without brackets)
  std::uint16_t port = 0;
  std::string path_prefix;  // prepended to every request target ("" or "/k8s/clusters/x")

  // Accepts http:// and https:// URLs; the port defaults to 80 / 443.
  static Result<HttpEndpoint> parse(std::string_view url);
  // "host:port" as it goes in the Host header ("[::1]:6443" for IPv6).
  std::string authority() const;
};

struct HttpClientOptions {
  TlsClientOptions tls;  // used when the endpoint is https://
  // Concurrent requests (and so pooled connections) to the endpoint; requests beyond
  // the cap wait for a free connection. Streams have their own connections and do not
  // count: a watch holds its connection for minutes and would starve short requests.
  std::size_t max_connections = 32;
  // Name resolution plus TCP connect, and separately the TLS handshake.
  Duration connect_timeout = std::chrono::seconds(10);
  // Writing a request, and reading a whole response (header and body). Large LISTs
  // must fit in it; HttpRequest::timeout overrides it per request.
  Duration io_timeout = std::chrono::minutes(2);
  // A stream fails when nothing arrives for this long (per-request override as above).
  Duration stream_idle_timeout = std::chrono::minutes(5);
  // Idle pooled connections older than this are dropped instead of reused: servers
  // close idle keep-alive connections (Go's default is 90 s), and a reused dead one
  // costs a retry.
  Duration idle_connection_ttl = std::chrono::seconds(60);
  // Beast's parser stops at 8 MB by default; a cluster-wide LIST can be far larger.
  std::uint64_t body_limit = std::uint64_t{1} << 30;
  std::uint32_t header_limit = 64 * 1024;
  // Sent when the request has no User-Agent of its own.
  std::string user_agent = "agent-operator";
};

// The body of a streaming response, delivered as it arrives.
class HttpStream {
 public:
  virtual ~HttpStream() = default;

  int status() const { return status_; }
  const Headers& headers() const { return headers_; }

  // The next piece of the body (chunked, content-length or until-close framing
  // removed), empty at the end of the body. The view stays valid until the next call.
  // Errors: Errc::idle_timeout, truncated_response, malformed_chunk, ...;
  // operation_aborted after close(). One read at a time.
  virtual boost::asio::awaitable<boost::system::result<std::string_view>> read_some() = 0;

  // Ends the stream from any thread or coroutine: a pending read_some() returns
  // asio::error::operation_aborted promptly, later reads return it at once. The
  // connection is closed, never reused.
  virtual void close() = 0;

 protected:
  int status_ = 0;
  Headers headers_;
};

// Receives the body of a successful response piece by piece as it arrives
// (HttpClient::request_streamed).
class BodySink {
 public:
  virtual ~BodySink() = default;
  // The next piece of the body; the view is valid during the call only. Returning an
  // error ends the exchange with that error (the connection is closed, not reused).
  virtual boost::system::error_code on_body(std::string_view piece) = 0;
};

class HttpClient : public std::enable_shared_from_this<HttpClient> {
 public:
  struct Stats {
    std::uint64_t connections_opened = 0;  // TCP (+TLS) connections established
    std::uint64_t requests = 0;            // request() calls that got a response
    std::uint64_t reused = 0;              // requests sent on a pooled connection
    std::uint64_t retries = 0;             // resent after a stale pooled connection failed
    std::size_t idle = 0;                  // connections in the pool now
    std::size_t waiting = 0;               // requests waiting for a free connection
  };

  // Fails on a malformed URL or unusable TLS material (the message names which).
  static Result<std::shared_ptr<HttpClient>> create(boost::asio::any_io_executor executor,
                                                    std::string_view base_url,
                                                    HttpClientOptions options = {});
  virtual ~HttpClient() = default;

  // Sends a request and reads the whole response. A request that fails on a reused
  // keep-alive connection before any response byte arrives is resent once on a new
  // connection if it is idempotent (or was not fully written).
  virtual boost::asio::awaitable<boost::system::result<HttpResponse>> request(HttpRequest req) = 0;

  // As request(), but the body of a 2xx response goes to `sink` piece by piece as it is
  // read, instead of into HttpResponse::body (which stays empty): a large response is
  // processed while it arrives and is never held whole. Bodies of other statuses are
  // read whole into HttpResponse::body as by request(). The sink is called on the
  // connection's strand while the caller waits, only after the response header, and
  // only on the attempt that is returned (a request resent after a stale pooled
  // connection failed had delivered nothing). The default reads the whole body first.
  virtual boost::asio::awaitable<boost::system::result<HttpResponse>> request_streamed(
      HttpRequest req, BodySink& sink);

  // Sends a request on a new connection and returns once the response header arrived;
  // the body is then read piece by piece from the stream (any status code).
  virtual boost::asio::awaitable<boost::system::result<std::shared_ptr<HttpStream>>> open_stream(
      HttpRequest req) = 0;

  // Drops idle connections; waiting and later requests fail with Errc::client_closed.
  // In-flight requests and open streams finish on their own.
  virtual void close() = 0;

  virtual Stats stats() const = 0;
  virtual const HttpEndpoint& endpoint() const = 0;
};

}  // namespace aop::net
