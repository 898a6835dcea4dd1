// Behaviour matched to kube-apiserver v1.24 by sending both the same requests: Endpoints
// address validation and port defaulting, and the empty maps and lists the API server
// leaves out of what it returns (Go's omitempty).
#include "tests/sim/sim_fixture.hpp"

namespace aop::sim::testing {
namespace {

class Builtin : public SimTest {
 protected:
  Response endpoints(const std::string& subsets) {
    return call("POST", "/api/v1/namespaces/default/endpoints",
                R"({"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"e"},"subsets":)" +
                    subsets + "}");
  }
  static std::vector<std::string> causes(const Response& r) {
    std::vector<std::string> out;
    const json::value status = json::parse(r.body_string());
    for (const auto& c : status.at("details").at("causes").as_array()) {
      out.push_back(std::string(c.at("field").as_string()) + ": " +
                    std::string(c.at("message").as_string()));
    }
    return out;
  }
};

TEST_F(Builtin, EndpointsAddressesTheApiServerRefuses) {
  const auto r = endpoints(
      R"([{"addresses":[{"ip":"10.0.0.1"},{"ip":"127.0.0.1"}],"notReadyAddresses":[{"ip":"::1"}],
           "ports":[{"port":1}]}])");
  ASSERT_EQ(r.status, 422);
  EXPECT_EQ(causes(r),
            (std::vector<std::string>{
                "subsets[0].addresses[1].ip: Invalid value: \"127.0.0.1\": may not be in the "
                "loopback range (127.0.0.0/8, ::1/128)",
                "subsets[0].notReadyAddresses[0].ip: Invalid value: \"::1\": may not be in the "
                "loopback range (127.0.0.0/8, ::1/128)"}));
  const auto not_ip = endpoints(R"([{"addresses":[{"ip":"not-an-ip"}],"ports":[{"port":1}]}])");
  EXPECT_EQ(causes(not_ip),
            (std::vector<std::string>{
                "subsets[0].addresses[0].ip: Invalid value: \"not-an-ip\": must be a valid IP "
                "address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "subsets[0].addresses[0].ip: Invalid value: \"not-an-ip\": must be a valid IP "
                "address"}));
  const auto none = endpoints(R"([{"ports":[{"port":1}]}])");
  EXPECT_EQ(causes(none),
            (std::vector<std::string>{
                "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"}));
}

TEST_F(Builtin, EndpointsPortsAreValidatedAndDefaultToTcp) {
  const auto two =
      endpoints(R"([{"addresses":[{"ip":"10.0.0.1"}],"ports":[{"port":1},{"port":2}]}])");
  EXPECT_EQ(causes(two), (std::vector<std::string>{"subsets[0].ports[0].name: Required value",
                                                   "subsets[0].ports[1].name: Required value"}));
  const auto bad = endpoints(
      R"([{"addresses":[{"ip":"10.0.0.1"}],"ports":[{"port":0,"name":"Bad_Name","protocol":"FOO"}]}])");
  EXPECT_EQ(causes(bad),
            (std::vector<std::string>{
                "subsets[0].ports[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 "
                "label must consist of lower case alphanumeric characters or '-', and must start "
                "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
                "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, "
                "inclusive",
                "subsets[0].ports[0].protocol: Unsupported value: \"FOO\": supported values: "
                "\"SCTP\", \"TCP\", \"UDP\""}));
  const auto ok =
      endpoints(R"([{"addresses":[{"ip":"10.0.0.1"}],"ports":[{"port":10250,"name":"x"}]}])");
  ASSERT_EQ(ok.status, 201) << ok.body_string();
  EXPECT_EQ(json::parse(ok.body_string()).at("subsets").at(0).at("ports").at(0).at("protocol"),
            "TCP");
  EXPECT_EQ(endpoints(R"([{"addresses":[{"ip":"10.0.0.2"}]}])").status, 409)
      << "no ports is valid (the name is taken)";
}

TEST_F(Builtin, EmptyMapsAndListsAreLeftOut) {
  const auto cm = post("/api/v1/namespaces/default/configmaps", json::parse(R"({
      "apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"e","labels":{},"annotations":{},"finalizers":[],"ownerReferences":[]},
      "data":{},"binaryData":{}})"));
  for (const char* field : {"labels", "annotations", "finalizers", "ownerReferences"}) {
    EXPECT_FALSE(cm.at("metadata").as_object().contains(field)) << field;
  }
  EXPECT_FALSE(cm.as_object().contains("data"));
  EXPECT_FALSE(cm.as_object().contains("binaryData"));
  const auto secret = post("/api/v1/namespaces/default/secrets", json::parse(R"({
      "apiVersion":"v1","kind":"Secret","metadata":{"name":"e"},"data":{}})"));
  EXPECT_FALSE(secret.as_object().contains("data")) << json::serialize(secret);
  EXPECT_EQ(secret.at("type"), "Opaque");
}

}  // namespace
}  // namespace aop::sim::testing
