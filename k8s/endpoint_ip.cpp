#include "k8s/endpoint_ip.hpp"

#include <arpa/inet.h>

#include <array>
#include <cstdint>

namespace aop::k8s {
namespace {

using Bytes = std::array<std::uint8_t, 16>;

// Dotted-quad IPv4 with decimal parts, leading zeros allowed (Go's
// sloppy parser, which kube-apiserver uses). Writes the IPv4-mapped form into `out`.
bool parse_ipv4(std::string_view s, Bytes& out) {
  out = Bytes{};
  out[10] = 0xff;
  out[11] = 0xff;
  int part = 0;
  std::size_t i = 0;
  while (part < 4) {
    std::size_t digits = 0;
    unsigned value = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      value = value * 10 + static_cast<unsigned>(s[i] - '0');
      if (value > 255) return false;
      ++i;
      ++digits;
    }
    if (digits == 0) return false;
    out[12 + static_cast<std::size_t>(part)] = static_cast<std::uint8_t>(value);
    ++part;
    if (part < 4) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
  }
  return i == s.size();
}

bool parse_ip(std::string_view s, Bytes& out) {
  if (s.find(':') == std::string_view::npos) return parse_ipv4(s, out);
  if (s.find('%') != std::string_view::npos) return false;  // no zones
  const std::string z(s);
  return ::inet_pton(AF_INET6, z.c_str(), out.data()) == 1;
}

bool is_v4(const Bytes& b) {
  for (std::size_t i = 0; i < 10; ++i) {
    if (b[i] != 0) return false;
  }
  return b[10] == 0xff && b[11] == 0xff;
}

}  // namespace

std::optional<std::string> endpoint_ip_problem(std::string_view ip) {
  Bytes b{};
  if (!parse_ip(ip, b)) return std::string("must be a valid IP address");
  const std::string shown(ip);
  if (is_v4(b)) {
    const std::uint8_t a0 = b[12], a1 = b[13], a2 = b[14], a3 = b[15];
    if (a0 == 0 && a1 == 0 && a2 == 0 && a3 == 0) {
      return "may not be unspecified (" + shown + ")";
    }
    if (a0 == 127) return std::string("may not be in the loopback range (127.0.0.0/8, ::1/128)");
    if (a0 == 169 && a1 == 254) {
      return std::string("may not be in the link-local range (169.254.0.0/16, fe80::/10)");
    }
    if (a0 == 224 && a1 == 0 && a2 == 0) {
      return std::string("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)");
    }
    return std::nullopt;
  }
  bool zero = true;
  for (auto x : b) zero = zero && x == 0;
  if (zero) return "may not be unspecified (" + shown + ")";
  bool loopback = b[15] == 1;
  for (std::size_t i = 0; i < 15; ++i) loopback = loopback && b[i] == 0;
  if (loopback) return std::string("may not be in the loopback range (127.0.0.0/8, ::1/128)");
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) {
    return std::string("may not be in the link-local range (169.254.0.0/16, fe80::/10)");
  }
  if (b[0] == 0xff && (b[1] & 0x0f) == 0x02) {
    return std::string("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)");
  }
  return std::nullopt;
}

}  // namespace aop::k8s
