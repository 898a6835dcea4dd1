// gzip for config Secrets above the size threshold . Base64 for Secret `data`
// is k8s/base64.hpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace aop::agent {

// gzip (RFC 1952) at zlib's default level. Throws std::runtime_error only when zlib
// itself fails (out of memory), a programmer-visible condition.
std::string gzip_compress(std::string_view bytes);
// Inverse of gzip_compress; nullopt when the input is not a valid gzip stream.
std::optional<std::string> gzip_decompress(std::string_view bytes);

}  // namespace aop::agent
