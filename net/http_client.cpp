// The HTTP client: endpoint parsing, connection set-up (resolve, connect, TLS), the
// capped keep-alive pool, request/response exchanges and streams.
#include "net/http_client.hpp"

#include <atomic>
#include <functional>
#include <mutex>
#include <variant>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/url/parse.hpp>

#include "net/detail/async_semaphore.hpp"
#include "net/detail/client_read.hpp"
#include "net/detail/http_io.hpp"
#include "net/detail/http_stream_impl.hpp"
#include "net/detail/tls_context.hpp"
#include "net/detail/watchdog.hpp"
#include "net/error.hpp"
#include "net/log.hpp"
#include "net/redact.hpp"

namespace aop::net {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::as_tuple;
using asio::use_awaitable;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using detail::ClientPlainStream;
using detail::ClientTlsStream;
using detail::Phase;

// A pooled connection. Used by one request at a time, always on its strand (which also
// runs its watchdog). Shared so that the watchdog's handler can tell it is gone.
struct Connection : std::enable_shared_from_this<Connection> {
  explicit Connection(const asio::any_io_executor& s)
      : strand(s),
        stream(std::in_place_type<ClientPlainStream>, s),
        watchdog(s, [this] { std::visit([](auto& st) { detail::close_transport(st); }, stream); }) {
  }

  static std::shared_ptr<Connection> make(const asio::any_io_executor& strand) {
    auto conn = std::make_shared<Connection>(strand);
    conn->watchdog.set_owner(conn);
    return conn;
  }

  asio::any_io_executor strand;  // the stream's executor: a strand
  std::variant<ClientPlainStream, ClientTlsStream> stream;
  detail::Watchdog watchdog;         // deadlines of the operations on stream
  boost::beast::flat_buffer buffer;  // bytes read past the previous response
  TimePoint idle_since;
};

// The error a failed operation reports: a timeout when the watchdog closed the transport.
error_code timed(const error_code& ec, const detail::Watchdog& watchdog) {
  return ec && watchdog.expired() ? error_code(boost::beast::error::timeout) : ec;
}

// A response body that goes to a BodySink when the status is 2xx and one is set, and
// otherwise into a string (appended as it arrives: Beast's string_body zero-fills its
// string before copying into it).
struct SinkBody {
  struct value_type {
    BodySink* sink = nullptr;
    std::string text;
  };

  class reader {
   public:
    // Beast constructs the reader with the parser, before the header has arrived.
    template <bool IsRequest, class Fields>
    reader(http::header<IsRequest, Fields>& header, value_type& body) : body_(body) {
      if constexpr (!IsRequest) status_ = [&header] { return header.result_int(); };
    }

    void init(const boost::optional<std::uint64_t>& length, error_code& ec) {
      ec = {};
      streamed_ = body_.sink != nullptr && status_ && status_() / 100 == 2;
      if (!streamed_ && length) {
        if (*length > body_.text.max_size()) {
          ec = http::error::buffer_overflow;
          return;
        }
        body_.text.reserve(static_cast<std::size_t>(*length));
      }
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, error_code& ec) {
      ec = {};
      std::size_t used = 0;
      for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers);
           ++it) {
        const asio::const_buffer b = *it;
        const std::string_view piece(static_cast<const char*>(b.data()), b.size());
        if (streamed_) {
          ec = body_.sink->on_body(piece);
          if (ec) return used;
        } else {
          body_.text.append(piece);
        }
        used += piece.size();
      }
      return used;
    }

    void finish(error_code& ec) { ec = {}; }

   private:
    value_type& body_;
    std::function<unsigned()> status_;  // of the response header
    bool streamed_ = false;
  };
};

// Outcome of one request/response exchange on a connection.
struct Exchange {
  error_code ec;
  HttpResponse response;
  bool keep_alive = false;
  bool nothing_received = false;  // no response byte arrived (safe to resend?)
  bool write_failed = false;
};

// Writing the request and reading the whole response must each finish within `timeout`.
template <class Stream>
asio::awaitable<Exchange> exchange(Stream& stream, detail::Watchdog& watchdog,
                                   boost::beast::flat_buffer& buffer,
                                   const http::request<http::string_body>& msg, Duration timeout,
                                   const HttpClientOptions& options, bool head, BodySink* sink) {
  Exchange out;
  watchdog.reset_expired();
  watchdog.set(timeout);
  auto [wec, written] = co_await http::async_write(stream, msg, as_tuple(use_awaitable));
  if (wec) {
    watchdog.clear();
    out.ec = detail::map_transport_error(timed(wec, watchdog), Phase::write, false);
    out.nothing_received = true;
    out.write_failed = true;
    co_return out;
  }
  http::response_parser<SinkBody> parser;
  parser.get().body().sink = sink;
  parser.body_limit(options.body_limit);
  parser.header_limit(options.header_limit);
  if (head) parser.skip(true);
  watchdog.set(timeout);
  const error_code rec = co_await detail::read_message(stream, buffer, parser);
  watchdog.clear();
  if (rec) {
    out.ec = detail::map_transport_error(timed(rec, watchdog), Phase::read, parser.got_some());
    out.nothing_received = !parser.got_some();
    co_return out;
  }
  auto res = parser.release();
  out.keep_alive = res.keep_alive() && msg.keep_alive();
  out.response.status = static_cast<int>(res.result_int());
  out.response.headers = detail::to_headers(res.base());
  out.response.body = std::move(res.body().text);
  co_return out;
}

