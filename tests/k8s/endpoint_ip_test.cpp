// The Endpoints address rule, case by case as kube-apiserver v1.24 answered the same
// addresses (422 with these details, or accepted).
#include "k8s/endpoint_ip.hpp"

#include <gtest/gtest.h>

namespace aop::k8s {
namespace {

constexpr const char* kLoopback = "may not be in the loopback range (127.0.0.0/8, ::1/128)";
constexpr const char* kLinkLocal = "may not be in the link-local range (169.254.0.0/16, fe80::/10)";
constexpr const char* kMulticast =
    "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)";

TEST(EndpointIp, RefusedAsTheApiServerRefusesThem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"127.0.0.1", kLoopback},
      {"127.255.0.9", kLoopback},
      {"127.000.000.001", kLoopback},
      {"::1", kLoopback},
      {"::ffff:127.0.0.1", kLoopback},
      {"169.254.1.1", kLinkLocal},
      {"::ffff:169.254.0.1", kLinkLocal},
      {"fe80::1", kLinkLocal},
      {"FE80::1", kLinkLocal},
      {"febf::1", kLinkLocal},
      {"0.0.0.0", "may not be unspecified (0.0.0.0)"},
      {"::", "may not be unspecified (::)"},
      {"224.0.0.5", kMulticast},
      {"224.0.0.255", kMulticast},
      {"ff02::1", kMulticast},
      {"ff12::1", kMulticast},
      {"ff32::1", kMulticast},
      {"not-an-ip", "must be a valid IP address"},
      {"1.2.3", "must be a valid IP address"},
      {"1.2.3.256", "must be a valid IP address"},
      {" 10.0.0.1", "must be a valid IP address"},
      {"10.0.0.1%eth0", "must be a valid IP address"},
      {"", "must be a valid IP address"},
  };
  for (const auto& [ip, why] : cases) {
    EXPECT_EQ(endpoint_ip_problem(ip), why) << ip;
  }
}

TEST(EndpointIp, AcceptedAsTheApiServerAcceptsThem) {
  for (const char* ip :
       {"10.0.0.1", "010.0.0.1", "192.0.2.7", "100.64.0.1", "239.1.1.1", "224.0.1.1", "240.0.0.1",
        "255.255.255.255", "2001:db8::1", "ff05::1", "::ffff:10.0.0.1", "::127.0.0.1", "fec0::1"}) {
    EXPECT_EQ(endpoint_ip_problem(ip), std::nullopt) << ip;
  }
}

}  // namespace
}  // namespace aop::k8s
