// Liveness, readiness and metrics endpoints.
//
//   /healthz  200 while the process is alive and its event loop is responsive: a
//             heartbeat timer must have ticked recently (a thread stuck in a reconcile
//             does not stop the other threads from answering, so answering alone would
//             prove little).
//   /readyz   200 when every readiness check passes (caches synced; with leader
//             election a synced standby is ready too, so a rolling update can proceed);
//             the body lists each check, `?verbose` or not.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "net/clock.hpp"
#include "net/http_server.hpp"
#include "net/result.hpp"

namespace aop::app {

// "host:port", ":port" (all interfaces), "[v6]:port". Port 0 picks a free port.
struct BindAddress {
  std::string host;
  std::uint16_t port = 0;
};
Result<BindAddress> parse_bind_address(std::string_view text);

class HealthState {
 public:
  explicit HealthState(const net::Clock& clock = net::steady_clock()) : clock_(clock) {}

  // A named readiness check; `check` returns "" when ready, else why not.
  void add_readiness_check(std::string name, std::function<std::string()> check);
  // Records a heartbeat (called by a timer on the event loop).
  void heartbeat();
  // "" when alive, else why not.
  std::string liveness(net::Duration max_silence) const;
  // One line per check ("[+]name ok" / "[-]name: reason") and whether all passed.
  std::pair<bool, std::string> readiness() const;

 private:
  const net::Clock& clock_;
  std::atomic<net::TimePoint::rep> last_heartbeat_{0};
  mutable std::mutex mutex_;  // owns checks_
  std::vector<std::pair<std::string, std::function<std::string()>>> checks_;
};

// A plain-text response that no cache keeps (probes and their refusals).
net::HttpResponse text_response(int status, std::string body);

// Routes for the health server (the metrics server's are in metrics_server.hpp).
net::Router health_routes(std::shared_ptr<HealthState> state);

// Ticks state->heartbeat() every `period` until the executor stops.
boost::asio::awaitable<void> run_heartbeat(std::shared_ptr<HealthState> state,
                                           net::Duration period);

}  // namespace aop::app