class HttpClientImpl final : public HttpClient {
 public:
  HttpClientImpl(asio::any_io_executor executor, HttpEndpoint endpoint, HttpClientOptions options,
                 std::shared_ptr<asio::ssl::context> tls)
      : executor_(std::move(executor)),
        endpoint_(std::move(endpoint)),
        options_(std::move(options)),
        tls_(std::move(tls)),
        verify_name_(options_.tls.server_name.empty() ? endpoint_.host : options_.tls.server_name),
        authority_(endpoint_.authority()),
        slots_(std::max<std::size_t>(options_.max_connections, 1)) {}

  asio::awaitable<boost::system::result<HttpResponse>> request(HttpRequest req) override {
    return request_impl(std::move(req), nullptr);
  }

  asio::awaitable<boost::system::result<HttpResponse>> request_streamed(HttpRequest req,
                                                                        BodySink& sink) override {
    return request_impl(std::move(req), &sink);
  }

  asio::awaitable<boost::system::result<HttpResponse>> request_impl(HttpRequest req,
                                                                    BodySink* sink) {
    auto self = shared_from_this();  // outlive the caller's handle while suspended
    const bool head = req.method == Method::head;
    const bool idempotent = is_idempotent(req.method);
    const Duration timeout = req.timeout.value_or(options_.io_timeout);
    http::request<http::string_body> msg;
    if (auto ec = detail::to_beast_request(std::move(req), authority_, endpoint_.path_prefix,
                                           options_.user_agent, msg)) {
      co_return ec;
    }
    if (auto ec = co_await slots_.acquire()) co_return ec;
    const SlotGuard slot{slots_};

    for (int attempt = 0;; ++attempt) {
      std::shared_ptr<Connection> conn = take_idle();
      const bool reused = conn != nullptr;
      if (reused) reused_.fetch_add(1, std::memory_order_relaxed);
      // A connection's I/O (and its watchdog) must run on its own strand: the caller's
      // executor may be a multi-threaded io_context.
      const asio::any_io_executor strand = reused ? conn->strand : asio::make_strand(executor_);
      Outcome out = co_await asio::co_spawn(
          strand, exchange_on(strand, std::move(conn), msg, timeout, head, sink), use_awaitable);
      if (!out.ex.ec) {
        requests_.fetch_add(1, std::memory_order_relaxed);
        if (out.ex.keep_alive) put_idle(std::move(out.conn));
        co_return std::move(out.ex.response);
      }
      // The server may have closed a pooled connection just as we reused it.
      const bool stale = reused && out.ex.nothing_received && !is_timeout(out.ex.ec);
      if (attempt == 0 && stale && (idempotent || out.ex.write_failed)) {
        retries_.fetch_add(1, std::memory_order_relaxed);
        log::debug("http: resending request after a stale pooled connection failed",
                   {{"host", endpoint_.host}, {"error", out.ex.ec.message()}});
        continue;
      }
      co_return out.ex.ec;
    }
  }

  asio::awaitable<boost::system::result<std::shared_ptr<HttpStream>>> open_stream(
      HttpRequest req) override {
    auto self = shared_from_this();
    using StreamResult = boost::system::result<std::shared_ptr<HttpStream>>;
    if (is_closed()) co_return StreamResult(error_code(Errc::client_closed));
    detail::StreamTimeouts timeouts;
    timeouts.io_timeout = options_.io_timeout;
    timeouts.idle_timeout = req.timeout.value_or(options_.stream_idle_timeout);
    timeouts.header_limit = options_.header_limit;
    http::request<http::string_body> msg;
    if (auto ec = detail::to_beast_request(std::move(req), authority_, endpoint_.path_prefix,
                                           options_.user_agent, msg)) {
      co_return StreamResult(ec);
    }
    // The stream's I/O runs on a strand. When the caller is on one (an informer is), the
    // stream shares it: its reads then complete where the caller waits, with no hop
    // between strands (and so between threads) per read.
    const asio::any_io_executor caller = co_await asio::this_coro::executor;
    const asio::any_io_executor strand =
        caller.target<asio::strand<asio::any_io_executor>>() != nullptr
            ? caller
            : asio::make_strand(executor_);
    auto connected = co_await asio::co_spawn(strand, connect(strand), use_awaitable);
    if (!connected) co_return StreamResult(connected.error());
    Connection& conn = **connected;
    co_return co_await std::visit(
        [&](auto& stream) {
          return detail::open_stream_on(std::move(stream), std::move(conn.buffer), std::move(msg),
                                        timeouts);
        },
        conn.stream);
  }

