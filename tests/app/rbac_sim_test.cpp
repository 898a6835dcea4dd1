// The operator as a user installs it, under deploy/'s RBAC, on the test cluster
// (tests/k8s/cluster.hpp: kube-sim with --rbac, and the real kube-apiserver in the
// integration-real run): the agent-operator binary with both controllers, the kubelet
// Service controller and leader election, on a token of deploy/'s ServiceAccount, over
// deploy/examples. The test then changes the cluster so that every kind of request the
// operator's code can make is made (creates, updates and deletes of every generated kind,
// a recreation, status updates, Event creates and the patch of a repeated Event, Lease
// get/create/update, re-reads after write conflicts, which kube-sim injects), and checks
// against the server's own record of the requests (the audit log; kube-sim's access log):
//   * no request was refused (403): deploy/ grants everything the operator does;
//   * the requests made are those tests/deploy/operator_requests.tsv lists, the list
//     derived from the code: a new code path with a new request fails here until it is
//     listed there (and so granted: check_manifests.py holds deploy/ to the same list);
//   * every listed request was made (those only made after a conflict: on kube-sim).
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "k8s/yaml.hpp"
#include "tests/k8s/async_helpers.hpp"
#include "tests/k8s/child_process.hpp"
#include "tests/k8s/cluster.hpp"
#include "tests/k8s/http_request.hpp"
#include "tests/k8s/operator_rbac.hpp"
#include "tests/k8s/sim_fixture.hpp"

namespace aop::testing {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto kDeadline = std::chrono::seconds(120);

enum class Made { always, conflict, admission };

struct ListedRequest {
  std::string request;  // "verb group/resource[/sub]" as AccessRecord::verb_and_resource()
  Made made = Made::always;
};

std::string source_path(const std::string& rel) {
  return (fs::path(AOP_SOURCE_DIR) / rel).string();
}

// tests/deploy/operator_requests.tsv
std::vector<ListedRequest> listed_requests() {
  std::vector<ListedRequest> out;
  std::istringstream in(read_file(source_path("tests/deploy/operator_requests.tsv")));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> cols;
    std::istringstream ls(line);
    std::string col;
    while (std::getline(ls, col, '\t')) cols.push_back(col);
    EXPECT_EQ(cols.size(), 5u) << "operator_requests.tsv: " << line;
    if (cols.size() != 5) continue;
    std::string resource = cols[1];
    if (resource.starts_with("core/")) resource.erase(0, 5);
    const Made made = cols[3] == "conflict"    ? Made::conflict
                      : cols[3] == "admission" ? Made::admission
                                               : Made::always;
    EXPECT_TRUE(cols[3] == "always" || made != Made::always) << line;
    out.push_back({cols[0] + " " + resource, made});
  }
  return out;
}

// "verb group/resource[/sub]" for every (verb, resource) a rule of deploy/'s roles
// grants.
std::set<std::string> deploy_grants() {
  std::set<std::string> out;
  for (const auto& o : deploy_rbac_objects(AOP_SOURCE_DIR)) {
    const std::string kind(o.at("kind").as_string());
    if (kind != "ClusterRole" && kind != "Role") continue;
    for (const auto& rule : o.at("rules").as_array()) {
      const auto& r = rule.as_object();
      if (!r.contains("resources")) continue;
      for (const auto& g : r.at("apiGroups").as_array()) {
        for (const auto& res : r.at("resources").as_array()) {
          for (const auto& v : r.at("verbs").as_array()) {
            const std::string group(g.as_string());
            out.insert(std::string(v.as_string()) + " " + (group.empty() ? "" : group + "/") +
                       std::string(res.as_string()));
          }
        }
      }
    }
  }
  return out;
}

