#include "reconcile/agent/encoding.hpp"

#include <array>
#include <stdexcept>

#include <zlib.h>

namespace aop::agent {
namespace {

// windowBits 15 + 16 selects the gzip wrapper.
constexpr int kGzipWindowBits = 15 + 16;

}  // namespace

std::string gzip_compress(std::string_view bytes) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindowBits, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
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
  return out;
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

}  // namespace aop::agent