  void close() override {
    std::vector<std::shared_ptr<Connection>> dropped;
    {
      const std::lock_guard lock(mutex_);
      closed_ = true;
      dropped.swap(idle_);
    }
    slots_.close();
  }

  Stats stats() const override {
    Stats s;
    s.connections_opened = opened_.load(std::memory_order_relaxed);
    s.requests = requests_.load(std::memory_order_relaxed);
    s.reused = reused_.load(std::memory_order_relaxed);
    s.retries = retries_.load(std::memory_order_relaxed);
    s.waiting = slots_.waiting();
    const std::lock_guard lock(mutex_);
    s.idle = idle_.size();
    return s;
  }

  const HttpEndpoint& endpoint() const override { return endpoint_; }

 private:
  struct SlotGuard {
    detail::AsyncSemaphore& slots;
    ~SlotGuard() { slots.release(); }
  };

  struct Outcome {
    Exchange ex;
    std::shared_ptr<Connection> conn;
  };

  // Runs on `strand`: connects first when `conn` is null, then one exchange.
  asio::awaitable<Outcome> exchange_on(asio::any_io_executor strand,
                                       std::shared_ptr<Connection> conn,
                                       const http::request<http::string_body>& msg,
                                       Duration timeout, bool head, BodySink* sink) {
    Outcome out;
    if (!conn) {
      auto connected = co_await connect(strand);
      if (!connected) {
        out.ex.ec = connected.error();
        co_return out;
      }
      conn = std::move(*connected);
    }
    out.ex = co_await std::visit(
        [&](auto& stream) {
          return exchange(stream, conn->watchdog, conn->buffer, msg, timeout, options_, head, sink);
        },
        conn->stream);
    out.conn = std::move(conn);
    co_return out;
  }

  bool is_closed() const {
    const std::lock_guard lock(mutex_);
    return closed_;
  }

  std::shared_ptr<Connection> take_idle() {
    const std::lock_guard lock(mutex_);
    const TimePoint now = std::chrono::steady_clock::now();
    while (!idle_.empty()) {
      std::shared_ptr<Connection> conn = std::move(idle_.back());  // most recent: likeliest alive
      idle_.pop_back();
      if (now - conn->idle_since < options_.idle_connection_ttl) return conn;
    }
    return nullptr;
  }

  void put_idle(std::shared_ptr<Connection> conn) {
    conn->idle_since = std::chrono::steady_clock::now();
    const std::lock_guard lock(mutex_);
    if (!closed_) idle_.push_back(std::move(conn));
  }

  asio::awaitable<boost::system::result<tcp::resolver::results_type>> resolve(
      const asio::any_io_executor& strand) {
    using Resolved = boost::system::result<tcp::resolver::results_type>;
    const std::string port = std::to_string(endpoint_.port);
    if (detail::is_ip_address(endpoint_.host)) {
      co_return tcp::resolver::results_type::create(
          tcp::endpoint(asio::ip::make_address(endpoint_.host), endpoint_.port), endpoint_.host,
          port);
    }
    using namespace asio::experimental::awaitable_operators;
    tcp::resolver resolver(strand);
    asio::steady_timer deadline(strand, options_.connect_timeout);
    auto outcome =
        co_await (resolver.async_resolve(endpoint_.host, port, as_tuple(use_awaitable)) ||
                  deadline.async_wait(as_tuple(use_awaitable)));
    if (outcome.index() == 1) co_return Resolved(error_code(Errc::resolve_timeout));
    auto [ec, results] = std::get<0>(std::move(outcome));
    if (ec) co_return Resolved(ec);
    co_return results;
  }

