#include "reconcile/agent/encoding.hpp"

#include <array>
#include <stdexcept>

#include <zlib.h>

namespace aop::agent {
namespace {

// windowBits 15 + 16 selects the gzip wrapper; -15 a raw deflate stream.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kRawWindowBits = -15;

std::string deflate_all(std::string_view bytes, int level, int window_bits) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
  std::string out;
  out.resize(deflateBound(&zs, static_cast<uLong>(bytes.size())) + 32);
  // zlib's API is not const-correct; it does not write through next_in.
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  const auto written = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip: deflate failed");
  out.resize(written);
  out.shrink_to_fit();  // the bound is about the input's size: kept, it would be held
  return out;
}

}  // namespace

std::string gzip_compress(std::string_view bytes) {
  return deflate_all(bytes, Z_DEFAULT_COMPRESSION, kGzipWindowBits);
}

std::optional<std::string> gzip_decompress(std::string_view bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, kGzipWindowBits) != Z_OK) return std::nullopt;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  std::array<char, 16384> buf{};
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    out.append(buf.data(), buf.size() - zs.avail_out);
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

std::string pack(std::string_view text) {
  return deflate_all(text, Z_BEST_SPEED, kRawWindowBits);
}

std::string unpack(std::string_view packed, std::size_t size) {
  z_stream zs{};
  if (inflateInit2(&zs, kRawWindowBits) != Z_OK) throw std::runtime_error("unpack: inflateInit2");
  std::string out(size, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  zs.avail_in = static_cast<uInt>(packed.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&zs, Z_FINISH);
  const bool whole = rc == Z_STREAM_END && zs.total_out == size && zs.avail_in == 0;
  inflateEnd(&zs);
  if (!whole)
    throw std::runtime_error("unpack: not a packed text of " + std::to_string(size) + " bytes");
  return out;
}

}  // namespace aop::agent
