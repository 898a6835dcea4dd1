// Byte encodings used for generated Secrets: base64 (Kubernetes `data`) and gzip (config
// Secrets above the size threshold, spec 3.4).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace aop::agent {

std::string base64_encode(std::string_view bytes);
// Standard alphabet with padding, as the API server emits; nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text);

// gzip (RFC 1952) at zlib's default level. Throws std::runtime_error only when zlib
// itself fails (out of memory), a programmer-visible condition.
std::string gzip_compress(std::string_view bytes);
// Inverse of gzip_compress; nullopt when the input is not a valid gzip stream.
std::optional<std::string> gzip_decompress(std::string_view bytes);

}  // namespace aop::agent
