// Component labels and canonical JSON; see labels.hpp.
#include "reconcile/alloy/labels.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include <openssl/evp.h>

#include <boost/json.hpp>

#include "reconcile/alloy/syntax.hpp"

namespace aop::alloy {
namespace {

constexpr std::size_t kReadableMax = 100;
constexpr std::size_t kHashDigits = 8;

bool label_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

void canonical_string(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
}

void canonical(const boost::json::value& v, std::string& out) {
  switch (v.kind()) {
    case boost::json::kind::null:
      out += "null";
      return;
    case boost::json::kind::bool_:
      out += v.get_bool() ? "true" : "false";
      return;
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_:
      out += format_number(v.to_number<double>());
      return;
    case boost::json::kind::string:
      canonical_string(v.get_string(), out);
      return;
    case boost::json::kind::array: {
      out += '[';
      bool first = true;
      for (const auto& item : v.get_array()) {
        if (!first) out += ',';
        first = false;
        canonical(item, out);
      }
      out += ']';
      return;
    }
    case boost::json::kind::object: {
      std::vector<const boost::json::key_value_pair*> members;
      for (const auto& kv : v.get_object()) members.push_back(&kv);
      std::sort(members.begin(), members.end(),
                [](const auto* a, const auto* b) { return a->key() < b->key(); });
      out += '{';
      bool first = true;
      for (const auto* kv : members) {
        if (!first) out += ',';
        first = false;
        canonical_string(kv->key(), out);
        out += ':';
        canonical(kv->value(), out);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 is unavailable in this OpenSSL");  // start-up failure
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(static_cast<std::size_t>(len) * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 0xF];
  }
  return out;
}

std::string ident(std::string_view prefix, std::string_view readable, std::string_view key) {
  std::string out(prefix);
  out += '_';
  const auto r = readable.substr(0, kReadableMax);
  std::transform(r.begin(), r.end(), std::back_inserter(out),
                 [](char c) { return label_char(c) ? c : '_'; });
  out += '_';
  out += sha256_hex(key).substr(0, kHashDigits);
  return out;
}

std::string LabelSet::label(std::string_view prefix, std::string_view readable,
                            std::string_view key) {
  auto id = std::make_pair(std::string(prefix), std::string(key));
  if (auto it = by_key_.find(id); it != by_key_.end()) return it->second;
  const std::string base = ident(prefix, readable, key);
  std::string label = base;
  for (int n = 2; taken_.count(label) != 0; ++n) label = base + "_" + std::to_string(n);
  taken_.insert(label);
  by_key_.emplace(std::move(id), label);
  return label;
}

std::string canonical_json(const boost::json::value& v) {
  std::string out;
  canonical(v, out);
  return out;
}

}  // namespace aop::alloy
