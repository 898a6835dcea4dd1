// A server connection: TLS handshake, the keep-alive request loop, handler dispatch,
// whole and chunked streaming responses, client-disconnect detection while
// streaming, and stopping. Everything here runs on the connection's strand (the
// executor of its socket), which owns all the session's state.
#include "net/detail/server_session.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "net/detail/http_io.hpp"
#include "net/detail/tls_context.hpp"
#include "net/error.hpp"
#include "net/log.hpp"

namespace aop::net::detail {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::as_tuple;
using asio::use_awaitable;
using boost::system::error_code;

// A TLS peer that never answers our close_notify must not hold the session long.
constexpr Duration kTlsShutdownTimeout = std::chrono::seconds(2);

template <class Stream>
constexpr bool kIsTls = std::is_same_v<Stream, TlsStream>;

std::string endpoint_text(const asio::ip::tcp::endpoint& ep) {
  const auto addr = ep.address();
  return (addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string()) + ":" +
         std::to_string(ep.port());
}

template <class Stream>
class SessionImpl final : public Session,
                          public ResponseWriter,
                          public std::enable_shared_from_this<SessionImpl<Stream>> {
 public:
  SessionImpl(Stream stream, std::uint64_t id, std::shared_ptr<ServerShared> shared,
              std::string peer)
      : stream_(std::move(stream)),
        id_(id),
        shared_(std::move(shared)),
        peer_(std::move(peer)),
        wake_timer_(stream_.get_executor()) {}

  asio::any_io_executor executor() { return stream_.get_executor(); }

  asio::awaitable<void> run() {
    auto self = this->shared_from_this();
    if (co_await handshake()) co_await serve_requests();
    co_await close_gracefully();
    close_transport(stream_);
    if (shared_->on_session_end) shared_->on_session_end(id_);
  }

  void begin_stop() override {
    asio::post(executor(), [self = this->shared_from_this()] {
      self->stopping_ = true;
      if (self->reading_request_) close_transport(self->stream_);
      self->wake_timer_.cancel();
    });
  }

  void force_close() override {
    asio::post(executor(), [self = this->shared_from_this()] {
      self->stopping_ = true;
      self->broken_ = true;
      close_transport(self->stream_);
      self->wake_timer_.cancel();
    });
  }

  // ResponseWriter

  asio::awaitable<error_code> respond(HttpResponse response) override {
    if (responded_ || streaming_) co_return Errc::response_already_sent;
    if (broken_) co_return Errc::client_gone;
    responded_ = true;
    http::response<http::string_body> res{static_cast<http::status>(response.status), 11};
    for (const auto& [name, value] : response.headers) res.insert(name, value);
    res.keep_alive(keep_alive_ && !stopping_);
    if (request_.method == Method::head) {
      res.content_length(response.body.size());  // what a GET would send, no body
    } else {
      res.body() = std::move(response.body);
      res.prepare_payload();
    }
    set_deadline(stream_, shared_->options.write_timeout);
    auto [ec, n] = co_await http::async_write(stream_, res, as_tuple(use_awaitable));
    co_return write_result(ec);
  }

  asio::awaitable<error_code> start_stream(int status, Headers headers) override {
    if (responded_ || streaming_) co_return Errc::response_already_sent;
    if (broken_) co_return Errc::client_gone;
    streaming_ = true;
    http::response<http::empty_body> res{static_cast<http::status>(status), 11};
    for (const auto& [name, value] : headers) res.insert(name, value);
    res.chunked(true);
    res.keep_alive(false);  // a stream is the connection's last response
    http::response_serializer<http::empty_body> serializer{res};
    set_deadline(stream_, shared_->options.write_timeout);
    auto [ec, n] = co_await http::async_write_header(stream_, serializer, as_tuple(use_awaitable));
    if (auto failed = write_result(ec)) co_return failed;
    clear_deadline(stream_);  // the disconnect probe below must not inherit a deadline
    watch_for_disconnect();
    co_return error_code{};
  }

  asio::awaitable<error_code> write_chunk(std::string_view data) override {
    if (!streaming_ || stream_ended_)
      co_return make_error_code(boost::system::errc::operation_not_permitted);
    if (client_gone_ || broken_) co_return Errc::client_gone;
    if (data.empty()) co_return error_code{};  // an empty chunk would end the stream
    set_deadline(stream_, shared_->options.write_timeout);
    auto [ec, n] = co_await asio::async_write(stream_, http::make_chunk(asio::buffer(data)),
                                              as_tuple(use_awaitable));
    co_return write_result(ec);
  }

  asio::awaitable<error_code> end_stream() override {
    if (!streaming_ || stream_ended_)
      co_return make_error_code(boost::system::errc::operation_not_permitted);
    stream_ended_ = true;
    if (client_gone_ || broken_) co_return Errc::client_gone;
    set_deadline(stream_, shared_->options.write_timeout);
    auto [ec, n] =
        co_await asio::async_write(stream_, http::make_chunk_last(), as_tuple(use_awaitable));
    co_return write_result(ec);
  }

  asio::awaitable<WakeReason> wait(Duration timeout) override {
    if (auto reason = wake_reason()) co_return *reason;
    wake_timer_.expires_after(timeout);
    co_await wake_timer_.async_wait(as_tuple(use_awaitable));
    co_return wake_reason().value_or(WakeReason::timeout);
  }

  std::function<void()> notifier() override {
    // Holds no executor: the function may outlive the io_context, an executor may not.
    return [weak = this->weak_from_this()] {
      auto alive = weak.lock();
      if (!alive) return;
      const auto ex = alive->executor();
      asio::post(ex, [self = std::move(alive)] {
        self->notified_ = true;
        self->wake_timer_.cancel();
      });
    };
  }

  bool client_gone() const override { return client_gone_; }
  bool stopping() const override { return stopping_; }

 private:
  std::optional<WakeReason> wake_reason() {
    if (notified_) {
      notified_ = false;
      return WakeReason::notified;
    }
    if (client_gone_ || broken_) return WakeReason::client_gone;
    if (stopping_ && !stop_reported_) {
      stop_reported_ = true;  // once: a handler finishing its work may wait again
      return WakeReason::stopping;
    }
    return std::nullopt;
  }

  error_code write_result(error_code ec) {
    if (!ec) return ec;
    broken_ = true;
    return ec == boost::beast::error::timeout ? error_code(Errc::write_timeout)
                                              : error_code(Errc::client_gone);
  }

  // While a stream is open the client sends nothing; a completed read means it closed
  // the connection (or sent something we ignore, then we keep watching).
  void watch_for_disconnect() {
    stream_.async_read_some(asio::buffer(probe_),
                            [self = this->shared_from_this()](error_code ec, std::size_t) {
                              if (!ec && !self->broken_) {
                                clear_deadline(self->stream_);
                                self->watch_for_disconnect();
                                return;
                              }
                              self->client_gone_ = true;
                              self->wake_timer_.cancel();
                            });
  }

  asio::awaitable<bool> handshake() {
    if constexpr (kIsTls<Stream>) {
      set_deadline(stream_, shared_->options.tls_handshake_timeout);
      auto [ec] =
          co_await stream_.async_handshake(asio::ssl::stream_base::server, as_tuple(use_awaitable));
      if (ec) {
        log::debug("http server: TLS handshake failed", {{"peer", peer_}, {"error", ec.message()}});
        broken_ = true;
        co_return false;
      }
      const PeerCertificate cert = peer_certificate(stream_.native_handle());
      client_cert_ = cert.present;
      client_cn_ = cert.common_name;
      client_orgs_ = cert.organizations;
    }
    co_return true;
  }

  asio::awaitable<void> serve_requests() {
    const HttpServerOptions& options = shared_->options;
    while (!stopping_ && !broken_) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(options.body_limit);
      parser.header_limit(options.header_limit);
      set_deadline(stream_, options.keep_alive_timeout);
      reading_request_ = true;
      auto [ec, n] = co_await http::async_read(stream_, buffer_, parser, as_tuple(use_awaitable));
      reading_request_ = false;
      if (ec) {
        co_await reject_bad_request(ec);
        co_return;
      }
      shared_->requests.fetch_add(1, std::memory_order_relaxed);
      // Stored before testing: GCC 12 miscompiles `if (!co_await f())` (README).
      const bool keep = co_await handle(parser.release());
      if (!keep) co_return;
    }
  }

