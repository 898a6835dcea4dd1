// The API server an integration test runs against, whichever it is: kube-sim (the
// default; one per test, started on a free loopback port) or a real kube-apiserver with
// etcd (the envtest convention: one control plane per test process, shared by its tests,
// which keep apart by using their own namespaces). The same test cases run on both:
//
//   auto cluster = aop::testing::start_cluster({.crd_dirs = {crd_dir()}});
//   auto client = k8s::make_api_client(exec, cluster->client_config(), options);
//   ... cluster->writes_by("my-user-agent") ...
//
// The backend is chosen by the environment: AOP_TEST_BACKEND=kube-apiserver selects the
// real server (tests/CMakeLists.txt registers those runs with the label integration-real),
// found through KUBEBUILDER_ASSETS or AOP_KUBE_APISERVER (control_plane.hpp). Tests that
// need kube-sim's own features (fault injection, its admin endpoints) live in test suites
// whose names end in KubeSimOnly; the real-server runs leave them out.
//
// Link `aop_test_sim`; integration test binaries use the main() of `aop_test_cluster_main`,
// which reports a real-server run that cannot happen as skipped (exit status 77) and stops
// the shared control plane at exit.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "k8s/kubeconfig.hpp"
#include "k8s/resource.hpp"

namespace aop::testing {

// The kind the k8s/ integration tests write and watch most.
inline const k8s::GroupVersionKind kConfigMap{"", "v1", "ConfigMap"};

enum class Backend { kube_sim, kube_apiserver };

std::string_view backend_name(Backend b);
// AOP_TEST_BACKEND: unset or "kube-sim" → kube-sim; "kube-apiserver" → the real server.
// Anything else is a start-up error (thrown).
Backend selected_backend();

struct HttpReply {
  int status = 0;
  std::string body;
};

// One request as the server recorded it (the real server's audit log, kube-sim's access
// log). Reads (get, list, watch) by the administrator are not recorded.
struct AccessRecord {
  std::string user;         // authenticated user, e.g. system:serviceaccount:ns:name
  std::string user_agent;   // the User-Agent header
  std::string verb;         // get list watch create update patch delete deletecollection
  std::string group;        // API group, "" for the core group
  std::string resource;     // plural, e.g. statefulsets
  std::string subresource;  // status, token, ... ("" for the main resource)
  std::string ns;
  int code = 0;         // HTTP status of the response (a watch: of its start)
  bool denied = false;  // refused by authorization (RBAC); other 403s (quota) are not

  // "create apps/statefulsets", "update monitoring.grafana.com/grafanaagents/status".
  std::string verb_and_resource() const;
};

inline constexpr bool is_write_verb(std::string_view verb) {
  return verb == "create" || verb == "update" || verb == "patch" || verb == "delete" ||
         verb == "deletecollection";
}

struct ClusterOptions {
  // YAML files or directories of CRDs (and other objects) the test needs before it
  // starts: kube-sim preloads them; on the real server they are created once per control
  // plane and waited for (CRDs Established and served).
  std::vector<std::string> preload;
  // Extra kube-sim flags (kube-sim only; the real server ignores them).
  std::vector<std::string> sim_args;
  // Authorize with RBAC (kube-sim --rbac). The real server always does.
  bool rbac = false;
};

class Cluster {
 public:
  virtual ~Cluster() = default;

  virtual Backend backend() const = 0;
  bool is_kube_sim() const { return backend() == Backend::kube_sim; }
  virtual const std::string& url() const = 0;

  // A cluster administrator's credentials (group system:masters).
  virtual k8s::ClientConfig client_config() const = 0;
  // The same server with another bearer token (a ServiceAccount's, say).
  k8s::ClientConfig client_config_with_token(std::string token) const;

  // A blocking request as the administrator (own connection, no retries); throws on
  // transport errors. `path` is the target (path and query).
  virtual HttpReply request(std::string_view method, std::string_view path, std::string body = {},
                            std::string_view content_type = "application/json") const = 0;

  // What the server recorded since the cluster was handed to this test (or since
  // reset_stats()), optionally only for one User-Agent.
  virtual std::vector<AccessRecord> requests(std::string_view user_agent = {}) const = 0;
  // Write requests (create/update/patch/delete/deletecollection) with this User-Agent,
  // whatever their outcome.
  virtual std::uint64_t writes_by(std::string_view user_agent) const;
  virtual void reset_stats() = 0;

  // A token for a ServiceAccount through the TokenRequest API (the account must exist).
  std::string service_account_token(const std::string& ns, const std::string& name,
                                    std::chrono::seconds expiry = std::chrono::hours(1)) const;
  // Creates every document of a YAML stream as the administrator; returns the created
  // objects. Throws with the server's answer when one is refused.
  std::vector<boost::json::value> create_yaml(std::string_view yaml) const;
  // Creates one object (POST to its collection); throws unless 201.
  boost::json::value create(const boost::json::value& object) const;
  // The collection path of an object (/api/v1/namespaces/x/configmaps), from its
  // apiVersion and kind, through the server's discovery.
  std::string collection_path(const boost::json::value& object) const;

  // For tests sharing the real control plane one after the other (no namespace
  // controller ever finishes a namespace's deletion there, so namespaces are emptied and
  // reused instead):
  // Deletes every object in the namespace, of every namespaced resource the server
  // serves (deletecollection, what the namespace controller does); the Namespace stays.
  void empty_namespace(const std::string& ns) const;
  // Creates a Namespace; one that exists already gets the labels and annotations of
  // `object`, as if new. Returns the object.
  boost::json::value create_or_reset_namespace(const boost::json::value& object) const;
};

// Starts kube-sim or attaches to the process's shared real control plane, per
// selected_backend(). Throws std::runtime_error with the reason when it cannot.
std::unique_ptr<Cluster> start_cluster(ClusterOptions options = {});

// kube-sim's own interface (fault injection, admin endpoints) for a test that needs it;
// throws, saying so, on another backend (such tests live in *KubeSimOnly suites, which
// the real-server runs leave out).
class KubeSim;
KubeSim& require_kube_sim(Cluster& cluster);

// What a test creates on the cluster, and the clean-up after it that lets the tests of a
// process share the real control plane one after the other: namespaces it created are
// emptied and lose their labels and annotations (a namespace itself is never deleted:
// without a namespace controller it would stay Terminating), and the cluster-scoped
// objects it created are deleted (CRDs are kept).
// A Namespace that exists already (an earlier test's) is taken over with the labels and
// annotations asked for, and is empty. On kube-sim, which dies with the test, nothing
// is cleaned up.
class TestObjects {
 public:
  explicit TestObjects(const Cluster& cluster) : cluster_(cluster) {}
  ~TestObjects();
  TestObjects(const TestObjects&) = delete;
  TestObjects& operator=(const TestObjects&) = delete;

  // Creates as the administrator (Namespaces through create_or_reset_namespace());
  // throws with the server's answer when refused.
  boost::json::value create(const boost::json::value& object);
  // Every document of a YAML stream, Namespaces and CRDs first.
  void create_yaml(std::string_view yaml);
  // Records an object created some other way (the response to its create).
  void note_created(const boost::json::value& object);
  // A namespace the test uses (created, or taken over, empty), named after the running
  // test: "<prefix>-<test name>", lower-cased, at most 63 characters.
  std::string test_namespace(std::string_view prefix = "t");
  // The clean-up, now (also done by the destructor).
  void clean_up();

 private:
  const Cluster& cluster_;
  std::vector<std::string> namespaces_;
  std::vector<boost::json::value> cluster_scoped_;  // {apiVersion, kind, metadata.name}
};

}  // namespace aop::testing
