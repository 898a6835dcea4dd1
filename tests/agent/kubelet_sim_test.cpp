// The kubelet Service/Endpoints controller (spec 3.13) against the test cluster: the objects
// follow the Nodes, an unchanged resync writes nothing, a conflicting write is retried,
// and a Node without an address fails the reconcile (retried) without touching anything.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_fixture.hpp"

namespace aop::agent::testing {
namespace {

json::value node(const std::string& name, const std::string& ip,
                 const std::vector<std::pair<std::string, std::string>>& more = {}) {
  json::array addresses;
  if (!ip.empty()) addresses.push_back(json::object{{"type", "InternalIP"}, {"address", ip}});
  for (const auto& [type, address] : more) {
    addresses.push_back(json::object{{"type", type}, {"address", address}});
  }
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
  void add_node(const std::string& name, const std::string& ip,
                const std::vector<std::pair<std::string, std::string>>& more = {}) {
    const json::value n = node(name, ip, more);
    env.create(n);
    const auto live = env.get(kNodeKind, "", name);
    ASSERT_TRUE(live.has_value());
    const auto* status = live->if_contains("status");
    if (status == nullptr || !status->as_object().contains("addresses")) {
      env.patch(kNodeKind, "", name, json::value{{"status", n.at("status")}}, true);
    }
  }

  std::vector<std::string> endpoint_ips(const std::string& name = "kubelet") {
    std::vector<std::string> out;
    const auto ep = env.get(kEndpointsKind, "kube-system", name);
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

// A Node whose address the API server refuses in an Endpoints (loopback, link-local,
// unspecified, link-local multicast, not an IP: kube-apiserver answers 422 for the whole
// object) is left out, or listed by another address it has, and the others keep their
// targets. Each refused address is reported once (log and a Warning Event on its Node),
// not again on every resync.
TEST_F(KubeletSimTest, AddressesTheApiServerRefusesAreLeftOutAndReportedOnce) {
  add_node("special-good", "10.0.1.1");
  add_node("special-loopback", "127.0.0.1");
  add_node("special-link-local", "169.254.10.10");
  add_node("special-v6-loopback", "::1");
  add_node("special-unspecified", "0.0.0.0");
  add_node("special-multicast", "224.0.0.251");
  add_node("special-not-an-ip", "node-7.example");
  // A refused InternalIP, and an ExternalIP the server takes: listed by the latter.
  add_node("special-fallback", "fe80::1", {{"ExternalIP", "192.0.2.7"}});
  auto& kubelet = env.add(std::make_unique<KubeletController>(
      env.context(), k8s::ObjectKey{"kube-system", "kubelet-special"}));
  env.start();

  ASSERT_TRUE(tst::wait_until(
      [&] {
        return endpoint_ips("kubelet-special") == std::vector<std::string>{"10.0.1.1", "192.0.2.7"};
      },
      kDeadline))
      << "the Endpoints must be written with the usable addresses";
  ASSERT_TRUE(tst::wait_until([&] { return kubelet.idle(); }, kDeadline));
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"special-loopback", "may not be in the loopback range"},
      {"special-link-local", "may not be in the link-local range"},
      {"special-v6-loopback", "may not be in the loopback range"},
      {"special-unspecified", "may not be unspecified"},
      {"special-multicast", "may not be in the link-local multicast range"},
      {"special-not-an-ip", "must be a valid IP address"},
      {"special-fallback", "may not be in the link-local range"}};
  for (const auto& [name, why] : refused) {
    const auto events = env.events.about("Node", "", name, "KubeletAddressRefused");
    ASSERT_EQ(events.size(), 1u) << name;
    EXPECT_EQ(events.front().type, k8s::EventType::warning);
    EXPECT_NE(events.front().message.find(why), std::string::npos) << events.front().message;
    EXPECT_NE(events.front().message.find("kube-system/kubelet-special"), std::string::npos)
        << events.front().message;
    EXPECT_FALSE(events.front().subject.uid.empty()) << "the Event names the Node object";
  }
  EXPECT_TRUE(env.events.about("Node", "", "special-good", "KubeletAddressRefused").empty());

  // Once: a resync reconciles again and reports nothing new.
  const auto events = env.events.events().size();
  const auto before = kubelet.reconciles();
  kubelet.controller().resync_now();
  ASSERT_TRUE(
      tst::wait_until([&] { return kubelet.reconciles() > before && kubelet.idle(); }, kDeadline));
  EXPECT_EQ(env.events.events().size(), events);

  // The loopback Node gets a usable address: it is listed.
  env.patch(
      kNodeKind, "", "special-loopback",
      json::parse(R"({"status": {"addresses": [{"type": "InternalIP", "address": "10.0.1.2"}]}})"),
      true);
  EXPECT_TRUE(tst::wait_until(
      [&] {
        return endpoint_ips("kubelet-special") ==
               std::vector<std::string>{"10.0.1.1", "10.0.1.2", "192.0.2.7"};
      },
      kDeadline));
}

}  // namespace
}  // namespace aop::agent::testing
