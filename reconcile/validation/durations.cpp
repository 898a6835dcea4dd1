#include "reconcile/validation/durations.hpp"

#include <array>
#include <cstdint>
#include <limits>

#include "k8s/duration.hpp"
#include "reconcile/validation/text.hpp"

namespace aop::validation {

Result<std::chrono::milliseconds> parse_prometheus_duration(std::string_view text) {
  if (text == "0") return std::chrono::milliseconds{0};
  const auto invalid = [&] {
    return make_error("not a valid duration string: " + describe(text) +
                      "; use a Prometheus duration such as 30s, 1m30s, 1h or 1d (units y, w, "
                      "d, h, m, s, ms, largest first, whole numbers)");
  };
  if (text.empty()) return invalid();
  struct Unit {
    std::string_view name;
    std::int64_t ms;
  };
  // In the order they must appear.
  static constexpr std::array<Unit, 7> kUnits{{{"y", 365LL * 24 * 3600 * 1000},
                                               {"w", 7LL * 24 * 3600 * 1000},
                                               {"d", 24LL * 3600 * 1000},
                                               {"h", 3600LL * 1000},
                                               {"m", 60LL * 1000},
                                               {"s", 1000},
                                               {"ms", 1}}};
  std::size_t next_unit = 0;
  // Prometheus keeps nanoseconds in an int64 (about 292 years); count in 128 bits so
  // that no input overflows before that check.
  constexpr __int128 kMaxNs = std::numeric_limits<std::int64_t>::max();
  __int128 total_ns = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t k = i;
    __int128 n = 0;
    while (k < text.size() && text[k] >= '0' && text[k] <= '9') {
      if (n <= kMaxNs) n = n * 10 + (text[k] - '0');
      ++k;
    }
    if (k == i) return invalid();
    std::size_t u = k;
    while (u < text.size() && text[u] >= 'a' && text[u] <= 'z') ++u;
    const std::string_view unit = text.substr(k, u - k);
    bool found = false;
    for (std::size_t j = next_unit; j < kUnits.size() && !found; ++j) {
      if (kUnits[j].name != unit) continue;
      found = true;
      next_unit = j + 1;
      if (n > kMaxNs) return make_error("duration " + describe(text) + " is out of range");
      total_ns += n * kUnits[j].ms * 1'000'000;
      if (total_ns > kMaxNs) return make_error("duration " + describe(text) + " is out of range");
    }
    if (!found) return invalid();
    i = u;
  }
  const auto total = static_cast<std::int64_t>(total_ns / 1'000'000);
  return std::chrono::milliseconds{total};
}

Complaint check_prometheus_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  auto d = parse_prometheus_duration(text);
  if (!d) return d.error().message;
  return std::nullopt;
}

Complaint check_go_duration(std::string_view text, const GoDurationRule& rule) {
  if (text.empty()) return std::nullopt;
  auto d = k8s::parse_go_duration(text);
  if (!d) {
    std::string m = d.error().message + "; use a Go duration such as 30s, 1m30s or 1.5h";
    if (!text.empty() && (text.back() == 'd' || text.back() == 'w' || text.back() == 'y')) {
      m += " (this field is read with Go's time.ParseDuration, which has no d, w or y)";
    }
    return m;
  }
  if (d->count() < 0 && !rule.allow_negative) {
    return "duration " + describe(text) + (rule.allow_zero ? " is negative" : " must be positive");
  }
  if (d->count() == 0 && !rule.allow_zero)
    return "duration " + describe(text) + " must be positive";
  if (d->count() > 0 && rule.minimum.count() > 0 && *d < rule.minimum) {
    return "duration " + describe(text) + " is shorter than the minimum of " +
           k8s::format_go_duration(rule.minimum);
  }
  return std::nullopt;
}

}  // namespace aop::validation
