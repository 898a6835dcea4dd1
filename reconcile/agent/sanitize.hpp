// The two name sanitizers whose output appears in generated objects (asset
// keys in the assets Secret; volume names and the version label).
#pragma once

#include <string>
#include <string_view>

namespace aop::agent {

// Prometheus' SanitizeLabelName: every Unicode code point outside [a-zA-Z0-9_] becomes
// one `_` (a multi-byte UTF-8 character gives one `_`, not one per byte).
// `/secrets/ns/my-secret/tls.crt` → `_secrets_ns_my_secret_tls_crt`.
std::string sanitize_label_name(std::string_view s);

// Kubernetes volume-name sanitizer: lower-case, each run of characters outside [-a-z0-9]
// becomes one `-`, truncated to 63 bytes, leading/trailing `-` trimmed. `v0.44.8` → `v0-44-8`.
std::string sanitize_volume_name(std::string_view s);

}  // namespace aop::agent
