#include "reconcile/telegraf/validation.hpp"

#include "k8s/duration.hpp"
#include "net/redact.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include <boost/url/parse.hpp>
#include <boost/url/scheme.hpp>
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

// Go's time package: the units ParseDuration accepts, in nanoseconds.
bool is_digit(char c) {
  return c >= '0' && c <= '9';
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
  if (url.empty()) return "the URL is empty";
  if (url.find('$') != std::string_view::npos) {
    return "the URL contains `$`, which telegraf would expand as an environment variable "
           "(exposing ${INFLUX_TOKEN}); percent-encode it as %24";
  }
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) {
    return "not an absolute URL: expected http://host[:port]/path, with spaces, quotes and "
           "non-ASCII characters percent-encoded";
  }
  const boost::urls::url_view& u = *parsed;
  if (u.scheme_id() != boost::urls::scheme::http && u.scheme_id() != boost::urls::scheme::https) {
    return "scheme \"" + std::string(u.scheme()) + "\" is not allowed; use http or https";
  }
  if (!u.has_authority() || u.encoded_host().empty()) return "the URL has no host";
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
  if (u.has_port()) {
    std::string_view port = u.port();
    if (port.empty()) return "the URL has an empty port";
    std::uint32_t n = 0;
    for (char c : port) {
      n = n * 10 + static_cast<std::uint32_t>(c - '0');
      if (n > 65535) break;
    }
    if (n == 0 || n > 65535) return "port " + std::string(port) + " is not in 1..65535";
  }
  return std::nullopt;
}

Complaint check_positive_duration(std::string_view text) {
  auto d = k8s::parse_go_duration(text);
  if (!d) return d.error().message + "; expected a Go duration such as 30s or 2m";
  if (d->count() <= 0) return "duration " + describe(text) + " must be positive";
  return std::nullopt;
}

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0u) != 0x80u) return false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

Complaint check_tag_text(std::string_view text) {
  if (text.empty()) return "is empty";
  if (!is_valid_utf8(text)) return "is not valid UTF-8";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xC2 && i + 1 < text.size() &&
                    static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (c < 0x20 || c == 0x7F || c1) {
      return "contains a control character (such as a newline or tab); tags must be a single "
             "line of printable text";
    }
  }
  if (text.find('$') != std::string_view::npos) {
    return "contains `$`, which telegraf would expand as an environment variable (exposing "
           "${INFLUX_TOKEN})";
  }
  return std::nullopt;
}

bool is_dns_label(std::string_view text) {
  if (text.empty() || text.size() > 63) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool alnum = (c >= 'a' && c <= 'z') || is_digit(c);
    if (alnum) continue;
    if (c == '-' && i != 0 && i + 1 != text.size()) continue;
    return false;
  }
  return true;
}

std::string describe(std::string_view text) {
  // Redacted before it is cut: a cut URL might no longer look like one.
  std::string redacted;
  if (net::needs_redaction(text)) {
    redacted = net::redact(text);
    text = redacted;
  }
  constexpr std::size_t kMax = 80;
  constexpr std::string_view hex = "0123456789abcdef";
  const bool utf8 = is_valid_utf8(text);
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    const auto c = static_cast<unsigned char>(ch);
    // Cut only at a character boundary, so the message stays valid UTF-8.
    if (i >= kMax && (!utf8 || (c & 0xC0u) != 0x80u)) {
      out += "...";
      break;
    }
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xFu];
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

}  // namespace aop::telegraf
