// The two duration syntaxes of the agent's configuration, and which consumer reads which:
//
//  * Prometheus durations (prometheus/common model.Duration): scrape intervals and
//    timeouts, remote_write remote_timeout, queue batch_send_deadline / min_backoff /
//    max_backoff, metadata send_interval. Units y, w, d, h, m, s, ms, each at most once,
//    largest first, integers only ("1h30m", "1d", "500ms"; not "1.5h", not "30m1h");
//    "0" alone is zero.
//  * Go durations (time.ParseDuration, k8s/duration.hpp): the agent's instance settings
//    (wal_truncate_frequency, min/max_wal_time, remote_flush_deadline), Loki clients
//    (batchwait, timeout, backoff min/max_period), target sync_period and pipeline-stage
//    durations. Units ns, us, ms, s, m, h, fractions allowed ("1.5h"); no d or w.
#pragma once

#include <chrono>
#include <string_view>

#include "net/result.hpp"
#include "reconcile/validation/report.hpp"

namespace aop::validation {

// Milliseconds, as Prometheus keeps them. Errors: `not a valid duration string`, out of
// range.
Result<std::chrono::milliseconds> parse_prometheus_duration(std::string_view text);

// Empty text is fine (the field is unset); otherwise a Prometheus duration.
Complaint check_prometheus_duration(std::string_view text);

struct GoDurationRule {
  bool allow_zero = true;
  bool allow_negative = false;
  std::chrono::nanoseconds minimum{0};  // when > 0, the smallest accepted positive value
};
// Empty text is fine; otherwise a Go duration within the rule.
Complaint check_go_duration(std::string_view text, const GoDurationRule& rule = {});

}  // namespace aop::validation
