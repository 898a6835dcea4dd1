// Credential redaction for text that leaves the process where people can read it: log
// lines, Kubernetes Events, status messages and metric labels. URLs carry credentials
// in two places, and both are replaced by "REDACTED" wherever a URL appears in the text:
//
//   * the userinfo: https://user:password@host/ -> https://REDACTED@host/
//   * the values of credential-like query (and fragment) parameters:
//     https://host/path?token=abc&page=2 -> https://host/path?token=REDACTED&page=2
//
// A parameter is credential-like when its key, lower-cased with '-' read as '_', is one
// of kCredentialKeys, starts with "x_amz_" or "x_goog_" (signed cloud-storage URLs), or
// ends with "_token", "_secret", "_password", "_passwd", "_key", "_signature" or
// "_credential". The list is documented in net/README.md; keep them together.
//
// Everything else is left as it is: redaction only ever removes bytes of a URL.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace aop::net {

inline constexpr std::string_view kRedacted = "REDACTED";

inline constexpr std::array<std::string_view, 22> kCredentialKeys = {
    "token",       "access_token", "id_token",  "refresh_token", "auth_token",    "bearer",
    "password",    "passwd",       "pwd",       "pass",          "secret",        "client_secret",
    "api_key",     "apikey",       "key",       "auth",          "authorization", "credential",
    "credentials", "sig",          "signature", "session"};

// Whether a query parameter named `key` carries a credential (rules above).
bool is_credential_key(std::string_view key);

// `url` (one URL) with its userinfo and credential parameter values replaced.
std::string redact_url(std::string_view url);

// `text` with every URL in it ("scheme://..." up to white space, a quote or an angle
// bracket) redacted as redact_url does. Text without "://" is returned unchanged.
std::string redact(std::string_view text);

// Whether redact(text) differs from text (cheap when the text holds no URL).
bool needs_redaction(std::string_view text);

}  // namespace aop::net
