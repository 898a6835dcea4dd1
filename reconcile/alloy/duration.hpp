// Durations between the two syntaxes. Static trees carry Prometheus durations
// (`1d`, `1w`, `90s`, `0`) in scrape and remote-write fields; Alloy parses every duration
// with Go's time.ParseDuration, which has no `d`, `w` or `y`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aop::alloy {

// Milliseconds of a Prometheus duration: `[0-9]+y`, `w`, `d`, `h`, `m`, `s`, `ms` in
// this order, each optional, at least one; or `0`. nullopt when it does not parse or does
// not fit in Go's int64 nanoseconds.
std::optional<std::uint64_t> parse_prometheus_duration(std::string_view text);

// The Go-duration text of a Prometheus duration: unchanged when it uses only h, m, s, ms
// (or is `0`), else rebuilt from its total (`1d` → `24h`, `1w1d` → `192h`, `0d` → `0s`).
// nullopt when it does not parse.
std::optional<std::string> go_duration(std::string_view prometheus_text);

// Nanoseconds of a Go duration (`1h30m`, `1.5s`, `300ms`, `0`), as time.ParseDuration
// reads it; nullopt when it does not parse or overflows int64.
std::optional<std::int64_t> parse_go_duration(std::string_view text);

// Prometheus's own text of a duration: `0s`; else `y` and `w` only when exact, then `d`,
// `h`, `m`, `s`, `ms` when non-zero (90 s → `1m30s`, 7 d → `1w`, 8 d → `8d`).
std::string prometheus_duration_text(std::uint64_t ms);

}  // namespace aop::alloy
