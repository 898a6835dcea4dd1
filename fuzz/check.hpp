// The fuzz targets' oracle: a broken expectation prints what broke and aborts, which
// libFuzzer reports as a crash and saves the input for.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#define AOP_FUZZ_CHECK(condition, what)                                                         \
  do {                                                                                          \
    if (!(condition)) {                                                                         \
      const std::string aop_fuzz_what = (what);                                                 \
      std::fprintf(stderr, "fuzz check failed: %s\n  %s\n", #condition, aop_fuzz_what.c_str()); \
      std::abort();                                                                             \
    }                                                                                           \
  } while (false)

namespace aop::fuzz {

// JSON equality where NaN equals NaN (Boost.JSON reads `0e99999` and YAML's `.nan` as
// NaN, which == says differs from itself).
// Numbers compare by value: YAML and JSON have one number type, and `008` (a float to
// go-yaml) is written back as `8`, an integer. Doubles may differ in the last bits:
// Boost.JSON 1.81 parses numbers of more than 17 significant digits only to within an
// ULP or two, and the result depends on where the text was cut into pieces.
inline bool same(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_number() && b.is_number()) {
    if (!a.is_double() && !b.is_double()) return a == b;
    const double x = a.to_number<double>();
    const double y = b.to_number<double>();
    if (x == y || (std::isnan(x) && std::isnan(y))) return true;
    return std::isfinite(x) && std::isfinite(y) &&
           std::fabs(x - y) <=
               4 * std::numeric_limits<double>::epsilon() * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.kind() != b.kind()) return false;
  if (const auto* ao = a.if_object()) {
    const auto& bo = b.get_object();
    if (ao->size() != bo.size()) return false;
    for (const auto& [k, v] : *ao) {
      const auto* w = bo.if_contains(k);
      if (w == nullptr || !same(v, *w)) return false;
    }
    return true;
  }
  if (const auto* aa = a.if_array()) {
    const auto& ba = b.get_array();
    if (aa->size() != ba.size()) return false;
    for (std::size_t i = 0; i < aa->size(); ++i) {
      if (!same((*aa)[i], ba[i])) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace aop::fuzz
