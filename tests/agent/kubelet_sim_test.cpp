// The kubelet Service/Endpoints controller (spec 3.13) against the test cluster: the objects
// follow the Nodes, an unchanged resync writes nothing, a conflicting write is retried,
// and a Node without an address fails the reconcile (retried) without touching anything.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_fixture.hpp"

namespace aop::agent::testing {
namespace {

json::value node(const std::string& name, const std::string& ip) {
  json::array addresses;
  if (!ip.empty()) addresses.push_back(json::object{{"type", "InternalIP"}, {"address", ip}});
  addresses.push_back(json::object{{"type", "Hostname"}, {"address", name}});
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata", json::object{{"name", name}}},
                      {"status", json::object{{"addresses", std::move(addresses)}}}};
}

class KubeletSimTest : public ::testing::Test {
 protected:
  // The Node as created, with status.addresses set through the status subresource when
  // the create dropped it (as kube-apiserver does for kinds with a status subresource).
  void add_node(const std::string& name, const std::string& ip) {
    const json::value n = node(name, ip);
    env.create(n);
    const auto live = env.get(kNodeKind, "", name);
    ASSERT_TRUE(live.has_value());
    const auto* status = live->if_contains("status");
    if (status == nullptr || !status->as_object().contains("addresses")) {
      env.patch(kNodeKind, "", name, json::value{{"status", n.at("status")}}, true);
    }
  }

  std::vector<std::string> endpoint_ips() {
    std::vector<std::string> out;
    const auto ep = env.get(kEndpointsKind, "kube-system", "kubelet");
    if (!ep) return out;
    const auto* subsets = ep->if_contains("subsets");
    if (subsets == nullptr) return out;
    for (const auto& s : subsets->as_array()) {
      for (const auto& a : s.at("addresses").as_array()) {
        out.emplace_back(a.at("ip").as_string());
      }
    }
    return out;
  }

  AgentSim env;
};

TEST_F(KubeletSimTest, ServiceAndEndpointsFollowTheNodes) {
  if (!env.get(Kind::namespace_, "", "kube-system")) {
    env.create_yaml("apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system}\n");
  }
  add_node("node-b", "10.0.0.9");
  add_node("node-a", "10.0.0.10");
  auto& kubelet = env.add(
      std::make_unique<KubeletController>(env.context(), k8s::ObjectKey{"kube-system", "kubelet"}));
  env.start();

  ASSERT_TRUE(tst::wait_until(
      [&] {
        return endpoint_ips() == std::vector<std::string>{"10.0.0.10", "10.0.0.9"};
      },
      kDeadline))
      << "addresses sorted as plain strings";
  const auto svc = env.get(Kind::service, "kube-system", "kubelet");
  ASSERT_TRUE(svc.has_value());
  EXPECT_EQ(svc->at("spec").at("clusterIP").as_string(), "None");
  EXPECT_EQ(svc->at("metadata").at("labels").at("k8s-app").as_string(), "kubelet");
  EXPECT_EQ(svc->at("spec").at("ports").as_array().size(), 3u);

  // Unchanged: a resync reads and writes nothing new.
  ASSERT_TRUE(tst::wait_until([&] { return kubelet.idle(); }, kDeadline));
  {
    const auto writes = env.operator_writes();
    const auto before = kubelet.reconciles();
    kubelet.controller().resync_now();
    ASSERT_TRUE(tst::wait_until([&] { return kubelet.reconciles() > before && kubelet.idle(); },
                                kDeadline));
    EXPECT_EQ(env.operator_writes(), writes);
  }

  // A new Node, with a conflict injected on the next Endpoints update (kube-sim's fault
  // injection; the real server just takes the update): retried.
  if (auto* sim = env.kube_sim()) {
    sim->set_faults(R"({"conflict_next_update": "endpoints/kube-system/kubelet"})");
  }
  add_node("node-c", "10.0.0.11");
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return endpoint_ips() == std::vector<std::string>{"10.0.0.10", "10.0.0.11", "10.0.0.9"};
      },
      kDeadline));

  // A Node without an address: an error (retried with backoff), nothing written.
  const auto writes = env.operator_writes();
  add_node("node-d", "");
  ASSERT_TRUE(tst::wait_until(
      [&] { return kubelet.controller().queue().num_requeues("kube-system/kubelet") > 0; },
      kDeadline))
      << "the failure was not retried with backoff";
  EXPECT_EQ(env.operator_writes(), writes);
  EXPECT_EQ(endpoint_ips().size(), 3u);

  // The Node gets its address: the failure clears.
  env.patch(
      kNodeKind, "", "node-d",
      json::parse(R"({"status": {"addresses": [{"type": "ExternalIP", "address": "192.0.2.4"}]}})"),
      true);
  EXPECT_TRUE(tst::wait_until([&] { return endpoint_ips().size() == 4u; }, kDeadline));
}

}  // namespace
}  // namespace aop::agent::testing
