// Protobuf request bodies, as kubectl's typed create commands send them.
#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tools/kube-sim/protobuf.hpp"

namespace aop::sim {
namespace {

namespace json = boost::json;

// A minimal protobuf writer for building test bodies.
std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string field(int n, const std::string& bytes) {
  return varint((n << 3) | 2) + varint(bytes.size()) + bytes;
}
std::string field_varint(int n, std::uint64_t v) {
  return varint(n << 3) + varint(v);
}
std::string entry(int n, const std::string& k, const std::string& v) {
  return field(n, field(1, k) + field(2, v));
}
std::string envelope(const std::string& api_version, const std::string& kind,
                     const std::string& raw) {
  return std::string("k8s\0", 4) + field(1, field(1, api_version) + field(2, kind)) + field(2, raw);
}

TEST(Protobuf, ConfigMap) {
  const std::string meta =
      field(1, "cfg") + field(3, "demo") + entry(11, "app", "x") + field(5, "");
  const std::string raw = field(1, meta) + entry(2, "a", "b") +
                          entry(3, "bin", std::string("\x00\x01", 2)) + field_varint(4, 0) +
                          field(99, "unknown field is skipped");
  auto obj = decode_k8s_protobuf(envelope("v1", "ConfigMap", raw));
  ASSERT_TRUE(obj) << obj.error().message;
  EXPECT_EQ(json::value(*obj), json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"cfg","namespace":"demo","labels":{"app":"x"}},
      "data":{"a":"b"},"binaryData":{"bin":"AAE="},"immutable":false})"));
}

TEST(Protobuf, DeploymentKeepsPointerZerosAndIntOrString) {
  const std::string container =
      field(1, "web") + field(2, "nginx:1") + field(6, field_varint(3, 80)) + field(8, "");
  const std::string pod = field(2, container);
  const std::string tmpl = field(1, entry(11, "app", "web")) + field(2, pod);
  const std::string strategy =
      field(1, "RollingUpdate") +
      field(2, field(1, field_varint(1, 1) + field(3, "25%")) + field(2, field_varint(2, 1)));
  const std::string spec =
      field_varint(1, 0) + field(2, entry(1, "app", "web")) + field(3, tmpl) + field(4, strategy);
  auto obj = decode_k8s_protobuf(
      envelope("apps/v1", "Deployment", field(1, field(1, "web")) + field(2, spec)));
  ASSERT_TRUE(obj) << obj.error().message;
  const auto& s = obj->at("spec");
  EXPECT_EQ(s.at("replicas"), 0);  // *int32 set to 0 stays
  EXPECT_EQ(s.at("strategy").at("rollingUpdate"),
            json::parse(R"({"maxUnavailable":"25%","maxSurge":1})"));
  EXPECT_EQ(
      s.at("template").at("spec").at("containers"),
      json::parse(
          R"([{"name":"web","image":"nginx:1","ports":[{"containerPort":80}],"resources":{}}])"));
}

TEST(Protobuf, UnknownKindsAndGarbageAreErrors) {
  EXPECT_FALSE(decode_k8s_protobuf("{}"));
  EXPECT_FALSE(decode_k8s_protobuf(envelope("v1", "Pod", "")));
  EXPECT_FALSE(decode_k8s_protobuf(std::string("k8s\0", 4) + "\x12\x7f"));  // truncated
}

}  // namespace
}  // namespace aop::sim
