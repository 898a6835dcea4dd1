// Kubelet Service/Endpoints (spec 3.13): address preference, ordering, exact object
// shapes, and the change detection that keeps an unchanged node set from causing writes.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/agent/kubelet.hpp"

namespace aop::agent {
namespace {

using boost::json::object;
using boost::json::value;

value yaml(std::string_view text) {
  auto v = k8s::yaml::parse(text);
  EXPECT_TRUE(v.has_value()) << v.error().message;
  return v ? *v : value(nullptr);
}

KubeletNode node(std::string name, std::vector<KubeletNode::Address> addresses) {
  return KubeletNode{name, "uid-" + name, std::move(addresses)};
}

const k8s::ObjectKey kTarget{"kube-system", "kubelet"};

std::optional<std::string> address_of(const KubeletNode& n) {
  auto a = kubelet_node_address(n);
  EXPECT_TRUE(a.has_value()) << a.error().message;
  return a ? a->ip : std::nullopt;
}

TEST(KubeletAddress, PrefersTheFirstInternalIPThenTheFirstExternalIP) {
  EXPECT_EQ(address_of(node("a", {{"ExternalIP", "1.1.1.1"},
                                  {"Hostname", "a"},
                                  {"InternalIP", "10.0.0.1"},
                                  {"InternalIP", "10.0.0.2"}})),
            "10.0.0.1");
  EXPECT_EQ(address_of(node(
                "b", {{"Hostname", "b"}, {"ExternalIP", "2.2.2.2"}, {"ExternalIP", "3.3.3.3"}})),
            "2.2.2.2");
}

// kube-apiserver refuses these in an Endpoints (422 for the whole object): passed over,
// with the reason, for the next InternalIP, then the first usable ExternalIP.
TEST(KubeletAddress, AddressesTheApiServerRefusesArePassedOverWithTheirReason) {
  auto a = kubelet_node_address(node("a", {{"InternalIP", "127.0.0.1"},
                                           {"InternalIP", "fe80::1"},
                                           {"ExternalIP", "0.0.0.0"},
                                           {"ExternalIP", "192.0.2.1"},
                                           {"InternalIP", "10.0.0.3"}}));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->ip, "10.0.0.3");
  ASSERT_EQ(a->refused.size(), 2u) << "the ExternalIPs are not looked at";
  EXPECT_EQ(a->refused[0].address, "127.0.0.1");
  EXPECT_EQ(a->refused[0].type, "InternalIP");
  EXPECT_EQ(a->refused[0].node, "a");
  EXPECT_EQ(a->refused[0].node_uid, "uid-a");
  EXPECT_EQ(a->refused[0].reason, "may not be in the loopback range (127.0.0.0/8, ::1/128)");
  EXPECT_EQ(a->refused[1].reason, "may not be in the link-local range (169.254.0.0/16, fe80::/10)");

  auto b = kubelet_node_address(node("b", {{"InternalIP", "169.254.1.1"}, {"ExternalIP", "::"}}));
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->ip, std::nullopt) << "no usable address: the node is left out";
  ASSERT_EQ(b->refused.size(), 2u);
  EXPECT_EQ(b->refused[1].reason, "may not be unspecified (::)");
}

TEST(KubeletObjects, NodesWithRefusedAddressesAreLeftOutAndTheOthersListed) {
  auto objs = kubelet_objects(kTarget, {node("ok", {{"InternalIP", "10.0.0.1"}}),
                                        node("loop", {{"InternalIP", "127.0.0.2"}}),
                                        node("mcast", {{"InternalIP", "ff02::fb"}}),
                                        node("name", {{"InternalIP", "node.example"}})});
  ASSERT_TRUE(objs.has_value()) << objs.error().message;
  const auto& addresses = objs->endpoints.at("subsets").as_array().at(0).at("addresses").as_array();
  ASSERT_EQ(addresses.size(), 1u);
  EXPECT_EQ(addresses[0].at("ip").as_string(), "10.0.0.1");
  ASSERT_EQ(objs->refused.size(), 3u);
  EXPECT_EQ(objs->refused[1].reason,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)");
  EXPECT_EQ(objs->refused[2].reason, "must be a valid IP address");

  // Only refused nodes: an Endpoints without subsets, which the API server accepts.
  auto none = kubelet_objects(kTarget, {node("loop", {{"InternalIP", "127.0.0.2"}})});
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->endpoints.at("subsets").as_array().empty());
}

