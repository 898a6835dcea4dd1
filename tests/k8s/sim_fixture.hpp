// A kube-sim child process for integration tests: started on a free loopback port,
// stopped (and killed if need be) when the fixture goes away, also if the test process
// dies (the child gets SIGKILL when its parent thread exits).
//
//   aop::testing::KubeSim sim({"--watch-history", "500"});
//   auto config = sim.client_config();          // for make_api_client
//   sim.set_faults(R"({"http_500": 0.2})");     // POST /admin/faults
//   auto stats = sim.stats();                   // GET /admin/stats
//
// It is one of the two backends of tests/k8s/cluster.hpp; use KubeSim directly only in
// tests that need kube-sim's own features (fault injection, admin endpoints).
// Link the `aop_test_sim` library. The binary is <build>/bin/kube-sim; a missing binary
// is reported with what to build. Create the fixture on the test's main thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "k8s/kubeconfig.hpp"
#include "tests/k8s/child_process.hpp"
#include "tests/k8s/cluster.hpp"

namespace aop::testing {

using SimResponse = HttpReply;

class KubeSim final : public Cluster {
 public:
  // Starts kube-sim with `--listen 127.0.0.1:0 --kubeconfig-out <tmp>` plus `args`, and
  // waits (up to 60 s) for its "kube-sim listening on <URL>" line. With --rbac and no
  // --token, an administrator token is added (in the kubeconfig). Throws
  // std::runtime_error with the reason (and the end of its log) on failure.
  explicit KubeSim(std::vector<std::string> args = {});
  ~KubeSim() override;
  KubeSim(const KubeSim&) = delete;
  KubeSim& operator=(const KubeSim&) = delete;

  // The path of the kube-sim binary this build uses.
  static std::string binary_path();

  Backend backend() const override { return Backend::kube_sim; }
  const std::string& url() const override { return url_; }
  const std::string& kubeconfig_path() const { return kubeconfig_; }
  // The log (kube-sim's stderr).
  const std::string& log_path() const { return process_.log_path(); }
  std::string log_tail(std::size_t bytes = 4000) const { return process_.log_tail(bytes); }
  pid_t pid() const { return process_.pid(); }

  // The kubeconfig kube-sim wrote, loaded.
  k8s::ClientConfig client_config() const override;

  HttpReply request(std::string_view method, std::string_view path, std::string body = {},
                    std::string_view content_type = "application/json") const override;
  // GET /admin/access: what kube-sim recorded, reads by the administrator left out as the
  // real server's audit policy does (control_plane.cpp).
  std::vector<AccessRecord> requests(std::string_view user_agent = {}) const override;
  void reset_stats() override;  // POST /admin/reset-stats

  boost::json::value stats() const;                   // GET /admin/stats
  void set_faults(std::string_view json_body) const;  // POST /admin/faults (throws unless 2xx)
  void clear_faults() const;                          // {"reset": true}

  // Writes (create/update/patch/delete) the server recorded for a User-Agent.
  std::uint64_t writes_by(std::string_view user_agent) const override;

  // Stops the server: SIGTERM, then SIGKILL after 10 s. Idempotent.
  void stop();

 private:
  std::string dir_;
  std::string kubeconfig_;
  std::string url_;
  std::string token_;
  ChildProcess process_;
};

}  // namespace aop::testing
