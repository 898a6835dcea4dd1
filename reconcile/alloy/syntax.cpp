// The Alloy writer; see syntax.hpp. Escapes follow Alloy's scanner, which accepts Go's
// escape set minus `\'`: the writer uses the short escapes, `\u00XX` for other control
// characters and DEL, and `\xNN` for bytes that are not UTF-8.
#include "reconcile/alloy/syntax.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace aop::alloy {
namespace {

bool ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool ident_char(char c) {
  return ident_start(c) || (c >= '0' && c <= '9');
}

// A dotted name: identifiers separated by single dots.
bool is_dotted(std::string_view s) {
  if (s.empty()) return false;
  std::size_t start = 0;
  while (true) {
    const auto dot = s.find('.', start);
    const auto part = s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!is_identifier(part)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

void require(bool ok, const char* what, std::string_view value) {
  if (!ok) throw std::invalid_argument(std::string(what) + ": " + std::string(value));
}

// Length of the valid UTF-8 sequence at the start of `s` (Go's rules: no overlong forms,
// no surrogates, nothing above U+10FFFF), or 0 when the first byte does not start one.
std::size_t utf8_length(std::string_view s, char32_t& cp) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return i < s.size() && b(i) >= lo && b(i) <= hi;
  };
  const unsigned c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF && cont(1)) {
    cp = ((c & 0x1F) << 6) | (b(1) & 0x3F);
    return 2;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80;
    const unsigned hi = c == 0xED ? 0x9F : 0xBF;
    if (cont(1, lo, hi) && cont(2)) {
      cp = ((c & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
      return 3;
    }
    return 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80;
    const unsigned hi = c == 0xF4 ? 0x8F : 0xBF;
    if (cont(1, lo, hi) && cont(2) && cont(3)) {
      cp = ((c & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
      return 4;
    }
  }
  return 0;
}

void indent_to(std::string& out, int level) {
  out.append(static_cast<std::size_t>(level) * 2, ' ');
}

void write(const Expr& e, int indent, std::string& out);

void write_list(const Expr& e, int indent, std::string& out) {
  if (!e.multiline()) {
    out += '[';
    for (std::size_t i = 0; i < e.items().size(); ++i) {
      if (i > 0) out += ", ";
      write(e.items()[i], indent, out);
    }
    out += ']';
    return;
  }
  out += "[\n";
  for (const auto& item : e.items()) {
    indent_to(out, indent + 1);
    write(item, indent + 1, out);
    out += ",\n";
  }
  indent_to(out, indent);
  out += ']';
}

void write_object(const Expr& e, int indent, std::string& out) {
  if (e.keys().empty()) {
    out += "{}";
    return;
  }
  out += "{\n";
  for (std::size_t i = 0; i < e.keys().size(); ++i) {
    indent_to(out, indent + 1);
    out += is_identifier(e.keys()[i]) ? e.keys()[i] : quote(e.keys()[i]);
    out += " = ";
    write(e.items()[i], indent + 1, out);
    out += ",\n";
  }
  indent_to(out, indent);
  out += '}';
}

void write(const Expr& e, int indent, std::string& out) {
  switch (e.kind()) {
    case Expr::Kind::string:
      out += quote(e.text());
      return;
    case Expr::Kind::number:
      out += format_number(e.number_value());
      return;
    case Expr::Kind::boolean:
      out += e.bool_value() ? "true" : "false";
      return;
    case Expr::Kind::list:
      write_list(e, indent, out);
      return;
    case Expr::Kind::object:
      write_object(e, indent, out);
      return;
    case Expr::Kind::reference:
      out += e.text();
      return;
    case Expr::Kind::call:
      out += e.text();
      out += '(';
      for (std::size_t i = 0; i < e.items().size(); ++i) {
        if (i > 0) out += ", ";
        write(e.items()[i], indent, out);
      }
      out += ')';
      return;
    case Expr::Kind::concat:
      for (std::size_t i = 0; i < e.items().size(); ++i) {
        if (i > 0) out += " + ";
        write(e.items()[i], indent, out);
      }
      return;
  }
}

void write_block_to(const Block& b, int indent, std::string& out) {
  indent_to(out, indent);
  out += b.name();
  if (b.label()) {
    out += ' ';
    out += quote(*b.label());
  }
  if (b.empty()) {
    out += " {}\n";
    return;
  }
  out += " {\n";
  for (const auto& [name, value] : b.attributes()) {
    indent_to(out, indent + 1);
    out += name;
    out += " = ";
    write(value, indent + 1, out);
    out += '\n';
  }
  for (const auto& child : b.blocks()) write_block_to(child, indent + 1, out);
  indent_to(out, indent);
  out += "}\n";
}

}  // namespace

Expr Expr::string(std::string bytes) {
  Expr e;
  e.kind_ = Kind::string;
  e.text_ = std::move(bytes);
  return e;
}

Expr Expr::number(double v) {
  if (!std::isfinite(v)) throw std::invalid_argument("Alloy has no NaN or infinite numbers");
  Expr e;
  e.kind_ = Kind::number;
  e.number_ = v;
  return e;
}

Expr Expr::boolean(bool b) {
  Expr e;
  e.kind_ = Kind::boolean;
  e.bool_ = b;
  return e;
}

Expr Expr::list(std::vector<Expr> items) {
  Expr e;
  e.kind_ = Kind::list;
  e.items_ = std::move(items);
  return e;
}

Expr Expr::strings(const std::vector<std::string>& items) {
  std::vector<Expr> v;
  v.reserve(items.size());
  for (const auto& s : items) v.push_back(string(s));
  return list(std::move(v));
}

Expr Expr::object(std::vector<std::pair<std::string, Expr>> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  Expr e;
  e.kind_ = Kind::object;
  for (auto& [k, v] : entries) {
    require(e.keys_.empty() || e.keys_.back() != k, "duplicate object key", k);
    e.keys_.push_back(std::move(k));
    e.items_.push_back(std::move(v));
  }
  return e;
}

Expr Expr::ref(std::string_view component, std::string_view label, std::string_view export_) {
  require(is_dotted(component), "component name", component);
  require(is_identifier(label), "component label", label);
  require(is_identifier(export_), "export name", export_);
  Expr e;
  e.kind_ = Kind::reference;
  e.text_.append(component).append(".").append(label).append(".").append(export_);
  return e;
}

Expr Expr::constant(std::string_view dotted) {
  require(is_dotted(dotted), "reference", dotted);
  Expr e;
  e.kind_ = Kind::reference;
  e.text_ = std::string(dotted);
  return e;
}

Expr Expr::call(std::string_view function, std::vector<Expr> args) {
  require(is_dotted(function), "function name", function);
  Expr e;
  e.kind_ = Kind::call;
  e.text_ = std::string(function);
  e.items_ = std::move(args);
  return e;
}

Expr Expr::concat(std::vector<Expr> terms) {
  require(terms.size() >= 2, "concatenation needs two terms", "");
  Expr e;
  e.kind_ = Kind::concat;
  e.items_ = std::move(terms);
  return e;
}

bool Expr::multiline() const {
  switch (kind_) {
    case Kind::object:
      return !keys_.empty();
    case Kind::list:
      return std::any_of(items_.begin(), items_.end(), [](const Expr& i) {
        return i.kind() == Kind::object || (i.kind() == Kind::list && i.multiline());
      });
    default:
      return false;
  }
}

Block::Block(std::string name, std::optional<std::string> label)
    : name_(std::move(name)), label_(std::move(label)) {
  require(is_dotted(name_), "block name", name_);
  if (label_) require(is_identifier(*label_), "block label", *label_);
}

Block& Block::attr(std::string name, Expr value) {
  require(is_identifier(name), "attribute name", name);
  attributes_.emplace_back(std::move(name), std::move(value));
  return *this;
}

Block& Block::block(Block b) {
  blocks_.push_back(std::move(b));
  return *this;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !ident_start(s[0])) return false;
  if (!std::all_of(s.begin(), s.end(), ident_char)) return false;
  return s != "true" && s != "false" && s != "null";
}

std::string quote(std::string_view bytes) {
  static constexpr std::array<char, 16> kHex = {'0', '1', '2', '3', '4', '5', '6', '7',
                                                '8', '9', 'A', 'B', 'C', 'D', 'E', 'F'};
  std::string out;
  out.reserve(bytes.size() + 2);
  out += '"';
  std::size_t i = 0;
  while (i < bytes.size()) {
    char32_t cp = 0;
    const std::size_t n = utf8_length(bytes.substr(i), cp);
    if (n == 0) {
      const auto byte = static_cast<unsigned char>(bytes[i]);
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
      ++i;
      continue;
    }
    switch (cp) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        // Control characters and DEL would be invisible or rejected (NUL) by the
        // scanner; a byte order mark is rejected anywhere but at the start of a file.
        if (cp < 0x20 || cp == 0x7F || cp == 0xFEFF) {
          out += "\\u";
          for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
        } else {
          out.append(bytes.substr(i, n));
        }
    }
    i += n;
  }
  out += '"';
  return out;
}

std::string format_number(double v) {
  if (!std::isfinite(v)) throw std::invalid_argument("Alloy has no NaN or infinite numbers");
  if (std::trunc(v) == v && std::fabs(v) < kTwoPow53) {
    return std::to_string(static_cast<std::int64_t>(v));
  }
  std::array<char, 64> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return {buf.data(), r.ptr};
}

std::string write_expr(const Expr& e, int indent) {
  std::string out;
  write(e, indent, out);
  return out;
}

std::string write_block(const Block& b, int indent) {
  std::string out;
  write_block_to(b, indent, out);
  return out;
}

std::string file_header(std::string_view ns, std::string_view name) {
  std::string out = "// Generated by agent-operator for GrafanaAgent ";
  out.append(ns).append("/").append(name).append(". DO NOT EDIT.\n");
  return out;
}

std::string write_file(std::string_view ns, std::string_view name,
                       const std::vector<Block>& blocks) {
  require(!blocks.empty(), "a file needs at least one block", name);
  std::string out = file_header(ns, name);
  for (const auto& b : blocks) {
    out += '\n';
    write_block_to(b, 0, out);
  }
  return out;
}

}  // namespace aop::alloy