class OperatorProcess {
 public:
  OperatorProcess(const std::string& dir, std::vector<std::string> args) {
    std::vector<std::string> argv{std::string(AOP_BINARY_DIR) + "/bin/agent-operator"};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = ChildProcess({std::move(argv), dir + "/agent-operator.log"});
    const std::regex port_re(R"(msg="serving health probes" port=(\d+))");
    std::smatch m;
    // Until it serves, or has exited (a bad flag).
    wait_until([&] {
      const std::string log = read_file(process_.log_path());
      if (!std::regex_search(log, m, port_re)) return process_.exited();
      health_ = "http://127.0.0.1:" + m[1].str();
      return true;
    });
    EXPECT_FALSE(health_.empty()) << "the operator did not serve its health port; its log ends:\n"
                                  << process_.log_tail();
  }
  bool ready() const {
    try {
      return blocking_request({health_, "", ""}, "GET", "/readyz").status == 200;
    } catch (const std::exception&) {
      return false;
    }
  }
  // SIGTERM; the exit status.
  int stop() {
    const int status = process_.stop(std::chrono::seconds(60));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string log_tail() const { return process_.log_tail(); }

 private:
  ChildProcess process_;
  std::string health_;
};

class OperatorRbac : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster = start_cluster(
        {{source_path("deploy/crds"), source_path("deploy/examples/demo-only")}, {}, true});
    identity = install_operator_rbac(*cluster, AOP_SOURCE_DIR);
    dir = make_temp_dir("aop-rbac-test");
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir);
  }

  json::value get(const std::string& path) const {
    const auto r = cluster->request("GET", path);
    if (r.status == 404) return nullptr;
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return json::parse(r.body);
  }
  bool exists(const std::string& path) const { return !get(path).is_null(); }
  void patch(const std::string& path, const json::value& body, bool status = false) const {
    const auto p = path + (status ? "/status" : "");
    const auto r =
        cluster->request("PATCH", p, json::serialize(body), "application/merge-patch+json");
    ASSERT_EQ(r.status, 200) << "PATCH " << p << ": " << r.body;
  }
  std::string condition(const std::string& type) const {
    const auto a =
        get("/apis/monitoring.grafana.com/v1alpha1/namespaces/monitoring/grafanaagents/"
            "grafana-agent");
    if (a.is_null()) return "<none>";
    const auto* st = a.as_object().if_contains("status");
    const auto* conds = st != nullptr ? st->as_object().if_contains("conditions") : nullptr;
    if (conds == nullptr) return "<none>";
    for (const auto& c : conds->as_array()) {
      if (c.at("type").as_string() == type) return std::string(c.at("status").as_string());
    }
    return "<none>";
  }
  std::string write_kubeconfig() const {
    std::string path = dir + "/kubeconfig";
    const auto config = cluster->client_config();
    std::string text = "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n";
    text += "    server: " + config.server + "\n";
    if (!config.ca_pem.empty()) {
      text += "    certificate-authority-data: " + k8s::base64_encode(config.ca_pem) + "\n";
    }
    text += "users:\n- name: operator\n  user:\n    token: " + identity.token + "\n";
    text +=
        "contexts:\n- name: test\n  context: {cluster: test, user: operator}\n"
        "current-context: test\n";
    std::ofstream(path) << text;
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
    return path;
  }
  void add_node(const std::string& name, const std::string& ip) const {
    cluster->create(json::parse(R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": ")" +
                                name + R"("}})"));
    set_node_address(name, ip);
  }
  void set_node_address(const std::string& name, const std::string& ip) const {
    patch("/api/v1/nodes/" + name,
          json::parse(R"({"status": {"addresses": [{"type": "InternalIP", "address": ")" + ip +
                      R"("}]}})"),
          true);
  }

  // The operator's requests the server refused, as "verb resource in namespace".
  std::set<std::string> refused() const {
    std::set<std::string> out;
    for (const auto& r : cluster->requests()) {
      if (r.user == identity.user && r.denied) {
        out.insert(r.verb_and_resource() + " in namespace \"" + r.ns + "\"");
      }
    }
    return out;
  }
  // Waits until `condition` holds, or gives up early when the operator was refused
  // something (it would wait in vain). Failures name what was refused.
  ::testing::AssertionResult settle(const std::function<bool()>& condition) const {
    int polls = 0;
    std::set<std::string> denied;
    const bool held = wait_until(
        [&] {
          if (condition()) return true;
          if (++polls % 50 == 0) denied = refused();
          return !denied.empty();
        },
        kDeadline);
    if (held && denied.empty()) return ::testing::AssertionSuccess();
    auto failure = ::testing::AssertionFailure();
    for (const auto& d : denied) failure << "refused by deploy/'s RBAC: " << d << "\n";
    return failure << "(condition not met)";
  }

  std::unique_ptr<Cluster> cluster;
  OperatorIdentity identity;
  std::string dir;
};

