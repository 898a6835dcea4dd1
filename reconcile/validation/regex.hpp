// Regular expressions as the agent compiles them: Go's regexp package, whose syntax is
// RE2's (no lookaround, no backreferences, counted repetition up to 1000). RE2 itself
// checks them here, not std::regex, whose ECMAScript dialect accepts what Go refuses
// (`(?=x)`, `\1`) and refuses what Go accepts (`(?i)`, `(?P<name>x)`).
//
//  * Prometheus relabel `regex` is anchored: compiled as `^(?:<regex>)$`.
//  * Loki pipeline stages (regex, replace, drop, multiline firstline, match selectors'
//    `=~`) compile the expression as written.
#pragma once

#include <cstddef>
#include <string_view>

#include "reconcile/validation/report.hpp"

namespace aop::validation {

enum class RegexUse { prometheus_anchored, as_written };

// Longer expressions are refused before they are compiled: compiling (and then rendering,
// hashing and compressing) a multi-megabyte expression costs a reconcile hundreds of MiB,
// and no scrape or log selection needs one this long.
inline constexpr std::size_t kMaxRegexBytes = 64 * 1024;

// Nothing when `pattern` compiles; otherwise RE2's reason ("invalid perl operator: (?=").
// Results are cached by pattern (bounded), so checking the same expression again costs a
// lookup: a root with thousands of monitors repeats the same few expressions.
Complaint check_regex(std::string_view pattern, RegexUse use);

// Whether the expression has at least one named capture group `(?P<name>...)`.
bool has_named_group(std::string_view pattern);

}  // namespace aop::validation
