// The canonical layout of generated Alloy files, written independently of the product's
// writer: the header line naming the GrafanaAgent, an empty line, top-level blocks
// separated by one empty line; two spaces per level; `name {}` for an empty body;
// attributes, then blocks; lists of scalars on one line, lists holding objects one element
// per line; objects one entry per line, keys sorted bytewise, bare when they are
// identifiers, each entry followed by a comma; strings with the escapes Alloy's writer
// uses (short escapes, `\u00XX` for other control characters, DEL and the byte order mark,
// `\xNN` for bytes that are not UTF-8); integers below 2^53 without exponent.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "tests/alloy/checker/checker.hpp"

namespace aop::alloy::check {
namespace {

std::size_t utf8_len(std::string_view s, std::size_t i, std::uint32_t& r) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  if (c < 0x80) {
    r = c;
    return 1;
  }
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    r = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    r = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    r = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    r = (r << 6) | (cc & 0x3F);
  }
  const std::uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) return 0;
  return n;
}

std::string quoted(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t r = 0;
    const std::size_t n = utf8_len(s, i, r);
    if (n == 0) {
      const auto b = static_cast<unsigned char>(s[i]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
      ++i;
      continue;
    }
    if (r == '"') {
      out += "\\\"";
    } else if (r == '\\') {
      out += "\\\\";
    } else if (r == '\n') {
      out += "\\n";
    } else if (r == '\r') {
      out += "\\r";
    } else if (r == '\t') {
      out += "\\t";
    } else if (r == 0x07) {
      out += "\\a";
    } else if (r == 0x08) {
      out += "\\b";
    } else if (r == 0x0C) {
      out += "\\f";
    } else if (r == 0x0B) {
      out += "\\v";
    } else if (r < 0x20 || r == 0x7F || r == 0xFEFF) {
      out += "\\u";
      out += kHex[(r >> 12) & 0xF];
      out += kHex[(r >> 8) & 0xF];
      out += kHex[(r >> 4) & 0xF];
      out += kHex[r & 0xF];
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out + "\"";
}

std::string number(double v) {
  if (std::trunc(v) == v && std::fabs(v) < 9007199254740992.0) {
    return std::to_string(static_cast<std::int64_t>(v));
  }
  std::array<char, 64> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return {buf.data(), r.ptr};
}

bool bare_key(const std::string& k) {
  if (k.empty() || k == "true" || k == "false" || k == "null") return false;
  const auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!letter(k[0])) return false;
  return std::all_of(k.begin(), k.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

bool multiline(const Value& v) {
  if (v.kind == Value::Kind::object) return !v.items.empty();
  if (v.kind != Value::Kind::list) return false;
  return std::any_of(v.items.begin(), v.items.end(), [](const Value& i) {
    return i.kind == Value::Kind::object || (i.kind == Value::Kind::list && multiline(i));
  });
}

void pad(std::string& out, int level) {
  out.append(static_cast<std::size_t>(level) * 2, ' ');
}

void value(const Value& v, int level, std::string& out) {
  switch (v.kind) {
    case Value::Kind::string:
      out += quoted(v.text);
      return;
    case Value::Kind::number:
      out += number(v.number);
      return;
    case Value::Kind::boolean:
      out += v.boolean ? "true" : "false";
      return;
    case Value::Kind::null:
      out += "null";
      return;
    case Value::Kind::reference:
      out += v.text;
      return;
    case Value::Kind::call:
      out += v.text + "(";
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) out += ", ";
        value(v.items[i], level, out);
      }
      out += ")";
      return;
    case Value::Kind::concat:
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) out += " + ";
        value(v.items[i], level, out);
      }
      return;
    case Value::Kind::list:
      if (!multiline(v)) {
        out += "[";
        for (std::size_t i = 0; i < v.items.size(); ++i) {
          if (i > 0) out += ", ";
          value(v.items[i], level, out);
        }
        out += "]";
        return;
      }
      out += "[\n";
      for (const auto& i : v.items) {
        pad(out, level + 1);
        value(i, level + 1, out);
        out += ",\n";
      }
      pad(out, level);
      out += "]";
      return;
    case Value::Kind::object: {
      if (v.items.empty()) {
        out += "{}";
        return;
      }
      std::vector<std::size_t> order(v.keys.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return v.keys[a] < v.keys[b]; });
      out += "{\n";
      for (const auto i : order) {
        pad(out, level + 1);
        out += bare_key(v.keys[i]) ? v.keys[i] : quoted(v.keys[i]);
        out += " = ";
        value(v.items[i], level + 1, out);
        out += ",\n";
      }
      pad(out, level);
      out += "}";
      return;
    }
  }
}

void block(const Block& b, int level, std::string& out) {
  pad(out, level);
  out += b.name;
  if (b.label) out += " " + quoted(*b.label);
  if (b.attributes.empty() && b.blocks.empty()) {
    out += " {}\n";
    return;
  }
  out += " {\n";
  for (const auto& a : b.attributes) {
    pad(out, level + 1);
    out += a.name + " = ";
    value(a.value, level + 1, out);
    out += "\n";
  }
  for (const auto& c : b.blocks) block(c, level + 1, out);
  pad(out, level);
  out += "}\n";
}

}  // namespace

std::string canonical_text(const std::vector<Block>& blocks, std::string_view ns,
                           std::string_view root) {
  std::string out = "// Generated by agent-operator for GrafanaAgent ";
  out.append(ns).append("/").append(root).append(". DO NOT EDIT.\n");
  for (const auto& b : blocks) {
    out += "\n";
    block(b, 0, out);
  }
  return out;
}

}  // namespace aop::alloy::check
