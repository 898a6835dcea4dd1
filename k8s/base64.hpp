// Standard base64 (RFC 4648, with padding), as in kubeconfig *-data fields, Secret data
// and basic-auth headers.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace aop::k8s {

std::string base64_encode(std::string_view bytes);
// nullopt on characters outside the alphabet or bad padding. Whitespace (line breaks
// in pasted PEM-in-base64) is skipped.
std::optional<std::string> base64_decode(std::string_view text);

// Canonical base64: exactly what base64_encode produces (padded, no whitespace, the
// unused bits of the last symbol zero), so decoding and encoding again gives the same
// text. The cache keeps Secret data decoded only when this round trip is exact.
//
// The size of the bytes `text` decodes to, if it is canonical (0 for "").
std::size_t base64_decoded_size(std::string_view text);
// Decodes `text` into `out` (base64_decoded_size(text) bytes); false when `text` is not
// canonical base64 (`out` then holds garbage).
bool base64_decode_canonical(std::string_view text, char* out);
// Encodes `bytes` into `out`, (bytes.size() + 2) / 3 * 4 characters.
void base64_encode_to(std::string_view bytes, char* out);

}  // namespace aop::k8s
