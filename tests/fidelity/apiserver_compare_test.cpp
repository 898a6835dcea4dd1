// kube-sim next to the real kube-apiserver: the same requests sent to both (kube-sim with
// --rbac, the test control plane of tests/k8s/control_plane.hpp), their answers compared
// field by field: status code, Status reason and message, and every field of a returned
// object (values too, except those that are random or per-server: uids, resourceVersions,
// timestamps, allocated IPs, tokens). Every difference still there is listed below and in
// tools/kube-sim/README.md ("Differences from kube-apiserver"); the test fails when a new
// one appears or a listed one is gone, so that the list stays true.
//
// Needs the real server: registered only as apiserver_compare_test.kube-apiserver
// (label integration-real), Skipped without one.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/k8s/cluster.hpp"
#include "tests/k8s/control_plane.hpp"
#include "tests/k8s/http_request.hpp"
#include "tests/k8s/sim_fixture.hpp"

namespace aop::testing {
namespace {

namespace json = boost::json;

// Fields whose values are per server (random, allocated, clocks): compared for presence.
constexpr std::string_view kVolatile[] = {"metadata.uid",
                                          "metadata.resourceVersion",
                                          "metadata.creationTimestamp",
                                          "metadata.continue",
                                          "spec.clusterIP",
                                          "spec.clusterIPs[0]",
                                          "status.token",
                                          "status.expirationTimestamp",
                                          "metadata.deletionTimestamp"};

bool volatile_path(const std::string& path) {
  if (std::find(std::begin(kVolatile), std::end(kVolatile), path) != std::end(kVolatile)) {
    return true;
  }
  // managedFields are compared as a whole (present or not) below.
  return path.starts_with("metadata.managedFields") || path.starts_with("details.uid") ||
         path.ends_with(".metadata.uid") || path.ends_with(".metadata.resourceVersion") ||
         path.ends_with(".metadata.creationTimestamp") || path == "details.causes";
}

void flatten(const json::value& v, const std::string& at, std::map<std::string, std::string>& out) {
  if (const auto mf = at.find("metadata.managedFields"); mf != std::string::npos) {
    out[at.substr(0, mf) + "metadata.managedFields"] = "(present)";
    return;
  }
  if (v.is_object()) {
    if (v.get_object().empty()) out[at] = "{}";
    for (const auto& [k, x] : v.get_object()) {
      flatten(x, at.empty() ? std::string(k) : at + "." + std::string(k), out);
    }
  } else if (v.is_array()) {
    if (v.get_array().empty()) out[at] = "[]";
    for (std::size_t i = 0; i < v.get_array().size(); ++i) {
      flatten(v.get_array()[i], at + "[" + std::to_string(i) + "]", out);
    }
  } else {
    out[at] = volatile_path(at) ? std::string("(set)") : json::serialize(v);
  }
}

// The differences between two answers, as sorted readable lines.
std::set<std::string> differences(const HttpReply& real, const HttpReply& sim) {
  std::set<std::string> out;
  if (real.status != sim.status) {
    out.insert("status " + std::to_string(real.status) + " vs " + std::to_string(sim.status));
  }
  std::map<std::string, std::string> a;
  std::map<std::string, std::string> b;
  boost::system::error_code ec;
  const auto ra = json::parse(real.body, ec);
  if (!ec) flatten(ra, "", a);
  const auto rb = json::parse(sim.body, ec);
  if (!ec) flatten(rb, "", b);
  for (const auto& [k, v] : a) {
    const auto it = b.find(k);
    std::string line;
    if (it == b.end()) {
      line.append("only kube-apiserver: ").append(k).append("=").append(v);
    } else if (it->second != v) {
      line.append("differs ").append(k).append(": ").append(v).append(" vs ").append(it->second);
    }
    if (!line.empty()) out.insert(std::move(line));
  }
  for (const auto& [k, v] : b) {
    if (a.contains(k)) continue;
    std::string line = "only kube-sim: ";
    out.insert(line.append(k).append("=").append(v));
  }
  return out;
}

struct Call {
  std::string method;
  std::string path;  // "{ns}" is the case's namespace
  std::string body;
  std::string content_type = "application/json";
  bool as_service_account = false;  // else the administrator
};

struct Case {
  std::string name;
  std::vector<Call> setup;
  Call probe;
  std::set<std::string> known;  // differences listed in tools/kube-sim/README.md
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

const char* const kConfigMap =
    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labels":{"a":"b"}},"data":{"k":"v"}})";
const char* const kTemplate =
    R"("selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}})";

