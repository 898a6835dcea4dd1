#include "reconcile/agent/encoding.hpp"

#include <array>
#include <memory>
#include <stdexcept>

#include <libdeflate.h>
#include <zlib.h>

namespace aop::agent {
namespace {

// windowBits 15 + 16 selects zlib's gzip wrapper.
constexpr int kGzipWindowBits = 15 + 16;

// zlib's default level, the one the configuration format asks for; and its fastest.
constexpr int kDefaultLevel = 6;
constexpr int kFastestLevel = 1;

// One compressor per level and thread (libdeflate's state is large and costly to set up;
// renders of different roots run on several threads).
libdeflate_compressor& compressor(int level) {
  struct Free {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  thread_local std::unique_ptr<libdeflate_compressor, Free> by_level[kDefaultLevel + 1];
  auto& c = by_level[level];
  if (!c) {
    c.reset(libdeflate_alloc_compressor(level));
    if (!c) throw std::runtime_error("libdeflate: out of memory");
  }
  return *c;
}

template <class Bound, class Compress>
std::string compress(std::string_view bytes, int level, Bound bound, Compress run) {
  libdeflate_compressor& c = compressor(level);
  // Not zero-filled: the bound is about the input's size (megabytes for a config), the
  // output a small part of it, and only the pages written are touched.
  const std::size_t capacity = bound(&c, bytes.size());
  const std::unique_ptr<char[]> buffer(new char[capacity]);
  const std::size_t n = run(&c, bytes.data(), bytes.size(), buffer.get(), capacity);
  if (n == 0) throw std::runtime_error("libdeflate: output above its own bound");
  return std::string(buffer.get(), n);
}

}  // namespace

std::string gzip_compress(std::string_view bytes) {
  return compress(bytes, kDefaultLevel, libdeflate_gzip_compress_bound, libdeflate_gzip_compress);
}

// zlib, an implementation independent of the compressor: the tests read what
// gzip_compress and gzip_chunked wrote with it. Every member of the stream, in order.
std::optional<std::string> gzip_decompress(std::string_view bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, kGzipWindowBits) != Z_OK) return std::nullopt;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  std::array<char, 16384> buf{};
  int rc = Z_OK;
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    out.append(buf.data(), buf.size() - zs.avail_out);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      // Another member follows.
      if (inflateReset(&zs) != Z_OK) break;
    }
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

std::string pack(std::string_view text) {
  return compress(text, kFastestLevel, libdeflate_deflate_compress_bound,
                  libdeflate_deflate_compress);
}

void unpack_append(std::string_view packed, std::size_t size, std::string& out) {
  struct Free {
    void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
  };
  thread_local std::unique_ptr<libdeflate_decompressor, Free> d(libdeflate_alloc_decompressor());
  if (!d) throw std::runtime_error("libdeflate: out of memory");
  const std::size_t at = out.size();
  out.resize(at + size);
  if (libdeflate_deflate_decompress(d.get(), packed.data(), packed.size(), out.data() + at, size,
                                    nullptr) != LIBDEFLATE_SUCCESS) {
    out.resize(at);
    throw std::runtime_error("unpack: not a packed text of " + std::to_string(size) + " bytes");
  }
}

std::string unpack(std::string_view packed, std::size_t size) {
  std::string out;
  unpack_append(packed, size, out);
  return out;
}

}  // namespace aop::agent
