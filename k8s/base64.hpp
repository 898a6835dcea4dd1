// Standard base64 (RFC 4648, with padding), as in kubeconfig *-data fields, Secret data
// and basic-auth headers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace aop::k8s {

std::string base64_encode(std::string_view bytes);
// nullopt on characters outside the alphabet or bad padding. Whitespace (line breaks
// in pasted PEM-in-base64) is skipped.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace aop::k8s
