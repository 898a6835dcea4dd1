// A real control plane for integration tests, started and stopped by the test process
// (the envtest convention of controller-runtime): etcd on free loopback ports with a
// temporary data directory, and kube-apiserver serving HTTPS with a CA and certificate
// made at start-up, a static token file (one cluster-admin token), ServiceAccount
// signing keys, RBAC authorization and an audit log (which is how tests count writes
// and see which verbs a client used). There is no controller-manager, scheduler or
// kubelet: no pods run, workload status changes only when a test writes it, and
// neither garbage collection nor namespace deletion happens.
//
// Where the binaries come from, in this order:
//   KUBEBUILDER_ASSETS=DIR       DIR/kube-apiserver and DIR/etcd (what `setup-envtest`
//                                downloads for Go operators)
//   AOP_KUBE_APISERVER=PATH      that kube-apiserver; etcd from PATH, else /usr/bin/etcd
//                                (Debian: apt-get install etcd-server)
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/k8s/child_process.hpp"
#include "tests/k8s/cluster.hpp"
#include "tests/k8s/http_request.hpp"

namespace aop::testing {

struct ControlPlaneBinaries {
  std::string kube_apiserver;
  std::string etcd;
};

// The binaries the environment names. `error` is set when it names none (`requested`
// false: the real-server tests cannot run here; say so and skip) or names something
// unusable (`requested` true: a configuration error to fix).
struct ControlPlaneLookup {
  std::optional<ControlPlaneBinaries> binaries;
  bool requested = false;
  std::string error;
};
ControlPlaneLookup find_control_plane_binaries();

// How to provide the binaries, for messages.
extern const char* const kControlPlaneHint;

// The server's audit log, read incrementally (JSON lines).
class AuditLog {
 public:
  explicit AuditLog(std::string path) : path_(std::move(path)) {}
  // Every record so far (reads what was appended since the last call).
  std::size_t size();
  std::vector<AccessRecord> since(std::size_t index, std::string_view user_agent);

 private:
  void read_new();  // needs mutex_

  std::string path_;
  std::mutex mutex_;  // owns everything below
  std::uint64_t offset_ = 0;
  std::string partial_;
  std::vector<AccessRecord> records_;
  std::set<std::string> started_;  // audit IDs of watches already recorded at ResponseStarted
};

class ControlPlane {
 public:
  // Starts etcd and kube-apiserver and waits until /readyz answers 200. Throws
  // std::runtime_error with the reason and the end of the failing process's log.
  explicit ControlPlane(const ControlPlaneBinaries& binaries);
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // The process's control plane, started on first use; stop_shared() ends it (the main()
  // of aop_test_cluster_main does at exit).
  static ControlPlane& shared();
  static void stop_shared();

  const std::string& url() const { return url_; }
  const std::string& ca_pem() const { return ca_pem_; }
  const std::string& admin_token() const { return admin_token_; }
  AuditLog& audit() { return *audit_; }
  // The administrator's requests, over kept-alive connections.
  BlockingSession& session() { return *session_; }
  std::chrono::milliseconds start_time() const { return start_time_; }

  // Creates the objects of these files or directories unless this control plane has done
  // so already, and waits for CRDs among them to be Established and served.
  void preload(const std::vector<std::string>& paths);

  void stop();

 private:
  void start_etcd(const ControlPlaneBinaries& binaries);
  void start_apiserver(const ControlPlaneBinaries& binaries);
  void wait_ready(std::chrono::steady_clock::time_point deadline);

  std::string dir_;
  std::string url_;
  std::string ca_pem_;
  std::string admin_token_;
  std::string etcd_url_;
  ChildProcess etcd_;
  ChildProcess apiserver_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<BlockingSession> session_;
  std::chrono::milliseconds start_time_{0};
  std::mutex preload_mutex_;         // owns preloaded_
  std::set<std::string> preloaded_;  // paths already created
  bool keep_dir_ = false;
};

// One test's view of the shared control plane: its requests() start where the audit log
// was when the test began.
std::unique_ptr<Cluster> attach_control_plane(const ClusterOptions& options);

}  // namespace aop::testing
