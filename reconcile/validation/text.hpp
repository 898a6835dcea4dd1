// Rules for user text that reaches a generated configuration: encoding, control
// characters, HTTP header names and values, and the two substitutions that run over the
// agent's configuration file before the agent parses it:
//
//  * the config reloader (prometheus-config-reloader --config-envsubst-file) replaces
//    every `$(NAME)` (NAME of [A-Za-z0-9_]) with the container's environment variable and
//    fails the whole file when it is unset. It has no escape, so `$(NAME)` in user text
//    is refused (check_no_reloader_reference);
//  * the agent (-config.expand-env) replaces `${NAME}` with its environment and turns
//    `$$` into `$`, `\\` into `\` and `\/` into `/`; the emitter undoes that exactly for
//    every value (k8s::yaml::EmitOptions::escape_env_expansion), so nothing needs
//    refusing for it.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "reconcile/validation/report.hpp"

namespace aop::validation {

// Quotes a user-supplied value for an error message: credentials in URLs redacted
// (net/redact.hpp), quotes, backslashes and control characters escaped, invalid UTF-8
// bytes shown as \xNN, cut after 80 bytes (at a character boundary).
std::string describe(std::string_view text);

// ASCII letters lower-cased (other bytes kept): the comparison Go's strings.ToLower
// makes for the ASCII enum values the consumers lower-case.
std::string ascii_lower(std::string_view text);

// Well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view text);

// Valid UTF-8 without C0/C1 control characters or DEL (tab included): a value that must
// stay on one line of a configuration (label values, names, URLs, paths).
Complaint check_single_line(std::string_view text);

// Valid UTF-8; tab, line feed and carriage return allowed, other control characters not
// (multi-line text: templates, expressions, Integration configs).
Complaint check_text(std::string_view text);

// An HTTP header field name: one or more token characters (RFC 9110: letters, digits
// and !#$%&'*+-.^_`|~).
Complaint check_header_name(std::string_view name);
// An HTTP header field value: no CR, LF or NUL (Go's http refuses them), valid UTF-8.
Complaint check_header_value(std::string_view value);

// `$(NAME)`, which the config reloader would substitute from the agent container's
// environment (or fail the whole configuration on when unset).
Complaint check_no_reloader_reference(std::string_view text);

// A character-class rule with a clear message, e.g. for names the consumer restricts.
// `what` names the value ("the job name"), `allowed` describes the rule.
bool is_one_of(std::string_view value, std::span<const std::string_view> allowed);
inline bool is_one_of(std::string_view value, std::initializer_list<std::string_view> allowed) {
  return is_one_of(value, std::span<const std::string_view>(allowed.begin(), allowed.size()));
}
// "a, b or c" for messages.
std::string list_of(std::span<const std::string_view> values);
inline std::string list_of(std::initializer_list<std::string_view> values) {
  return list_of(std::span<const std::string_view>(values.begin(), values.size()));
}

}  // namespace aop::validation
