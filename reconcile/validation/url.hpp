// URLs and addresses that reach a configuration, parsed with Boost.URL (RFC 3986), with
// the rule of the component that uses them.
#pragma once

#include <span>
#include <string_view>

#include "reconcile/validation/report.hpp"

namespace aop::validation {

inline constexpr std::string_view kHttpSchemesList[] = {"http", "https"};
inline constexpr std::span<const std::string_view> kHttpSchemes = kHttpSchemesList;
// Proxies: what Go's HTTP client supports.
inline constexpr std::string_view kProxySchemesList[] = {"http", "https", "socks5"};
inline constexpr std::span<const std::string_view> kProxySchemes = kProxySchemesList;

struct UrlRule {
  // Allowed schemes, lower case (compared case-insensitively).
  std::span<const std::string_view> schemes = kHttpSchemes;
  // Refuse user:password@ (the credentials would sit in clear text in the configuration).
  bool refuse_password = false;
  // Refuse `$` anywhere (telegraf expands $VAR in its whole configuration file).
  bool refuse_dollar = false;
};

// An absolute URL of one of the rule's schemes with a non-empty host, a port (if any) in
// 1..65535, on one line. Empty text is reported as empty.
Complaint check_url(std::string_view url, const UrlRule& rule = {});

// `host[:port]` as a scrape target address (`__address__`): no scheme, no path, a
// non-empty host, a port in 1..65535 when given. Prometheus refuses an address with `/`.
Complaint check_host_port(std::string_view address);

// Either a URL (http/https) or host[:port]: the Kubernetes API server address of
// kubernetes_sd_configs.
Complaint check_url_or_host_port(std::string_view text);

}  // namespace aop::validation
