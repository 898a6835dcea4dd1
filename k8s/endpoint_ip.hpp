// The API server's rule for the `ip` of an Endpoints address (core/v1 validation of
// EndpointAddress): it must parse as an IP address, and may be neither unspecified
// (0.0.0.0, ::), loopback (127.0.0.0/8, ::1), link-local unicast (169.254.0.0/16,
// fe80::/10) nor link-local multicast (224.0.0.0/24, ffX2::/16). IPv4-mapped IPv6
// addresses are judged by their IPv4 part, and IPv4 parts may have leading zeros
// ("010.0.0.1"), as Go's net.ParseIP in kube-apiserver accepts them. Everything else
// (private, global multicast, broadcast, IPv4-compatible "::a.b.c.d") is accepted.
//
//   if (auto why = endpoint_ip_problem("127.0.0.1")) ...  // "may not be in the loopback ..."
//
// Used by kube-sim's Endpoints validation and by the operator, which leaves such
// addresses out of the Endpoints it writes instead of having the whole object refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace aop::k8s {

// nullopt when the API server accepts `ip`; otherwise its words for why not (the detail
// of the 422's field error, e.g. "may not be in the loopback range (127.0.0.0/8,
// ::1/128)").
std::optional<std::string> endpoint_ip_problem(std::string_view ip);

}  // namespace aop::k8s
