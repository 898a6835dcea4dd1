#include "reconcile/telegraf/validation.hpp"

#include "net/redact.hpp"
#include "reconcile/validation/durations.hpp"
#include "reconcile/validation/kubernetes.hpp"
#include "reconcile/validation/text.hpp"
#include "reconcile/validation/url.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace aop::telegraf {
namespace {

constexpr std::string_view kNoCredentials =
    "credentials are not accepted in scrape URLs (the annotation and the generated ConfigMap "
    "are readable by anyone who can read the namespace); scrape an endpoint that needs none";

bool is_name_char(char c, bool first) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
    return true;
  }
  return !first && (c == '.' || c == '-');
}

}  // namespace

Complaint check_endpoint_name(std::string_view name) {
  if (name.empty()) return "the name is empty";
  if (name.size() > 63) {
    return "the name is " + std::to_string(name.size()) +
           " characters long; at most 63 are allowed";
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!is_name_char(name[i], i == 0)) {
      return "the name must match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$ (letters, digits, `_`, "
             "and `.` or `-` after the first character)";
    }
  }
  return std::nullopt;
}

Complaint check_http_url(std::string_view url) {
  // The shared rule (scheme, host, port, `$`), whose messages quote the URL redacted.
  if (auto c = validation::check_url(url, {.refuse_dollar = true})) return c;
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) return "not an absolute URL";  // check_url has parsed it already
  const boost::urls::url_view& u = *parsed;
  // Credentials do not belong here: annotations, the generated ConfigMap and the
  // Events quoting them are readable by anyone who may read the namespace.
  if (u.has_userinfo()) {
    return std::string(u.has_password() ? "the URL contains a password"
                                        : "the URL contains a user") +
           " (user-info before the host); " + std::string(kNoCredentials);
  }
  for (const auto& param : u.params()) {
    if (net::is_credential_key(param.key)) {
      return "query parameter " + describe(param.key) + " looks like a credential; " +
             std::string(kNoCredentials);
    }
  }
  if (u.has_fragment()) {
    // Not sent to the server, but written to the ConfigMap: the same rule.
    const std::string_view fragment = u.encoded_fragment();
    std::size_t start = 0;
    while (start < fragment.size()) {
      std::size_t end = fragment.find_first_of("&;", start);
      if (end == std::string_view::npos) end = fragment.size();
      const std::string_view param = fragment.substr(start, end - start);
      if (const auto eq = param.find('=');
          eq != std::string_view::npos && net::is_credential_key(param.substr(0, eq))) {
        return "fragment parameter " + describe(param.substr(0, eq)) +
               " looks like a credential; " + std::string(kNoCredentials);
      }
      start = end + 1;
    }
  }
  return std::nullopt;
}

Complaint check_positive_duration(std::string_view text) {
  if (text.empty()) return "the duration is empty; expected a Go duration such as 30s or 2m";
  return validation::check_go_duration(text, {.allow_zero = false});
}

bool is_valid_utf8(std::string_view text) {
  return validation::is_valid_utf8(text);
}

Complaint check_tag_text(std::string_view text) {
  if (text.empty()) return "is empty";
  if (auto c = validation::check_single_line(text)) return c;
  if (text.find('$') != std::string_view::npos) {
    return "contains `$`, which telegraf would expand as an environment variable (exposing "
           "${INFLUX_TOKEN})";
  }
  return std::nullopt;
}

bool is_dns_label(std::string_view text) {
  return validation::is_dns_label(text);
}

std::string describe(std::string_view text) {
  return validation::describe(text);
}

}  // namespace aop::telegraf
