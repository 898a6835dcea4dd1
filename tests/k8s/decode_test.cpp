#include "k8s/decode.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

namespace json = boost::json;
using aop::k8s::Decoder;

namespace {

struct Endpoint {
  std::string port;
  std::optional<bool> honor;
  std::vector<std::string> params;
};

}  // namespace

TEST(Decoder, ReportsJsonPathsOfEveryError) {
  const auto v = json::parse(R"({"spec":{"endpoints":[{"port":"http"},{"port":8080,"honor":"yes"},
    {"port":"ok","params":["a",2]}],"replicas":"three"}})");
  Decoder d;
  const auto* spec = d.object(v.as_object(), "spec");
  ASSERT_NE(spec, nullptr);
  const auto scope = d.field("spec");
  auto endpoints = d.list(*spec, "endpoints", [&](const json::object& o) {
    return Endpoint{d.string(o, "port"), d.opt_bool(o, "honor"), d.string_list(o, "params")};
  });
  d.opt_int64(*spec, "replicas");
  ASSERT_EQ(endpoints.size(), 3u);
  EXPECT_EQ(endpoints[0].port, "http");
  EXPECT_EQ(endpoints[1].port, "");  // wrong type decodes to the default
  EXPECT_EQ(endpoints[2].params, std::vector<std::string>{"a"});
  ASSERT_EQ(d.errors().size(), 4u) << d.message();
  EXPECT_EQ(d.errors()[0], "spec.endpoints[1].port: expected string, got number");
  EXPECT_EQ(d.errors()[1], "spec.endpoints[1].honor: expected boolean, got string");
  EXPECT_EQ(d.errors()[2], "spec.endpoints[2].params[1]: expected string, got number");
  EXPECT_EQ(d.errors()[3], "spec.replicas: expected integer, got string");
}

TEST(Decoder, NullAndMissingAreNilNotErrors) {
  const auto v = json::parse(R"({"a":null,"list":[],"map":{}})");
  Decoder d;
  const auto& o = v.as_object();
  EXPECT_FALSE(d.opt_string(o, "a").has_value());
  EXPECT_FALSE(d.opt_string_list(o, "missing").has_value());
  ASSERT_TRUE(d.opt_string_list(o, "list").has_value());  // [] is not nil
  EXPECT_TRUE(d.opt_string_list(o, "list")->empty());
  ASSERT_TRUE(d.opt_string_map(o, "map").has_value());
  EXPECT_EQ(d.object(o, "a"), nullptr);
  EXPECT_TRUE(d.ok());
}

TEST(Decoder, IntegersAcceptIntegralNumbersOnly) {
  const auto v = json::parse(R"({"a":3,"b":3.0,"c":3.5,"d":-1,"e":18446744073709551615})");
  Decoder d;
  const auto& o = v.as_object();
  EXPECT_EQ(d.opt_int64(o, "a"), 3);
  EXPECT_EQ(d.opt_int64(o, "b"), 3);
  EXPECT_FALSE(d.opt_int64(o, "c").has_value());
  EXPECT_FALSE(d.opt_uint64(o, "d").has_value());
  EXPECT_EQ(d.opt_uint64(o, "e"), 18446744073709551615ULL);
  EXPECT_EQ(d.errors().size(), 2u);
}

TEST(Decoder, RootPathPrefixesMessages) {
  Decoder d("ServiceMonitor apps/web");
  d.error_at("spec", "bad");
  EXPECT_EQ(d.message(), "ServiceMonitor apps/web.spec: bad");
}