  // Answers a request we could not read, when the client can still hear it.
  asio::awaitable<void> reject_bad_request(error_code ec) {
    keep_alive_ = false;
    if (ec == http::error::body_limit) {
      co_await send_plain(
          413, "request body exceeds " + std::to_string(shared_->options.body_limit) + " bytes\n");
    } else if (ec == http::error::header_limit) {
      co_await send_plain(431, "request header too large\n");
    } else if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
               ec != http::error::end_of_stream && ec != http::error::partial_message) {
      co_await send_plain(400, "malformed HTTP request: " + ec.message() + "\n");
    }
  }

  asio::awaitable<error_code> send_plain(int status, std::string text) {
    HttpResponse res;
    res.status = status;
    res.headers.set("Content-Type", "text/plain; charset=utf-8");
    res.body = std::move(text);
    co_return co_await respond(std::move(res));
  }

  void reset_request_state() { responded_ = streaming_ = stream_ended_ = notified_ = false; }

  // Runs one request through the router. Returns whether to keep the connection.
  asio::awaitable<bool> handle(http::request<http::string_body> msg) {
    reset_request_state();
    keep_alive_ = msg.keep_alive();
    const auto method = parse_method(msg.method_string());
    if (!method) {
      keep_alive_ = false;
      co_await send_plain(501, "method not implemented\n");
      co_return false;
    }
    request_ = make_request(*method, std::move(msg));
    const Router::Match match = shared_->router.match(request_.method, request_.path);
    if (match.handler == nullptr) {
      HttpResponse res;
      res.status = match.status;
      res.headers.set("Content-Type", "text/plain; charset=utf-8");
      if (!match.allow.empty()) res.headers.set("Allow", match.allow);
      res.body = match.status == 405 ? "method not allowed\n" : "not found\n";
      co_await respond(std::move(res));
    } else {
      co_await run_handler(*match.handler);
    }
    co_return keep_alive_ && !streaming_ && !broken_ && !stopping_;
  }

  asio::awaitable<void> run_handler(const Handler& handler) {
    bool threw = false;
    try {
      co_await handler(request_, *this);
    } catch (const std::exception& e) {
      // A handler bug: answer 500 rather than take the server down.
      log::error(
          "http server: handler threw",
          {{"path", request_.path}, {"method", method_name(request_.method)}, {"error", e.what()}});
      threw = true;
    }
    if (threw) keep_alive_ = false;
    if (!responded_ && !streaming_) {
      if (!threw) {
        log::error("http server: handler returned without a response",
                   {{"path", request_.path}, {"method", method_name(request_.method)}});
      }
      co_await send_plain(500, "internal error\n");
    } else if (streaming_ && !stream_ended_) {
      co_await end_stream();
    }
  }

  ServerRequest make_request(Method method, http::request<http::string_body> msg) {
    ServerRequest req;
    req.method = method;
    req.target = std::string(msg.target());
    const auto q = req.target.find('?');
    req.path = req.target.substr(0, q);
    if (q != std::string::npos) req.query = req.target.substr(q + 1);
    req.headers = to_headers(msg.base());
    req.body = std::move(msg.body());
    req.peer = peer_;
    req.tls = kIsTls<Stream>;
    req.client_cert = client_cert_;
    req.client_cert_common_name = client_cn_;
    req.client_cert_organizations = client_orgs_;
    return req;
  }

  asio::awaitable<void> close_gracefully() {
    if (broken_ || client_gone_) co_return;
    if constexpr (kIsTls<Stream>) {
      if (streaming_) co_return;  // a read (the disconnect probe) may still be pending
      set_deadline(stream_, kTlsShutdownTimeout);
      co_await stream_.async_shutdown(as_tuple(use_awaitable));
    } else {
      error_code ec;
      stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    }
  }

  Stream stream_;
  const std::uint64_t id_;
  const std::shared_ptr<ServerShared> shared_;
  const std::string peer_;
  // Everything below is owned by the session's strand (executor()).
  boost::beast::flat_buffer buffer_;
  asio::steady_timer wake_timer_;
  ServerRequest request_;
  char probe_[64];
  bool client_cert_ = false;
  std::string client_cn_;
  std::vector<std::string> client_orgs_;
  bool reading_request_ = false;
  bool keep_alive_ = true;
  bool responded_ = false;
  bool streaming_ = false;
  bool stream_ended_ = false;
  bool notified_ = false;
  bool client_gone_ = false;
  bool broken_ = false;  // a write failed or the connection was force-closed
  bool stopping_ = false;
  bool stop_reported_ = false;
};

template <class Stream>
std::shared_ptr<Session> spawn(std::shared_ptr<SessionImpl<Stream>> session) {
  asio::co_spawn(session->executor(), session->run(), [](const std::exception_ptr& e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      log::error("http server: session failed", {{"error", ex.what()}});
    }
  });
  return session;
}

}  // namespace

std::shared_ptr<Session> launch_session(asio::ip::tcp::socket socket, std::uint64_t id,
                                        std::shared_ptr<ServerShared> shared) {
  error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  std::string peer = ec ? std::string("unknown") : endpoint_text(remote);
  socket.set_option(asio::ip::tcp::no_delay(true), ec);
  if (shared->tls) {
    TlsStream stream(PlainStream(std::move(socket)), *shared->tls);
    return spawn(std::make_shared<SessionImpl<TlsStream>>(std::move(stream), id, std::move(shared),
                                                          std::move(peer)));
  }
  return spawn(std::make_shared<SessionImpl<PlainStream>>(PlainStream(std::move(socket)), id,
                                                          std::move(shared), std::move(peer)));
}

}  // namespace aop::net::detail