TEST_F(OperatorRbac, EveryRequestTheOperatorMakesIsGrantedByDeployAndMade) {
  // The cluster: deploy/examples, a telegraf token Secret, two Nodes (one whose address an
  // Endpoints may not hold).
  std::vector<fs::path> examples;
  for (const auto& e : fs::directory_iterator(source_path("deploy/examples"))) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") examples.push_back(e.path());
  }
  std::sort(examples.begin(), examples.end());
  for (const auto& f : examples) cluster->create_yaml(read_file(f.string()));
  cluster->create(json::parse(R"({"apiVersion": "v1", "kind": "Secret",
      "metadata": {"name": "influxdb-token", "namespace": ")" +
                              identity.ns + R"("}, "data": {"token": "c2VjcmV0LTE="}})"));
  add_node("rbac-node-1", "10.0.3.1");
  add_node("rbac-node-2", "127.0.0.2");

  OperatorProcess op(
      dir,
      {"--kubeconfig=" + write_kubeconfig(), "--controllers=agent,telegraf",
       "--health-probe-bind-address=127.0.0.1:0", "--metrics-bind-address=", "--leader-elect",
       "--leader-election-namespace=" + identity.ns, "--kubelet-service=kube-system/kubelet",
       "--telegraf-token-secret=" + identity.ns + "/influxdb-token:token",
       "--telegraf-application-namespaces=argocd",
       "--telegraf-influxdb-url=https://influxdb.example:8086", "--telegraf-influxdb-org=test"});
  const std::string agent_path =
      "/apis/monitoring.grafana.com/v1alpha1/namespaces/monitoring/grafanaagents/grafana-agent";
  ASSERT_TRUE(settle([&] {
    return op.ready() && condition("Reconciled") == "True" &&
           exists("/apis/apps/v1/namespaces/monitoring/daemonsets/grafana-agent-logs") &&
           exists("/apis/apps/v1/namespaces/payments/deployments/rubin-telegraf") &&
           exists("/apis/apps/v1/namespaces/shop/deployments/rubin-telegraf") &&
           exists("/api/v1/namespaces/kube-system/endpoints/kubelet");
  })) << "Reconciled: "
      << condition("Reconciled") << "; the operator's log ends:\n"
      << op.log_tail();

  // Updates of every generated kind: a new port name changes the governing Service and
  // every pod template (StatefulSets, DaemonSets, Deployment) and the configs. The
  // operator's next update of these meets a conflict and is retried after a fresh read
  // (kube-sim's fault injection; a real server has conflicts only when writers race).
  patch(agent_path, json::parse(R"({"spec": {"portName": "http-agent"}})"));
  if (auto* sim = dynamic_cast<KubeSim*>(cluster.get())) {
    sim->set_faults(R"({"conflict_next_update": [
        "grafanaagents/monitoring/grafana-agent",
        "daemonsets/monitoring/grafana-agent-integrations-ds",
        "deployments/monitoring/grafana-agent-integrations-deploy"]})");
    ASSERT_TRUE(settle([&] {
      return sim->stats().at("faults").at("conflict_next_update").to_number<int>() == 3;
    })) << "the operator did not update all three: "
        << json::serialize(sim->stats());
  }
  ASSERT_TRUE(settle([&] {
    const auto svc = get("/api/v1/namespaces/monitoring/services/grafana-agent-operated");
    return !svc.is_null() &&
           svc.at("spec").at("ports").at(0).at("name").as_string() == "http-agent";
  }));
  // An Integration refers to a ConfigMap: its content is read.
  cluster->create(json::parse(R"({"apiVersion": "v1", "kind": "ConfigMap",
      "metadata": {"name": "redis-extra", "namespace": "monitoring"},
      "data": {"extra.yaml": "key: value"}})"));
  patch("/apis/monitoring.grafana.com/v1alpha1/namespaces/monitoring/integrations/redis",
        json::parse(R"({"spec": {"configMaps": [{"name": "redis-extra", "key": "extra.yaml"}]}})"));
  // WAL storage on a volume claim: the StatefulSets' volumeClaimTemplates cannot be
  // updated, so they are deleted and created again.
  const auto old_sts = get("/apis/apps/v1/namespaces/monitoring/statefulsets/grafana-agent");
  ASSERT_FALSE(old_sts.is_null());
  patch(agent_path, json::parse(R"({"spec": {"storage": {"volumeClaimTemplate": {"spec": {
      "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}})"));
  ASSERT_TRUE(settle([&] {
    const auto sts = get("/apis/apps/v1/namespaces/monitoring/statefulsets/grafana-agent");
    return !sts.is_null() && sts.at("metadata").at("uid") != old_sts.at("metadata").at("uid");
  })) << "the StatefulSet was not recreated; the operator's log ends:\n"
      << op.log_tail();
  // The telegraf configuration and token copies change.
  patch("/api/v1/namespaces/shop", json::parse(R"({"metadata": {"annotations": {
      "telegraf.influxdata.com/rubin-telegraf-operator": "- web: \"http://web.shop.svc:8081/metrics\"\n"}}})"));
  patch("/api/v1/namespaces/" + identity.ns + "/secrets/influxdb-token",
        json::parse(R"({"data": {"token": "c2VjcmV0LTI="}})"));
  // A Node joins; someone edits the kubelet Service's labels (repaired).
  add_node("rbac-node-3", "10.0.3.3");
  patch("/api/v1/namespaces/kube-system/services/kubelet",
        json::parse(R"({"metadata": {"labels": {"k8s-app": "edited"}}})"));
  // The refused address is fixed, then comes back: the same Warning Event again, which
  // the recorder folds into the first (a patch of its count).
  ASSERT_TRUE(settle([&] {
    const auto ev = get("/api/v1/events?fieldSelector=reason%3DKubeletAddressRefused");
    return !ev.is_null() && !ev.at("items").as_array().empty();
  }));
  set_node_address("rbac-node-2", "10.0.3.2");
  ASSERT_TRUE(settle([&] {
    const auto ep = get("/api/v1/namespaces/kube-system/endpoints/kubelet");
    return !ep.is_null() && ep.at("subsets").at(0).at("addresses").as_array().size() == 3;
  }));
  set_node_address("rbac-node-2", "127.0.0.2");
  ASSERT_TRUE(settle([&] {
    const auto ev = get("/api/v1/events?fieldSelector=reason%3DKubeletAddressRefused");
    if (ev.is_null() || ev.at("items").as_array().empty()) return false;
    const auto* count = ev.at("items").at(0).as_object().if_contains("count");
    return count != nullptr && count->to_number<int>() >= 2;
  })) << "the repeated Event was not folded into the first";

  // Deletes: the logs part goes (DaemonSet, its config Secret); the Deployment integration
  // moves to the DaemonSet (Deployment and its Secret go); no MetricsInstance is left
  // (governing Service, config Secret, StatefulSets go); the Application loses its
  // annotation (telegraf ConfigMap, token Secret and Deployment in payments go).
  ASSERT_EQ(cluster
                ->request("DELETE",
                          "/apis/monitoring.grafana.com/v1alpha1/namespaces/"
                          "monitoring/logsinstances/logs")
                .status,
            200);
  patch("/apis/monitoring.grafana.com/v1alpha1/namespaces/monitoring/integrations/redis",
        json::parse(R"({"spec": {"type": {"allNodes": true}}})"));
  patch(agent_path,
        json::parse(
            R"({"spec": {"metrics": {"instanceSelector": {"matchLabels": {"agent": "none"}}}}})"));
  patch("/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/payments",
        json::parse(R"({"metadata": {"annotations": {
            "telegraf.influxdata.com/rubin-telegraf-operator": null}}})"));
  ASSERT_TRUE(settle([&] {
    return !exists("/apis/apps/v1/namespaces/monitoring/daemonsets/grafana-agent-logs") &&
           !exists(
               "/apis/apps/v1/namespaces/monitoring/deployments/"
               "grafana-agent-integrations-deploy") &&
           !exists("/api/v1/namespaces/monitoring/services/grafana-agent-operated") &&
           !exists("/apis/apps/v1/namespaces/monitoring/statefulsets/grafana-agent") &&
           !exists("/apis/apps/v1/namespaces/payments/deployments/rubin-telegraf") &&
           !exists("/api/v1/namespaces/payments/configmaps/rubin-telegraf");
  })) << "the operator's log ends:\n"
      << op.log_tail();
  // The integrations DaemonSet goes when no Integration is left.
  for (const char* in : {"node-exporter", "redis"}) {
    ASSERT_EQ(cluster
                  ->request("DELETE", std::string("/apis/monitoring.grafana.com/v1alpha1/"
                                                  "namespaces/monitoring/integrations/") +
                                          in)
                  .status,
              200);
  }
  ASSERT_TRUE(settle([&] {
    return !exists("/apis/apps/v1/namespaces/monitoring/daemonsets/grafana-agent-integrations-ds");
  }));
  EXPECT_EQ(op.stop(), 0) << "SIGTERM must end the operator with status 0; its log ends:\n"
                          << op.log_tail();

  // What the server recorded of the operator's requests.
  std::set<std::string> made;
  std::set<std::string> refused;
  for (const auto& r : cluster->requests()) {
    if (r.user != identity.user) continue;
    (r.denied ? refused : made).insert(r.verb_and_resource());
  }
  EXPECT_EQ(refused, std::set<std::string>{}) << "requests deploy/'s RBAC does not grant";
  std::set<std::string> listed;
  std::set<std::string> required;
  for (const auto& l : listed_requests()) {
    listed.insert(l.request);
    if (l.made == Made::always || (l.made == Made::conflict && cluster->is_kube_sim())) {
      required.insert(l.request);
    }
  }
  std::vector<std::string> unlisted;
  std::set_difference(made.begin(), made.end(), listed.begin(), listed.end(),
                      std::back_inserter(unlisted));
  EXPECT_EQ(unlisted, std::vector<std::string>{})
      << "the operator made requests tests/deploy/operator_requests.tsv does not list (a new "
         "code path? list it there, and grant it in deploy/)";
  std::vector<std::string> not_made;
  std::set_difference(required.begin(), required.end(), made.begin(), made.end(),
                      std::back_inserter(not_made));
  EXPECT_EQ(not_made, std::vector<std::string>{})
      << "requests the operator can make that this test did not bring about";
  EXPECT_EQ(deploy_grants(), listed)
      << "deploy/'s roles must grant exactly what tests/deploy/operator_requests.tsv lists";
}

}  // namespace
}  // namespace aop::testing
