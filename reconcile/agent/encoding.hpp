// gzip for config Secrets above the size threshold . Base64 for Secret `data`
// is k8s/base64.hpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace aop::agent {

// gzip (RFC 1952) at the default level (6), by libdeflate. Throws std::runtime_error
// only when the library itself fails (out of memory), a programmer-visible condition.
std::string gzip_compress(std::string_view bytes);
// Every member of a gzip stream (gzip_compress writes one, gzip_chunked of config_text.hpp
// several), concatenated; nullopt when the input is not a valid gzip stream.
std::optional<std::string> gzip_decompress(std::string_view bytes);

// Text kept in memory for a while, at the fastest level (raw deflate, no header):
// what the fragment cache holds instead of each member's emitted text. pack() throws
// like gzip_compress; unpack() takes the text's size and throws std::runtime_error when
// `packed` is not what pack() made of a text of that size (memory corrupted).
std::string pack(std::string_view text);
std::string unpack(std::string_view packed, std::size_t size);
// unpack() appended to `out`.
void unpack_append(std::string_view packed, std::size_t size, std::string& out);

}  // namespace aop::agent
