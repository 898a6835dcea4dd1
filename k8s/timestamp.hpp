// RFC 3339 timestamps as the API server writes them (metav1.Time) and as clients send
// them (kubeconfig exec credentials, condition transition times).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace aop::k8s {

// "2024-03-01T10:00:00Z": UTC, whole seconds (metav1.Time).
std::string format_rfc3339(std::chrono::system_clock::time_point t);

// Parses "2024-03-01T10:00:00Z" and "...00.123+02:00" (fractions of a second are
// dropped); nullopt for anything else.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view s);

}  // namespace aop::k8s
