#include "k8s/base64.hpp"

#include <array>
#include <cstdint>

namespace aop::k8s {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> make_table() {
  std::array<std::int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i)
    t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
  return t;
}
constexpr auto kTable = make_table();

// The canonical decoder's tables: a symbol's value already shifted to its place in a
// group of four symbols (three bytes), and bit 24 set for characters outside the
// alphabet, so a group costs four lookups and one test.
constexpr std::uint32_t kInvalid = 1u << 24;
using ShiftedTable = std::array<std::uint32_t, 256>;
constexpr ShiftedTable make_shifted(int shift) {
  ShiftedTable t{};
  for (int c = 0; c < 256; ++c) {
    const std::int8_t v = kTable[static_cast<std::size_t>(c)];
    t[static_cast<std::size_t>(c)] =
        v < 0 ? kInvalid : static_cast<std::uint32_t>(v) << static_cast<unsigned>(shift);
  }
  return t;
}
constexpr ShiftedTable kD0 = make_shifted(18), kD1 = make_shifted(12), kD2 = make_shifted(6),
                       kD3 = make_shifted(0);

std::uint32_t group(const unsigned char* p) {
  return kD0[p[0]] | kD1[p[1]] | kD2[p[2]] | kD3[p[3]];
}

}  // namespace

std::size_t base64_decoded_size(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return 0;
  std::size_t n = text.size() / 4 * 3;
  if (text.back() == '=') --n;
  if (text[text.size() - 2] == '=') --n;
  return n;
}

bool base64_decode_canonical(std::string_view text, char* out) {
  if (text.size() % 4 != 0) return false;
  if (text.empty()) return true;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t groups = text.size() / 4;
  std::uint32_t bad = 0;
  for (std::size_t g = 0; g + 1 < groups; ++g, p += 4, out += 3) {
    const std::uint32_t v = group(p);
    bad |= v;
    out[0] = static_cast<char>(v >> 16);
    out[1] = static_cast<char>(v >> 8);
    out[2] = static_cast<char>(v);
  }
  if ((bad & kInvalid) != 0) return false;
  // The last group: "xxxx", "xxx=" (two bytes) or "xx==" (one byte), the bits beyond
  // the bytes zero.
  if (p[3] != '=') {
    const std::uint32_t v = group(p);
    if ((v & kInvalid) != 0) return false;
    out[0] = static_cast<char>(v >> 16);
    out[1] = static_cast<char>(v >> 8);
    out[2] = static_cast<char>(v);
    return true;
  }
  if (p[2] != '=') {
    const std::uint32_t v = kD0[p[0]] | kD1[p[1]] | kD2[p[2]];
    if ((v & kInvalid) != 0 || (v & 0xff) != 0) return false;
    out[0] = static_cast<char>(v >> 16);
    out[1] = static_cast<char>(v >> 8);
    return true;
  }
  const std::uint32_t v = kD0[p[0]] | kD1[p[1]];
  if ((v & kInvalid) != 0 || (v & 0xffff) != 0) return false;
  out[0] = static_cast<char>(v >> 16);
  return true;
}

void base64_encode_to(std::string_view bytes, char* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3, out += 4) {
    const std::uint32_t v = (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8) | p[i + 2];
    out[0] = kAlphabet[(v >> 18) & 63];
    out[1] = kAlphabet[(v >> 12) & 63];
    out[2] = kAlphabet[(v >> 6) & 63];
    out[3] = kAlphabet[v & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    std::uint32_t v = std::uint32_t{p[i]} << 16;
    if (rest == 2) v |= std::uint32_t{p[i + 1]} << 8;
    out[0] = kAlphabet[(v >> 18) & 63];
    out[1] = kAlphabet[(v >> 12) & 63];
    out[2] = rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out[3] = '=';
  }
}

std::string base64_encode(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4, '\0');
  base64_encode_to(bytes, out.data());
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0;
  int padding = 0;
  std::size_t symbols = 0;
  for (const char c : text) {
    if (c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      ++symbols;
      continue;
    }
    if (padding > 0) return std::nullopt;  // data after padding
    const std::int8_t v = kTable[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    ++symbols;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if (padding > 2 || (padding > 0 && symbols % 4 != 0)) return std::nullopt;
  if (padding == 0 && symbols % 4 == 1) return std::nullopt;
  return out;
}

}  // namespace aop::k8s