  // Runs on `strand`, which becomes the connection's strand.
  asio::awaitable<boost::system::result<std::shared_ptr<Connection>>> connect(
      asio::any_io_executor strand) {
    using Connected = boost::system::result<std::shared_ptr<Connection>>;
    auto resolved = co_await resolve(strand);
    if (!resolved) co_return Connected(resolved.error());

    auto conn = Connection::make(strand);
    auto& socket = std::get<ClientPlainStream>(conn->stream);
    conn->watchdog.set(options_.connect_timeout);
    auto [ec, ep] = co_await asio::async_connect(socket, *resolved, as_tuple(use_awaitable));
    if (ec) {
      conn->watchdog.clear();
      co_return Connected(
          detail::map_transport_error(timed(ec, conn->watchdog), Phase::connect, false));
    }
    socket.set_option(tcp::no_delay(true), ec);
    opened_.fetch_add(1, std::memory_order_relaxed);

    if (!endpoint_.tls) {
      conn->watchdog.clear();
      co_return conn;
    }

    ClientPlainStream connected = std::move(socket);
    auto& tls_stream = conn->stream.emplace<ClientTlsStream>(std::move(connected), *tls_);
    const bool verify = !options_.tls.insecure_skip_verify;
    if (auto prep =
            detail::prepare_client_connection(tls_stream.native_handle(), verify_name_, verify)) {
      conn->watchdog.clear();
      co_return Connected(prep);
    }
    conn->watchdog.set(options_.connect_timeout);
    auto [hec] = co_await tls_stream.async_handshake(as_tuple(use_awaitable));
    conn->watchdog.clear();
    if (hec) {
      error_code mapped =
          detail::map_transport_error(timed(hec, conn->watchdog), Phase::handshake, false);
      if (verify) mapped = detail::classify_handshake_error(tls_stream.native_handle(), mapped);
      log::debug(
          "http: TLS handshake failed",
          {{"host", endpoint_.host}, {"server_name", verify_name_}, {"error", mapped.message()}});
      co_return Connected(mapped);
    }
    co_return conn;
  }

  const asio::any_io_executor executor_;
  const HttpEndpoint endpoint_;
  const HttpClientOptions options_;
  const std::shared_ptr<asio::ssl::context> tls_;  // shared by all connections (thread-safe)
  const std::string verify_name_;
  const std::string authority_;
  detail::AsyncSemaphore slots_;  // one permit per allowed concurrent request

  mutable std::mutex mutex_;  // owns idle_ and closed_
  std::vector<std::shared_ptr<Connection>> idle_;
  bool closed_ = false;

  std::atomic<std::uint64_t> opened_{0};
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> reused_{0};
  std::atomic<std::uint64_t> retries_{0};
};

}  // namespace

asio::awaitable<boost::system::result<HttpResponse>> HttpClient::request_streamed(HttpRequest req,
                                                                                  BodySink& sink) {
  auto response = co_await request(std::move(req));
  if (response && response->status / 100 == 2) {
    const std::string body = std::move(response->body);
    response->body.clear();
    if (auto ec = sink.on_body(body)) co_return ec;
  }
  co_return response;
}

Result<HttpEndpoint> HttpEndpoint::parse(std::string_view url) {
  // Messages quote the URL redacted: a server URL may carry credentials.
  const std::string quoted = "server URL \"" + redact_url(url) + "\"";
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) {
    return make_error(quoted + " is not an absolute URL (expected https://host[:port][/path])");
  }
  HttpEndpoint out;
  const auto scheme = parsed->scheme();
  if (scheme == "https") {
    out.tls = true;
    out.port = 443;
  } else if (scheme == "http") {
    out.port = 80;
  } else {
    return make_error(quoted + ": scheme must be http or https");
  }
  if (parsed->host_type() == boost::urls::host_type::ipv6) {
    out.host = parsed->host_address();
  } else {
    out.host = parsed->host();
  }
  if (out.host.empty()) return make_error(quoted + ": no host");
  if (parsed->has_port()) {
    const auto port = parsed->port_number();
    if (port == 0) return make_error(quoted + ": port must be 1-65535");
    out.port = port;
  }
  std::string path(parsed->encoded_path());
  while (!path.empty() && path.back() == '/') path.pop_back();
  out.path_prefix = std::move(path);
  return out;
}

std::string HttpEndpoint::authority() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  std::string out = ipv6 ? "[" + host + "]" : host;
  if (port != (tls ? 443 : 80)) out += ":" + std::to_string(port);
  return out;
}

Result<std::shared_ptr<HttpClient>> HttpClient::create(asio::any_io_executor executor,
                                                       std::string_view base_url,
                                                       HttpClientOptions options) {
  auto endpoint = HttpEndpoint::parse(base_url);
  if (!endpoint) return endpoint.error();
  std::shared_ptr<asio::ssl::context> tls;
  if (endpoint->tls) {
    auto ctx = detail::make_client_tls_context(options.tls);
    if (!ctx) return ctx.error();
    tls = std::move(*ctx);
  }
  return std::shared_ptr<HttpClient>(std::make_shared<HttpClientImpl>(
      std::move(executor), std::move(*endpoint), std::move(options), std::move(tls)));
}

}  // namespace aop::net
