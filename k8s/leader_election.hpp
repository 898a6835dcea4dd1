// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics:
// lease duration 15 s, renew deadline 10 s, retry period 2 s. Expiry is judged from
// when *this process* observed the lease's last change (not from timestamps written by
// other clocks), so clock skew between replicas cannot cause two leaders. A leader that
// cannot renew within the renew deadline steps down at once: on_stopped_leading runs
// before any further write could be issued. Graceful shutdown releases the lease
// (holder cleared, lease duration 1 s) so a standby takes over without waiting.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "k8s/api_client.hpp"

namespace aop::k8s {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per process: hostname + random suffix
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  bool release_on_cancel = true;
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& leader)> on_new_leader;
};

class LeaderElector {
 public:
  virtual ~LeaderElector() = default;
  // Runs until stop(); acquires, renews, and on losing the lease tries to acquire again.
  virtual boost::asio::awaitable<void> run() = 0;
  // Stops; releases the lease if held and release_on_cancel.
  virtual boost::asio::awaitable<void> stop() = 0;
  virtual bool is_leader() const = 0;
};

std::unique_ptr<LeaderElector> make_leader_elector(boost::asio::any_io_executor executor,
                                                   ApiClient& client, LeaderElectionConfig config);

}  // namespace aop::k8s
