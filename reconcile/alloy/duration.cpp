// Duration conversions; see duration.hpp.
#include "reconcile/alloy/duration.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace aop::alloy {
namespace {

struct Unit {
  std::string_view name;
  std::uint64_t ms;
  bool go;  // also a Go duration unit
};

constexpr std::uint64_t kSecond = 1000;
constexpr std::uint64_t kMinute = 60 * kSecond;
constexpr std::uint64_t kHour = 60 * kMinute;
constexpr std::uint64_t kDay = 24 * kHour;

// Largest first: the order the grammar requires.
constexpr std::array<Unit, 7> kUnits = {{{"y", 365 * kDay, false},
                                         {"w", 7 * kDay, false},
                                         {"d", kDay, false},
                                         {"h", kHour, true},
                                         {"m", kMinute, true},
                                         {"s", kSecond, true},
                                         {"ms", 1, true}}};

// Go durations are int64 nanoseconds.
constexpr std::uint64_t kMaxMs =
    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / 1000000;

struct Parsed {
  std::uint64_t ms = 0;
  bool go_units_only = true;
};

std::optional<Parsed> parse(std::string_view s) {
  if (s == "0") return Parsed{};
  if (s.empty()) return std::nullopt;
  Parsed p;
  std::size_t next_unit = 0;  // units must appear in kUnits order, each at most once
  std::size_t i = 0;
  while (i < s.size()) {
    std::uint64_t n = 0;
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (n > kMaxMs) return std::nullopt;
      n = n * 10 + static_cast<std::uint64_t>(s[i] - '0');
      ++i;
    }
    if (i == start || i == s.size()) return std::nullopt;
    const std::string_view unit = s.substr(i, 2) == "ms" ? s.substr(i, 2) : s.substr(i, 1);
    std::size_t u = next_unit;
    while (u < kUnits.size() && kUnits[u].name != unit) ++u;
    if (u == kUnits.size()) return std::nullopt;
    i += unit.size();
    next_unit = u + 1;
    if (n > kMaxMs / kUnits[u].ms) return std::nullopt;
    p.ms += n * kUnits[u].ms;
    if (p.ms > kMaxMs) return std::nullopt;
    p.go_units_only = p.go_units_only && kUnits[u].go;
  }
  return p;
}

}  // namespace

std::optional<std::uint64_t> parse_prometheus_duration(std::string_view text) {
  const auto p = parse(text);
  if (!p) return std::nullopt;
  return p->ms;
}

std::optional<std::string> go_duration(std::string_view prometheus_text) {
  const auto p = parse(prometheus_text);
  if (!p) return std::nullopt;
  if (p->go_units_only) return std::string(prometheus_text);
  if (p->ms == 0) return std::string("0s");
  std::string out;
  std::uint64_t rest = p->ms;
  for (const auto& u : kUnits) {
    if (!u.go) continue;
    if (const auto v = rest / u.ms; v > 0) {
      out += std::to_string(v);
      out += u.name;
      rest -= v * u.ms;
    }
  }
  return out;
}

std::optional<std::int64_t> parse_go_duration(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  struct GoUnit {
    std::string_view name;
    long double ns;
  };
  static constexpr std::array<GoUnit, 8> kGoUnits = {{{"ns", 1},
                                                      {"us", 1e3},
                                                      {"\xC2\xB5s", 1e3},  // µs (micro sign)
                                                      {"\xCE\xBCs", 1e3},  // μs (Greek mu)
                                                      {"ms", 1e6},
                                                      {"s", 1e9},
                                                      {"m", 60e9},
                                                      {"h", 3600e9}}};
  long double total = 0;
  while (!s.empty()) {
    long double n = 0;
    long double scale = 1;
    bool digits = false;
    bool fraction = false;
    std::size_t i = 0;
    for (; i < s.size(); ++i) {
      if (s[i] >= '0' && s[i] <= '9') {
        digits = true;
        if (fraction) {
          scale /= 10;
          n += static_cast<long double>(s[i] - '0') * scale;
        } else {
          n = n * 10 + static_cast<long double>(s[i] - '0');
        }
      } else if (s[i] == '.' && !fraction) {
        fraction = true;
      } else {
        break;
      }
    }
    if (!digits) return std::nullopt;
    s.remove_prefix(i);
    std::size_t u = 0;
    while (u < s.size() && s[u] != '.' && (s[u] < '0' || s[u] > '9')) ++u;
    const auto unit = s.substr(0, u);
    const auto* found = std::find_if(kGoUnits.begin(), kGoUnits.end(),
                                     [&](const GoUnit& g) { return g.name == unit; });
    if (u == 0 || found == kGoUnits.end()) return std::nullopt;
    total += n * found->ns;
    s.remove_prefix(u);
  }
  if (total > static_cast<long double>(std::numeric_limits<std::int64_t>::max())) {
    return std::nullopt;
  }
  const auto ns = static_cast<std::int64_t>(total);
  return negative ? -ns : ns;
}

std::string prometheus_duration_text(std::uint64_t ms) {
  if (ms == 0) return "0s";
  std::string out;
  for (const auto& u : kUnits) {
    const bool exact_only = u.name == "y" || u.name == "w";
    if (exact_only && ms % u.ms != 0) continue;
    if (const auto v = ms / u.ms; v > 0) {
      out += std::to_string(v);
      out += u.name;
      ms -= v * u.ms;
    }
  }
  return out;
}

}  // namespace aop::alloy
