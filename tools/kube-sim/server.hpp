// kube-sim's HTTP edge: serves an ApiServer over net::HttpServer (plain or TLS), turns
// watch responses into chunked streams, runs the periodic tick (bookmarks, watch
// timeouts) and writes the kubeconfig. Everything runs on one io_context thread, which
// is the single owner of the ApiServer (a single-threaded core with cheap fan-out beat a
// thread pool on two cores: see bench/RESULTS.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "net/http_server.hpp"
#include "net/result.hpp"
#include "tools/kube-sim/api.hpp"

namespace aop::sim {

struct SimServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  bool tls = false;
  std::string kubeconfig_out;  // written once listening ("" = none)
  // stop(): open watches keep streaming this long (kube-apiserver's HTTP server waits up
  // to a minute for them on SIGTERM), then end.
  std::chrono::milliseconds shutdown_grace{60'000};
  ServerOptions api;
};

class SimServer {
 public:
  static Result<std::unique_ptr<SimServer>> create(boost::asio::any_io_executor executor,
                                                   SimServerOptions options);
  ~SimServer();

  // Starts accepting and the periodic tick.
  void start();
  // "http://127.0.0.1:port" or "https://..."
  std::string url() const;
  std::uint16_t port() const;
  const std::string& ca_pem() const { return ca_pem_; }
  ApiServer& api() { return *api_; }
  // Kubeconfig text for clients of this server.
  std::string kubeconfig() const;
  Result<void> write_kubeconfig(const std::string& path) const;

  boost::asio::awaitable<void> stop();

 private:
  SimServer(boost::asio::any_io_executor executor, SimServerOptions options);
  boost::asio::awaitable<void> serve(const net::ServerRequest& req, net::ResponseWriter& w);
  boost::asio::awaitable<void> tick_loop();

  boost::asio::any_io_executor executor_;
  SimServerOptions options_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<net::HttpServer> http_;
  std::string ca_pem_;
  std::shared_ptr<bool> running_;
  std::chrono::steady_clock::time_point stop_deadline_;  // set by stop()
};

}  // namespace aop::sim
