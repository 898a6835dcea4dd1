// Internal: one server connection (a "session") and what it shares with the server.
// Included only by net/http_server.cpp and net/detail/server_session.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "net/http_server.hpp"

namespace aop::net::detail {

// Immutable after the server starts, except the counters.
struct ServerShared {
  HttpServerOptions options;
  Router router;
  std::shared_ptr<boost::asio::ssl::context> tls;  // null for plain TCP
  std::atomic<std::uint64_t> requests{0};
  // Called once per session when it has closed its connection (from its strand).
  std::function<void(std::uint64_t id)> on_session_end;
};

class Session {
 public:
  virtual ~Session() = default;
  // Server is stopping: close if idle between requests, otherwise let the handler
  // finish (wait() returns `stopping`) and close after the response.
  virtual void begin_stop() = 0;
  // Grace period over: close the connection now.
  virtual void force_close() = 0;
};

// Starts serving an accepted connection on the socket's executor (a strand).
std::shared_ptr<Session> launch_session(boost::asio::ip::tcp::socket socket, std::uint64_t id,
                                        std::shared_ptr<ServerShared> shared);

}  // namespace aop::net::detail