TEST(KubeletAddress, NodeWithoutInternalOrExternalIPIsAnErrorNamingIt) {
  auto r = kubelet_node_address(node("lonely", {{"Hostname", "lonely"}}));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("Node lonely"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("InternalIP"), std::string::npos) << r.error().message;

  // One bad node fails the whole computation (retried with backoff by the controller).
  auto all = kubelet_objects(kTarget, {node("ok", {{"InternalIP", "10.0.0.1"}}),
                                       node("lonely", {{"Hostname", "lonely"}})});
  ASSERT_FALSE(all.has_value());
  EXPECT_NE(all.error().message.find("Node lonely"), std::string::npos);
}

TEST(KubeletObjects, ExactServiceAndEndpoints) {
  auto objs = kubelet_objects(
      kTarget, {node("n1", {{"InternalIP", "10.0.0.9"}}), node("n2", {{"InternalIP", "10.0.0.10"}}),
                node("n3", {{"ExternalIP", "192.168.1.5"}})});
  ASSERT_TRUE(objs.has_value()) << objs.error().message;

  // Written from spec 3.13: fixed labels (no -labels flag), no ownerReferences, no
  // targetPort, addresses ordered by IP as plain strings ("10.0.0.10" < "10.0.0.9").
  EXPECT_EQ(value(objs->service), yaml(R"(
apiVersion: v1
kind: Service
metadata:
  name: kubelet
  namespace: kube-system
  labels:
    app.kubernetes.io/managed-by: grafana-agent-operator
    k8s-app: kubelet
    app.kubernetes.io/name: kubelet
spec:
  type: ClusterIP
  clusterIP: None
  ports:
    - {name: https-metrics, port: 10250}
    - {name: http-metrics, port: 10255}
    - {name: cadvisor, port: 4194}
)"));
  EXPECT_EQ(value(objs->endpoints), yaml(R"(
apiVersion: v1
kind: Endpoints
metadata:
  name: kubelet
  namespace: kube-system
  labels:
    app.kubernetes.io/managed-by: grafana-agent-operator
    k8s-app: kubelet
    app.kubernetes.io/name: kubelet
subsets:
  - addresses:
      - ip: 10.0.0.10
        targetRef: {kind: Node, apiVersion: v1, name: n2, uid: uid-n2}
      - ip: 10.0.0.9
        targetRef: {kind: Node, apiVersion: v1, name: n1, uid: uid-n1}
      - ip: 192.168.1.5
        targetRef: {kind: Node, apiVersion: v1, name: n3, uid: uid-n3}
    ports:
      - {name: https-metrics, port: 10250}
      - {name: http-metrics, port: 10255}
      - {name: cadvisor, port: 4194}
)"));
}

TEST(KubeletObjects, OutputDoesNotDependOnNodeOrder) {
  std::vector<KubeletNode> nodes{node("c", {{"InternalIP", "10.0.0.3"}}),
                                 node("a", {{"InternalIP", "10.0.0.1"}}),
                                 node("b", {{"InternalIP", "10.0.0.2"}})};
  auto first = kubelet_objects(kTarget, nodes).value();
  std::reverse(nodes.begin(), nodes.end());
  auto second = kubelet_objects(kTarget, nodes).value();
  EXPECT_EQ(first.endpoints, second.endpoints);
}

TEST(KubeletObjects, NoNodesGivesEndpointsWithoutSubsets) {
  // An empty subset is rejected by the API server (addresses or notReadyAddresses required).
  auto objs = kubelet_objects(kTarget, {}).value();
  EXPECT_TRUE(objs.endpoints.at("subsets").as_array().empty());
}

TEST(KubeletNodeDecode, ReadsNameUidAndAddresses) {
  auto n = decode_kubelet_node(yaml(R"(
apiVersion: v1
kind: Node
metadata: {name: worker-1, uid: "1234"}
status:
  addresses:
    - {type: Hostname, address: worker-1}
    - {type: InternalIP, address: 10.1.2.3}
)"));
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(n->name, "worker-1");
  EXPECT_EQ(n->uid, "1234");
  ASSERT_EQ(n->addresses.size(), 2U);
  EXPECT_EQ(address_of(*n), "10.1.2.3");
}

TEST(KubeletNodeDecode, ErrorsNameTheJsonPath) {
  auto n = decode_kubelet_node(yaml(R"(
metadata: {name: worker-2}
status:
  addresses:
    - {type: InternalIP, address: 10.0.0.1}
    - {type: 7, address: x}
)"));
  ASSERT_FALSE(n.has_value());
  EXPECT_NE(n.error().message.find("Node worker-2"), std::string::npos) << n.error().message;
  EXPECT_NE(n.error().message.find("status.addresses[1].type"), std::string::npos)
      << n.error().message;
  EXPECT_FALSE(decode_kubelet_node(value("not a node")).has_value());
}

// ---- change detection ------------------------------------------------------------------

class KubeletChange : public ::testing::Test {
 protected:
  KubeletObjects desired = kubelet_objects(kTarget, {node("a", {{"InternalIP", "10.0.0.1"}}),
                                                     node("b", {{"InternalIP", "10.0.0.2"}})})
                               .value();
};

TEST_F(KubeletChange, IdenticalObjectsAreUnchanged) {
  EXPECT_FALSE(kubelet_object_changed(desired.service, desired.service));
  EXPECT_FALSE(kubelet_object_changed(desired.endpoints, desired.endpoints));
}

TEST_F(KubeletChange, FieldsTheApiServerAddsAreNotChanges) {
  object service = desired.service;
  auto& md = service["metadata"].as_object();
  md["resourceVersion"] = "42";
  md["uid"] = "abc";
  md["labels"].as_object()["added-by-someone"] = "x";
  auto& spec = service["spec"].as_object();
  spec["clusterIPs"] = boost::json::array{"None"};
  spec["ipFamilies"] = boost::json::array{"IPv4"};
  spec["sessionAffinity"] = "None";
  for (auto& p : spec["ports"].as_array()) {
    p.as_object()["protocol"] = "TCP";
    p.as_object()["targetPort"] = p.as_object()["port"];
  }
  EXPECT_FALSE(kubelet_object_changed(service, desired.service));

  object endpoints = desired.endpoints;
  endpoints["metadata"].as_object()["resourceVersion"] = "43";
  for (auto& s : endpoints["subsets"].as_array()) {
    for (auto& p : s.as_object()["ports"].as_array()) p.as_object()["protocol"] = "TCP";
    for (auto& a : s.as_object()["addresses"].as_array()) {
      a.as_object()["targetRef"].as_object()["resourceVersion"] = "7";
    }
  }
  EXPECT_FALSE(kubelet_object_changed(endpoints, desired.endpoints));
}

TEST_F(KubeletChange, NodeSetAddressOrLabelChangesAreChanges) {
  auto three = kubelet_objects(kTarget, {node("a", {{"InternalIP", "10.0.0.1"}}),
                                         node("b", {{"InternalIP", "10.0.0.2"}}),
                                         node("c", {{"InternalIP", "10.0.0.3"}})})
                   .value();
  EXPECT_TRUE(kubelet_object_changed(desired.endpoints, three.endpoints));
  EXPECT_TRUE(kubelet_object_changed(three.endpoints, desired.endpoints));

  auto moved = kubelet_objects(kTarget, {node("a", {{"InternalIP", "10.0.0.1"}}),
                                         node("b", {{"InternalIP", "10.0.0.99"}})})
                   .value();
  EXPECT_TRUE(kubelet_object_changed(desired.endpoints, moved.endpoints));

  auto replaced =
      kubelet_objects(kTarget, {node("a", {{"InternalIP", "10.0.0.1"}}),
                                KubeletNode{"b", "new-uid", {{"InternalIP", "10.0.0.2"}}}})
          .value();
  EXPECT_TRUE(kubelet_object_changed(desired.endpoints, replaced.endpoints));

  object unlabeled = desired.service;
  unlabeled["metadata"].as_object()["labels"].as_object().erase("k8s-app");
  EXPECT_TRUE(kubelet_object_changed(unlabeled, desired.service));

  object edited = desired.service;
  edited["spec"].as_object()["ports"].as_array().pop_back();
  EXPECT_TRUE(kubelet_object_changed(edited, desired.service));

  object selected = desired.service;
  selected["spec"].as_object()["selector"] = object{{"app", "x"}};
  EXPECT_TRUE(kubelet_object_changed(selected, desired.service));

  object not_ready = desired.endpoints;
  not_ready["subsets"].as_array()[0].as_object()["notReadyAddresses"] =
      boost::json::array{object{{"ip", "10.0.0.5"}}};
  EXPECT_TRUE(kubelet_object_changed(not_ready, desired.endpoints));
}

}  // namespace
}  // namespace aop::agent
