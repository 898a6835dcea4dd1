#include "reconcile/agent/sanitize.hpp"

namespace aop::agent {
namespace {

bool is_label_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Length of the UTF-8 sequence starting with `lead`. Invalid bytes count as one code
// point each, as Go's range loop yields U+FFFD per invalid byte.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  std::size_t n = 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
  } else {
    return 1;
  }
  if (i + n > s.size()) return 1;
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  }
  return n;
}

}  // namespace

std::string sanitize_label_name(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (is_label_char(c)) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else {
      out.push_back('_');
      i += utf8_length(s, i);
    }
  }
  return out;
}

std::string sanitize_volume_name(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool in_run = false;
  for (const char ch : s) {
    char c = ch;
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (ok) {
      out.push_back(c);
      in_run = false;
    } else if (!in_run) {
      out.push_back('-');
      in_run = true;
    }
  }
  if (out.size() > 63) out.resize(63);
  const auto first = out.find_first_not_of('-');
  if (first == std::string::npos) return {};
  const auto last = out.find_last_not_of('-');
  return out.substr(first, last - first + 1);
}

}  // namespace aop::agent
