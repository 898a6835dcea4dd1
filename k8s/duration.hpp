// Go durations, the syntax of every duration in Kubernetes and Prometheus tooling
// (`30s`, `1m30s`, `1.5h`, `300ms`): parsed exactly as Go's time.ParseDuration and
// printed as Go's Duration.String, so values round-trip with the Go tools users know.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "net/result.hpp"

namespace aop::k8s {

// `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` with the units ns, us, µs, μs, ms, s, m, h, or the
// bare "0". Overflow of int64 nanoseconds is an error, as in Go. Errors:
// `invalid duration "x"`, `missing unit in duration "5"`,
// `unknown unit "d" in duration "5d" (use ns, us, ms, s, m or h)`.
Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text);

// "10m0s", "1.5s", "200ms", "1µs", "0s", "-2h3m0s".
std::string format_go_duration(std::chrono::nanoseconds d);

}  // namespace aop::k8s