std::vector<Case> cases() {
  const std::string cm_path = "/api/v1/namespaces/{ns}/configmaps";
  const std::string apps = "/apis/apps/v1/namespaces/{ns}/";
  const std::string agents = "/apis/monitoring.grafana.com/v1alpha1/namespaces/{ns}/grafanaagents";
  const std::set<std::string> managed_fields = {
      "only kube-apiserver: metadata.managedFields=(present)"};
  // A ResourceQuota on ConfigMaps, and its status as a quota controller would write it.
  const Call quota{
      "POST", "/api/v1/namespaces/{ns}/resourcequotas",
      R"({"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"count/configmaps":"1"}}})"};
  const auto quota_used = [](int used) {
    return Call{"PATCH", "/api/v1/namespaces/{ns}/resourcequotas/q/status",
                R"({"status":{"hard":{"count/configmaps":"1"},"used":{"count/configmaps":")" +
                    std::to_string(used) + R"("}}})",
                "application/merge-patch+json"};
  };
  return {
      {"create a ConfigMap", {}, {"POST", cm_path, kConfigMap}, managed_fields},
      {"a create under a quota no controller has counted yet",
       {quota},
       {"POST", cm_path, kConfigMap},
       managed_fields},
      {"a create under a quota whose usage is unknown",
       {quota,
        {"PATCH", "/api/v1/namespaces/{ns}/resourcequotas/q/status",
         R"({"status":{"hard":{"count/configmaps":"1"}}})", "application/merge-patch+json"}},
       {"POST", cm_path, kConfigMap},
       {}},
      {"a create under a full quota", {quota, quota_used(1)}, {"POST", cm_path, kConfigMap}, {}},
      {"a create charged to a quota",
       {quota, quota_used(0), {"POST", cm_path, kConfigMap}},
       {"GET", "/api/v1/namespaces/{ns}/resourcequotas/q"},
       managed_fields},
      {"get a missing object", {}, {"GET", cm_path + "/nope"}, {}},
      {"create an existing object",
       {{"POST", cm_path, kConfigMap}},
       {"POST", cm_path, kConfigMap},
       {}},
      {"update with a stale resourceVersion",
       {{"POST", cm_path, kConfigMap}},
       {"PUT", cm_path + "/cm",
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","resourceVersion":"1"}})"},
       {}},
      {"an invalid name",
       {},
       {"POST", cm_path,
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}})"},
       {}},
      {"an invalid label value",
       {},
       {"POST", cm_path,
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l","labels":{"a":"-x-"}}})"},
       {}},
      {"delete an object", {{"POST", cm_path, kConfigMap}}, {"DELETE", cm_path + "/cm"}, {}},
      {"merge patch",
       {{"POST", cm_path, kConfigMap}},
       {"PATCH", cm_path + "/cm", R"({"data":{"k2":"v2"}})", "application/merge-patch+json"},
       managed_fields},
      {"empty maps are left out",
       {},
       {"POST", cm_path,
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e","labels":{},"annotations":{}},"data":{}})"},
       {}},
      {"a Secret from stringData",
       {},
       {"POST", "/api/v1/namespaces/{ns}/secrets",
        R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"a":"b"}})"},
       managed_fields},
      {"a Service's defaults",
       {},
       {"POST", "/api/v1/namespaces/{ns}/services",
        R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"name":"h","port":80}],"selector":{"app":"x"}}})"},
       managed_fields},
      {"a headless Service's defaults",
       {},
       {"POST", "/api/v1/namespaces/{ns}/services",
        R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"h"},"spec":{"clusterIP":"None","ports":[{"name":"h","port":80}]}})"},
       managed_fields},
      {"Endpoints port defaults",
       {},
       {"POST", "/api/v1/namespaces/{ns}/endpoints",
        R"({"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"e"},"subsets":[{"addresses":[{"ip":"10.0.0.1"}],"ports":[{"name":"x","port":10250}]}]})"},
       managed_fields},
      {"an Endpoints address in the loopback range",
       {},
       {"POST", "/api/v1/namespaces/{ns}/endpoints",
        R"({"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"e"},"subsets":[{"addresses":[{"ip":"127.0.0.1"}],"ports":[{"port":1}]}]})"},
       {}},
      {"a Deployment's defaults",
       {},
       {"POST", apps + "deployments",
        std::string(
            R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{)") +
            kTemplate + "}}"},
       managed_fields},
      {"a StatefulSet's defaults",
       {},
       {"POST", apps + "statefulsets",
        std::string(
            R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"s"},"spec":{"serviceName":"s",)") +
            kTemplate + "}}"},
       {"only kube-apiserver: metadata.managedFields=(present)",
        "only kube-sim: spec.persistentVolumeClaimRetentionPolicy.whenDeleted=\"Retain\"",
        "only kube-sim: spec.persistentVolumeClaimRetentionPolicy.whenScaled=\"Retain\""}},
      {"a DaemonSet's defaults",
       {},
       {"POST", apps + "daemonsets",
        std::string(
            R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},"spec":{)") +
            kTemplate + "}}"},
       managed_fields},
      {"a custom resource's schema defaults and dropped status",
       {},
       {"POST", agents,
        R"({"apiVersion":"monitoring.grafana.com/v1alpha1","kind":"GrafanaAgent","metadata":{"name":"a"},"spec":{"metrics":{}},"status":{"conditions":[]}})"},
       managed_fields},
      {"strategic merge patch of a custom resource",
       {{"POST", agents,
         R"({"apiVersion":"monitoring.grafana.com/v1alpha1","kind":"GrafanaAgent","metadata":{"name":"a"},"spec":{}})"}},
       {"PATCH", agents + "/a", R"({"spec":{"paused":true}})",
        "application/strategic-merge-patch+json"},
       {}},
      {"an unsupported field selector", {}, {"GET", cm_path + "?fieldSelector=data.k%3Dv"}, {}},
      {"list with a limit",
       {{"POST", cm_path, kConfigMap},
        {"POST", cm_path, replace_all(kConfigMap, "\"cm\"", "\"cm2\"")},
        {"POST", cm_path, replace_all(kConfigMap, "\"cm\"", "\"cm3\"")}},
       {"GET", cm_path + "?limit=2"},
       {"only kube-apiserver: items[0].metadata.managedFields=(present)",
        "only kube-apiserver: items[1].metadata.managedFields=(present)",
        "only kube-sim: items[0].apiVersion=\"v1\"", "only kube-sim: items[0].kind=\"ConfigMap\"",
        "only kube-sim: items[1].apiVersion=\"v1\"", "only kube-sim: items[1].kind=\"ConfigMap\""}},
      {"a ServiceAccount's request RBAC does not grant",
       {},
       {"GET", "/api/v1/namespaces/{ns}/secrets/x", {}, "application/json", true},
       {}},
      {"a TokenRequest",
       {},
       {"POST", "/api/v1/namespaces/{ns}/serviceaccounts/sa/token", "{}"},
       managed_fields},
      {"a Lease",
       {},
       {"POST", "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
        R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"me","leaseDurationSeconds":15}})"},
       managed_fields},
  };
}

