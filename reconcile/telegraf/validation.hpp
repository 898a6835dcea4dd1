// Checks on the individual values found in a telegraf annotation and in the controller's
// options: endpoint names, scrape URLs, Go-style durations, tag text. Each returns the
// rule that failed as a sentence fragment ("scheme \"ftp\" is not allowed; use http or
// https"), so callers can prefix it with the object and endpoint it belongs to. URLs,
// durations, text and names go through the operator's shared rules
// (reconcile/validation); what is telegraf's own is the endpoint-name rule and the `$`
// that telegraf expands in its whole configuration file.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace aop::telegraf {

// An error message, or nothing when the value is fine.
using Complaint = std::optional<std::string>;

// `^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$`.
Complaint check_endpoint_name(std::string_view name);

// An absolute http or https URL with a host, parsed with Boost.URL (not a regex): no
// user-info and no credential-like query or fragment parameter (net/redact.hpp's list),
// a port (when given) in 1..65535, and no `$` anywhere,
// because telegraf expands `$VAR` and `${VAR}` in its configuration file before
// parsing it, so a `$` in a URL could send ${INFLUX_TOKEN} to the scraped host.
Complaint check_http_url(std::string_view url);

// A positive Go duration (k8s/duration.hpp) (intervals and jitter make no sense as zero or
// negative, except the jitter, which callers allow to be zero).
Complaint check_positive_duration(std::string_view text);

// Well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view text);

// Tag keys and values: non-empty strings. Also: valid UTF-8 (the TOML
// library would otherwise turn stray bytes into different characters), no control
// characters (InfluxDB line protocol cannot carry them in tags), and no `$` (telegraf's
// environment expansion, see check_http_url).
Complaint check_tag_text(std::string_view text);

// Quotes a user-supplied value for an error message: URL credentials redacted
// (net/redact.hpp), quotes and control characters escaped, cut after 80 bytes (at a character
// boundary) so Events stay readable.
std::string describe(std::string_view text);

// RFC 1123 label, as Kubernetes requires for namespace names.
bool is_dns_label(std::string_view text);

}  // namespace aop::telegraf
