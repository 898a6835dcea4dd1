#include "k8s/duration.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <utility>

namespace aop::k8s {

namespace {

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

// |int64 min|: the largest magnitude a duration may have (only when negative).
constexpr std::uint64_t kMaxMagnitude = std::uint64_t{1} << 63;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::string quoted_prefix(std::string_view text) {
  constexpr std::size_t kMax = 80;  // keep messages short whatever the input
  std::string out = "\"";
  out += text.substr(0, kMax);
  if (text.size() > kMax) out += "...";
  out += '"';
  return out;
}

}  // namespace

Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text) {
  const auto invalid = [&] { return make_error("invalid duration " + quoted_prefix(text)); };
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds{0};
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
    if (u == 0) return make_error("missing unit in duration " + quoted_prefix(text));
    const std::string_view unit_text = s.substr(0, u);
    s.remove_prefix(u);
    std::uint64_t unit = 0;
    for (const auto& [name, ns] : kUnits) {
      if (name == unit_text) unit = ns;
    }
    if (unit == 0) {
      return make_error("unknown unit " + quoted_prefix(unit_text) + " in duration " +
                        quoted_prefix(text) + " (use ns, us, ms, s, m or h)");
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
      return std::chrono::nanoseconds{std::numeric_limits<std::int64_t>::min()};
    }
    return std::chrono::nanoseconds{-static_cast<std::int64_t>(total)};
  }
  if (total > kMaxMagnitude - 1) return invalid();
  return std::chrono::nanoseconds{static_cast<std::int64_t>(total)};
}

std::string format_go_duration(std::chrono::nanoseconds d) {
  if (d.count() == 0) return "0s";
  std::string out;
  // Work on the magnitude as unsigned so that int64 min formats too.
  std::uint64_t n = d.count() < 0 ? 0 - static_cast<std::uint64_t>(d.count())
                                  : static_cast<std::uint64_t>(d.count());
  if (d.count() < 0) out += '-';
  const auto with_fraction = [](std::uint64_t value, std::uint64_t unit, int digits) {
    std::string s = std::to_string(value / unit);
    if (const std::uint64_t rem = value % unit; rem != 0) {
      std::string f = std::to_string(rem);
      f.insert(0, static_cast<std::size_t>(digits) - f.size(), '0');
      while (!f.empty() && f.back() == '0') f.pop_back();
      s += "." + f;
    }
    return s;
  };
  if (n < 1'000) return out + std::to_string(n) + "ns";
  if (n < 1'000'000) return out + with_fraction(n, 1'000, 3) + "\xC2\xB5s";
  if (n < 1'000'000'000) return out + with_fraction(n, 1'000'000, 6) + "ms";
  const std::uint64_t hours = n / 3'600'000'000'000;
  n %= 3'600'000'000'000;
  const std::uint64_t minutes = n / 60'000'000'000;
  n %= 60'000'000'000;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  return out + with_fraction(n, 1'000'000'000, 9) + "s";
}

}  // namespace aop::k8s