class ApiServerCompare : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string crds = std::string(AOP_SOURCE_DIR) + "/deploy/crds";
    real_ = start_cluster({{crds}});
    if (real_->is_kube_sim()) {
      GTEST_FAIL() << "this test compares kube-sim with kube-apiserver: run it with "
                      "AOP_TEST_BACKEND=kube-apiserver (ctest: apiserver_compare_test."
                      "kube-apiserver)";
    }
    sim_ = std::make_unique<KubeSim>(std::vector<std::string>{"--preload", crds, "--rbac"});
  }

  // Runs `c` on one server: a namespace of its own with a ServiceAccount "sa" (no grants),
  // the setup calls, then the probe.
  HttpReply run(Cluster& cluster, const Case& c, std::size_t index, TestObjects& objects) {
    const std::string ns = objects.test_namespace("cmp-" + std::to_string(index));
    cluster.create(json::parse(
        R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa","namespace":")" + ns +
        R"("}})"));
    const std::string token = cluster.service_account_token(ns, "sa");
    auto send = [&](const Call& call) {
      const std::string path = replace_all(call.path, "{ns}", ns);
      if (!call.as_service_account) {
        return cluster.request(call.method, path, call.body, call.content_type);
      }
      BlockingRequest to{cluster.url(), cluster.client_config().ca_pem, token};
      return blocking_request(to, call.method, path, call.body, call.content_type);
    };
    for (const auto& s : c.setup) {
      const auto r = send(s);
      EXPECT_LT(r.status, 300) << c.name << ": setup " << s.method << " " << s.path << ": "
                               << r.body;
    }
    return send(c.probe);
  }

  std::unique_ptr<Cluster> real_;
  std::unique_ptr<KubeSim> sim_;
};

TEST_F(ApiServerCompare, KubeSimAnswersAsKubeApiserverExceptWhereListed) {
  const auto all = cases();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Case& c = all[i];
    // A fresh namespace for the case, of the same name on both servers.
    TestObjects real_objects(*real_);
    TestObjects sim_objects(*sim_);
    const HttpReply real = run(*real_, c, i, real_objects);
    const HttpReply sim = run(*sim_, c, i, sim_objects);
    const auto diffs = differences(real, sim);
    std::string shown;
    for (const auto& d : diffs) shown += "\n  " + d;
    EXPECT_EQ(diffs, c.known) << c.name << ": the differences are now:" << shown
                              << "\nkube-apiserver answered: " << real.body
                              << "\nkube-sim answered: " << sim.body;
  }
}

}  // namespace
}  // namespace aop::testing
