#include "reconcile/validation/url.hpp"

#include <string>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include "reconcile/validation/text.hpp"

namespace aop::validation {
namespace {

Complaint check_port(std::string_view port) {
  if (port.empty()) return "the URL has an empty port";
  std::uint32_t n = 0;
  for (const char c : port) {
    if (c < '0' || c > '9') return "port " + describe(port) + " is not a number";
    n = n * 10 + static_cast<std::uint32_t>(c - '0');
    if (n > 65535) break;
  }
  if (n == 0 || n > 65535) return "port " + std::string(port) + " is not in 1..65535";
  return std::nullopt;
}

}  // namespace

Complaint check_url(std::string_view url, const UrlRule& rule) {
  if (url.empty()) return "the URL is empty";
  if (check_single_line(url)) {
    return "the URL " + describe(url) +
           " is not an absolute URL (it contains a control character or invalid UTF-8)";
  }
  if (url.find(' ') != std::string_view::npos) {
    return "the URL " + describe(url) +
           " is not an absolute URL (it contains a space; percent-encode it as %20)";
  }
  if (rule.refuse_dollar && url.find('$') != std::string_view::npos) {
    return "the URL contains `$`, which would be expanded as an environment variable "
           "(exposing the environment, such as ${INFLUX_TOKEN}); percent-encode it as %24";
  }
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) {
    return "the URL " + describe(url) + " is not an absolute URL: expected " +
           std::string(rule.schemes.front()) +
           "://host[:port][/path], with quotes and non-ASCII characters percent-encoded";
  }
  const boost::urls::url_view& u = *parsed;
  const std::string scheme = ascii_lower(u.scheme());
  if (!is_one_of(scheme, rule.schemes)) {
    return "scheme " + describe(u.scheme()) + " is not allowed here; use " + list_of(rule.schemes);
  }
  if (!u.has_authority() || u.encoded_host().empty()) {
    return "the URL " + describe(url) + " has no host";
  }
  if (rule.refuse_password && u.has_password()) {
    return "the URL contains a password; use the basicAuth settings instead (credentials in "
           "the URL would be stored in clear text)";
  }
  if (u.has_port()) return check_port(u.port());
  return std::nullopt;
}

Complaint check_host_port(std::string_view address) {
  if (address.empty()) return "the address is empty";
  if (auto c = check_single_line(address)) return "the address " + *c;
  if (address.find("://") != std::string_view::npos ||
      address.find('/') != std::string_view::npos) {
    return "the address " + describe(address) +
           " must be host or host:port, without a scheme or path";
  }
  // Bracketed IPv6 literal, or host[:port].
  std::string_view host = address;
  std::string_view port;
  if (address.front() == '[') {
    const auto close = address.find(']');
    if (close == std::string_view::npos)
      return "the address " + describe(address) + " has an unclosed [";
    host = address.substr(0, close + 1);
    const auto rest = address.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return "the address " + describe(address) + " is not host:port";
      port = rest.substr(1);
      if (auto c = check_port(port)) return c;
    }
  } else if (const auto colon = address.rfind(':'); colon != std::string_view::npos) {
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (auto c = check_port(port)) return c;
  }
  if (host.empty()) return "the address " + describe(address) + " has no host";
  const auto parsed = boost::urls::parse_authority(host);
  if (!parsed || address.find_first_of(" @?#") != std::string_view::npos) {
    return "the address " + describe(address) + " is not a valid host[:port]";
  }
  return std::nullopt;
}

Complaint check_url_or_host_port(std::string_view text) {
  if (text.find("://") != std::string_view::npos) return check_url(text);
  return check_host_port(text);
}

}  // namespace aop::validation
