// The HTTP server: routing, listening, accepting, the session registry and stopping.
// Per-connection work lives in detail/server_session.cpp.
#include "net/http_server.hpp"

#include <unordered_map>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/detail/server_session.hpp"
#include "net/detail/tls_context.hpp"
#include "net/log.hpp"

namespace aop::net {

namespace asio = boost::asio;
using asio::as_tuple;
using asio::use_awaitable;
using boost::system::error_code;

// After the grace period, sessions are closed; wait this long for them to unwind.
constexpr Duration kForcedCloseWait = std::chrono::seconds(2);
// Accept failing (e.g. out of file descriptors): retry after a pause, not in a spin.
constexpr Duration kAcceptErrorPause = std::chrono::milliseconds(100);

Router& Router::add(Method method, std::string path, Handler handler) {
  exact_[std::move(path)][method] = std::move(handler);
  return *this;
}

Router& Router::add_prefix(std::string prefix, Handler handler) {
  prefixes_.emplace_back(std::move(prefix), std::move(handler));
  std::stable_sort(prefixes_.begin(), prefixes_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  return *this;
}

Router& Router::set_fallback(Handler handler) {
  fallback_ = std::move(handler);
  return *this;
}

Router::Match Router::match(Method method, std::string_view path) const {
  Match m;
  if (const auto it = exact_.find(path); it != exact_.end()) {
    if (const auto h = it->second.find(method); h != it->second.end()) {
      m.handler = &h->second;
      return m;
    }
    if (method == Method::head) {
      if (const auto get = it->second.find(Method::get); get != it->second.end()) {
        m.handler = &get->second;  // HEAD is GET without the body
        return m;
      }
    }
    m.status = 405;
    for (const auto& [allowed, handler] : it->second) {
      if (!m.allow.empty()) m.allow += ", ";
      m.allow += method_name(allowed);
    }
    return m;
  }
  for (const auto& [prefix, handler] : prefixes_) {
    if (path.substr(0, prefix.size()) == prefix) {
      m.handler = &handler;
      return m;
    }
  }
  if (fallback_) m.handler = &fallback_;
  return m;
}

class HttpServer::Impl : public std::enable_shared_from_this<HttpServer::Impl> {
 public:
  Impl(const asio::any_io_executor& executor, std::shared_ptr<detail::ServerShared> shared)
      : executor_(executor),
        strand_(asio::make_strand(executor)),
        acceptor_(strand_),
        stop_timer_(strand_),
        shared_(std::move(shared)) {}

  Result<void> listen() {
    const auto& options = shared_->options;
    error_code ec;
    // "" means every interface (as in Go's ":8080"); "localhost" the IPv4 loopback.
    const std::string host = options.host.empty()          ? "0.0.0.0"
                             : options.host == "localhost" ? "127.0.0.1"
                                                           : options.host;
    const auto address = asio::ip::make_address(host, ec);
    const std::string where = options.host + ":" + std::to_string(options.port);
    if (ec) return make_error("listen address " + where + ": not an IP address");
    const asio::ip::tcp::endpoint endpoint(address, options.port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return make_error("listen on " + where + ": " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    return {};
  }

  void start() { asio::co_spawn(strand_, accept_loop(shared_from_this()), asio::detached); }

  asio::awaitable<void> stop(Duration grace) {
    co_await asio::co_spawn(strand_, stop_on_strand(shared_from_this(), grace), use_awaitable);
  }

  // Called by the HttpServer destructor: no waiting.
  void close_now() {
    asio::post(strand_, [self = shared_from_this()] {
      self->stopping_ = true;
      error_code ec;
      self->acceptor_.close(ec);
      for (auto& [id, weak] : self->sessions_) {
        if (auto s = weak.lock()) s->force_close();
      }
    });
  }

  void session_ended(std::uint64_t id) {
    asio::post(strand_, [self = shared_from_this(), id] {
      self->sessions_.erase(id);
      self->active_.fetch_sub(1, std::memory_order_relaxed);
      if (self->stopping_ && self->sessions_.empty()) self->stop_timer_.cancel();
    });
  }

  std::uint16_t port() const { return port_; }

  Stats stats() const {
    Stats s;
    s.accepted = accepted_.load(std::memory_order_relaxed);
    s.requests = shared_->requests.load(std::memory_order_relaxed);
    s.active = active_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  static asio::awaitable<void> accept_loop(std::shared_ptr<Impl> self) {
    for (;;) {
      // Each connection gets its own strand: its session state needs no locks.
      asio::any_io_executor connection_strand = asio::make_strand(self->executor_);
      auto [ec, socket] =
          co_await self->acceptor_.async_accept(connection_strand, as_tuple(use_awaitable));
      if (self->stopping_) co_return;
      if (ec) {
        if (ec == asio::error::operation_aborted) co_return;
        log::warn("http server: accept failed", {{"error", ec.message()}});
        asio::steady_timer pause(self->strand_, kAcceptErrorPause);
        co_await pause.async_wait(as_tuple(use_awaitable));
        continue;
      }
      self->accepted_.fetch_add(1, std::memory_order_relaxed);
      self->active_.fetch_add(1, std::memory_order_relaxed);
      const std::uint64_t id = self->next_id_++;
      self->sessions_.emplace(id, detail::launch_session(std::move(socket), id, self->shared_));
    }
  }

  static asio::awaitable<void> stop_on_strand(std::shared_ptr<Impl> self, Duration grace) {
    self->stopping_ = true;
    error_code ec;
    self->acceptor_.close(ec);
    for (auto& [id, weak] : self->sessions_) {
      if (auto s = weak.lock()) s->begin_stop();
    }
    co_await self->wait_for_sessions(grace);
    if (self->sessions_.empty()) co_return;
    log::warn("http server: closing connections still busy after the grace period",
              {{"connections", self->sessions_.size()}});
    for (auto& [id, weak] : self->sessions_) {
      if (auto s = weak.lock()) s->force_close();
    }
    co_await self->wait_for_sessions(kForcedCloseWait);
  }

  // Returns when no session is left (session_ended cancels the timer) or at the
  // deadline.
  asio::awaitable<void> wait_for_sessions(Duration limit) {
    const TimePoint deadline = std::chrono::steady_clock::now() + limit;
    while (!sessions_.empty() && std::chrono::steady_clock::now() < deadline) {
      stop_timer_.expires_at(deadline);
      co_await stop_timer_.async_wait(as_tuple(use_awaitable));
    }
  }

  const asio::any_io_executor executor_;
  asio::strand<asio::any_io_executor> strand_;
  // Owned by strand_:
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer stop_timer_;
  std::unordered_map<std::uint64_t, std::weak_ptr<detail::Session>> sessions_;
  std::uint64_t next_id_ = 1;
  bool stopping_ = false;
  // Shared, immutable after create():
  const std::shared_ptr<detail::ServerShared> shared_;
  std::uint16_t port_ = 0;
  std::atomic<std::uint64_t> accepted_{0};
  std::atomic<std::size_t> active_{0};
};

HttpServer::HttpServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  if (impl_) impl_->close_now();
}

Result<std::unique_ptr<HttpServer>> HttpServer::create(asio::any_io_executor executor,
                                                       HttpServerOptions options, Router router) {
  auto shared = std::make_shared<detail::ServerShared>();
  if (options.tls) {
    auto ctx = detail::make_server_tls_context(*options.tls);
    if (!ctx) return ctx.error();
    shared->tls = std::move(*ctx);
  }
  shared->options = std::move(options);
  shared->router = std::move(router);
  auto impl = std::make_shared<Impl>(std::move(executor), shared);
  std::weak_ptr<Impl> weak = impl;
  shared->on_session_end = [weak](std::uint64_t id) {
    if (auto self = weak.lock()) self->session_ended(id);
  };
  if (auto listening = impl->listen(); !listening) return listening.error();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

void HttpServer::start() {
  impl_->start();
}

std::uint16_t HttpServer::port() const {
  return impl_->port();
}

asio::awaitable<void> HttpServer::stop(Duration grace) {
  co_await impl_->stop(grace);
}

HttpServer::Stats HttpServer::stats() const {
  return impl_->stats();
}

}  // namespace aop::net
