#include "reconcile/telegraf/validation.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include <boost/url/parse.hpp>
#include <boost/url/scheme.hpp>
#include <boost/url/url_view.hpp>

namespace aop::telegraf {
namespace {

bool is_name_char(char c, bool first) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
    return true;
  }
  return !first && (c == '.' || c == '-');
}

// Go's time package: the units ParseDuration accepts, in nanoseconds.
constexpr std::array<std::pair<std::string_view, std::uint64_t>, 8> kUnits{{
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // U+00B5 micro sign
    {"\xCE\xBCs", 1'000},  // U+03BC Greek small letter mu
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

constexpr std::uint64_t kMaxMagnitude = std::uint64_t{1} << 63;

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
  if (u.has_password()) {
    return "the URL contains a password; credentials in scrape URLs are not supported "
           "(they would be stored in clear text in the ConfigMap)";
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

DurationParse parse_go_duration(std::string_view text) {
  const std::string quoted = describe(text);
  auto invalid = [&] { return DurationParse{std::nullopt, "invalid duration " + quoted}; };
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return DurationParse{std::chrono::nanoseconds{0}, {}};
  if (s.empty()) return invalid();
  std::uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || is_digit(s[0]))) return invalid();
    // Integer part; overflow is an error.
    std::uint64_t whole = 0;
    std::size_t i = 0;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      if (whole > kMaxMagnitude / 10) return invalid();
      whole = whole * 10 + static_cast<std::uint64_t>(s[i] - '0');
      if (whole > kMaxMagnitude) return invalid();
    }
    const bool pre = i > 0;
    s.remove_prefix(i);
    // Fractional part: digits beyond what fits are consumed and ignored, as in Go.
    std::uint64_t fraction = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      bool overflow = false;
      std::size_t j = 0;
      for (; j < s.size() && is_digit(s[j]); ++j) {
        if (overflow) continue;
        if (fraction > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
          overflow = true;
          continue;
        }
        fraction = fraction * 10 + static_cast<std::uint64_t>(s[j] - '0');
        scale *= 10;
      }
      post = j > 0;
      s.remove_prefix(j);
    }
    if (!pre && !post) return invalid();
    std::size_t u = 0;
    while (u < s.size() && s[u] != '.' && !is_digit(s[u])) ++u;
    if (u == 0) return DurationParse{std::nullopt, "missing unit in duration " + quoted};
    const std::string_view unit_text = s.substr(0, u);
    s.remove_prefix(u);
    std::uint64_t unit = 0;
    for (const auto& [name, ns] : kUnits) {
      if (name == unit_text) unit = ns;
    }
    if (unit == 0) {
      return DurationParse{std::nullopt, "unknown unit " + describe(unit_text) + " in duration " +
                                             quoted + " (use ns, us, ms, s, m or h)"};
    }
    if (whole > kMaxMagnitude / unit) return invalid();
    whole *= unit;
    if (fraction > 0) {
      whole += static_cast<std::uint64_t>(static_cast<double>(fraction) *
                                          (static_cast<double>(unit) / scale));
      if (whole > kMaxMagnitude) return invalid();
    }
    total += whole;
    if (total > kMaxMagnitude) return invalid();
  }
  if (negative) {
    // -2^63 is representable; anything else fits by the checks above.
    if (total == kMaxMagnitude) {
      return DurationParse{std::chrono::nanoseconds{std::numeric_limits<std::int64_t>::min()}, {}};
    }
    return DurationParse{std::chrono::nanoseconds{-static_cast<std::int64_t>(total)}, {}};
  }
  if (total > kMaxMagnitude - 1) return invalid();
  return DurationParse{std::chrono::nanoseconds{static_cast<std::int64_t>(total)}, {}};
}

Complaint check_positive_duration(std::string_view text) {
  auto d = parse_go_duration(text);
  if (!d.value) return d.error + "; expected a Go duration such as 30s or 2m";
  if (d.value->count() <= 0) return "duration " + describe(text) + " must be positive";
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
