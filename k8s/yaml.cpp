#include "k8s/yaml.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>

#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>

namespace aop::k8s::yaml {

namespace json = boost::json;

// ---------------------------------------------------------------------------------
// Scalar resolution, YAML 1.1 as go-yaml v2 (and therefore sigs.k8s.io/yaml) does it.
// ---------------------------------------------------------------------------------
namespace {

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), s) != options.end();
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$  (go-yaml's yamlStyleFloat)
bool is_yaml_style_float(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const std::size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start) return false;
  } else {
    const std::size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && is_digit(s[i])) ++i;
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const std::size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start) return false;
  }
  return i == s.size();
}

// Go's strconv.ParseInt/ParseUint with base 0 (after go-yaml removed underscores):
// optional sign, 0x/0o/0b prefixes, a leading 0 means octal.
struct ParsedInt {
  bool negative = false;
  std::uint64_t magnitude = 0;
};

std::optional<ParsedInt> parse_go_int(std::string_view s) {
  ParsedInt out;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    out.negative = s[i] == '-';
    ++i;
  }
  if (i >= s.size()) return std::nullopt;
  int base = 10;
  if (s[i] == '0' && i + 1 < s.size()) {
    const char p = static_cast<char>(s[i + 1] | 0x20);
    if (p == 'x') {
      base = 16;
      i += 2;
    } else if (p == 'o') {
      base = 8;
      i += 2;
    } else if (p == 'b') {
      base = 2;
      i += 2;
    } else {
      base = 8;
      i += 1;
    }
  }
  if (i >= s.size()) return std::nullopt;
  const auto [ptr, ec] = std::from_chars(s.data() + i, s.data() + s.size(), out.magnitude, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return out;
}

json::value resolve_plain(std::string_view s) {
  if (is_one_of(s, {"", "~", "null", "Null", "NULL"})) return nullptr;
  if (is_one_of(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})) {
    return true;
  }
  if (is_one_of(s, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) {
    return false;
  }
  if (is_one_of(s, {".nan", ".NaN", ".NAN"})) return std::numeric_limits<double>::quiet_NaN();
  if (is_one_of(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})) {
    return std::numeric_limits<double>::infinity();
  }
  if (is_one_of(s, {"-.inf", "-.Inf", "-.INF"})) return -std::numeric_limits<double>::infinity();

  const char first = s.front();
  if (is_digit(first) || first == '+' || first == '-' || first == '.') {
    std::string plain;
    plain.reserve(s.size());
    for (const char c : s) {
      if (c != '_') plain += c;
    }
    if (const auto n = parse_go_int(plain)) {
      constexpr auto kMaxInt64 =
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      if (!n->negative && n->magnitude <= kMaxInt64) return static_cast<std::int64_t>(n->magnitude);
      if (n->negative && n->magnitude <= kMaxInt64 + 1) {
        return n->magnitude == kMaxInt64 + 1 ? std::numeric_limits<std::int64_t>::min()
                                             : -static_cast<std::int64_t>(n->magnitude);
      }
      if (!n->negative) return n->magnitude;
    }
    if (is_yaml_style_float(plain)) {
      double d = 0;
      const char* begin = plain.data();
      if (*begin == '+') ++begin;
      const auto [ptr, ec] = std::from_chars(begin, plain.data() + plain.size(), d);
      if (ec == std::errc() && ptr == plain.data() + plain.size()) return d;
      if (ec == std::errc::result_out_of_range) {
        return plain.front() == '-' ? -std::numeric_limits<double>::infinity()
                                    : std::numeric_limits<double>::infinity();
      }
    }
  }
  return json::string(s);
}

std::string mark_of(const YAML::Node& node) {
  const auto m = node.Mark();
  if (m.is_null()) return {};
  return " at line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1);
}

Result<json::value> convert(const YAML::Node& node, int depth);

Result<std::string> key_string(const YAML::Node& key) {
  if (!key.IsScalar()) return make_error("unsupported non-scalar mapping key" + mark_of(key));
  const std::string& text = key.Scalar();
  if (key.Tag() == "!" || key.Tag() == "tag:yaml.org,2002:str") return text;
  const json::value v = resolve_plain(text);
  if (v.is_bool()) return std::string(v.get_bool() ? "true" : "false");
  if (v.is_null()) return std::string("null");
  return text;
}

Result<json::value> convert(const YAML::Node& node, int depth) {
  constexpr int kMaxDepth = 512;  // defends against pathological nesting
  if (depth > kMaxDepth) return make_error("YAML nesting too deep");
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return json::value(nullptr);
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      if (tag == "!" || tag == "tag:yaml.org,2002:str")
        return json::value(json::string(node.Scalar()));
      return resolve_plain(node.Scalar());
    }
    case YAML::NodeType::Sequence: {
      json::array arr;
      arr.reserve(node.size());
      for (const auto& item : node) {
        auto v = convert(item, depth + 1);
        if (!v) return v;
        arr.push_back(std::move(*v));
      }
      return json::value(std::move(arr));
    }
    case YAML::NodeType::Map: {
      json::object obj;
      std::vector<YAML::Node> merges;
      for (const auto& kv : node) {
        if (kv.first.IsScalar() && kv.first.Tag() == "?" && kv.first.Scalar() == "<<") {
          merges.push_back(kv.second);
          continue;
        }
        auto key = key_string(kv.first);
        if (!key) return key.error();
        auto v = convert(kv.second, depth + 1);
        if (!v) return v;
        obj[*key] = std::move(*v);
      }
      // Merge keys (`<<: *anchor`): explicit keys win over merged ones.
      for (const auto& m : merges) {
        std::vector<YAML::Node> sources;
        if (m.IsSequence()) {
          for (const auto& s : m) sources.push_back(s);
        } else {
          sources.push_back(m);
        }
        for (const auto& src : sources) {
          auto merged = convert(src, depth + 1);
          if (!merged) return merged;
          if (!merged->is_object())
            return make_error("merge key value is not a mapping" + mark_of(m));
          for (auto& kv : merged->get_object()) {
            if (!obj.contains(kv.key())) obj[kv.key()] = kv.value();
          }
        }
      }
      return json::value(std::move(obj));
    }
  }
  return json::value(nullptr);
}

}  // namespace

Result<json::value> parse(std::string_view text) {
  try {
    const YAML::Node node = YAML::Load(std::string(text));
    return convert(node, 0);
  } catch (const YAML::Exception& e) {
    return make_error("invalid YAML: " + std::string(e.what()));
  }
}

Result<std::vector<json::value>> parse_all(std::string_view text) {
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(std::string(text));
    std::vector<json::value> out;
    out.reserve(docs.size());
    for (const auto& doc : docs) {
      auto v = convert(doc, 0);
      if (!v) return v.error();
      if (v->is_null()) continue;
      out.push_back(std::move(*v));
    }
    return out;
  } catch (const YAML::Exception& e) {
    return make_error("invalid YAML: " + std::string(e.what()));
  }
}

// ---------------------------------------------------------------------------------
// Emitting, as go-yaml v3 Marshal does it.
// ---------------------------------------------------------------------------------

std::string format_go_float(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  // Shortest round-trip digits, via to_chars' scientific form "d.ddde±XX".
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  const bool negative = sci.front() == '-';
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (const char c : sci.substr(negative ? 1 : 0, e_pos - (negative ? 1 : 0))) {
    if (c != '.') digits += c;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exp = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  const int nd = static_cast<int>(digits.size());
  std::string out = negative ? "-" : "";
  // Go: %e when exp < -4 || exp >= eprec, with eprec = 6 for the shortest form.
  if (exp < -4 || exp >= 6) {
    out += digits[0];
    if (nd > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += exp < 0 ? '-' : '+';
    const int a = std::abs(exp);
    if (a < 10) out += '0';
    out += std::to_string(a);
    return out;
  }
  const int dp = exp + 1;  // digits before the decimal point
  if (dp <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-dp), '0');
    out += digits;
  } else if (dp >= nd) {
    out += digits;
    out.append(static_cast<std::size_t>(dp - nd), '0');
  } else {
    out += digits.substr(0, static_cast<std::size_t>(dp));
    out += '.';
    out += digits.substr(static_cast<std::size_t>(dp));
  }
  return out;
}

namespace {

// --- go-yaml v3 resolve(): does a plain scalar read as something other than a string?
bool is_timestamp(std::string_view s) {
  // Accepted layouts: 2006-1-2T15:4:5.999999999Z07:00 (T or t or space separator),
  // 2006-1-2 15:4:5.999999999, 2006-1-2. Checked structurally.
  std::size_t i = 0;
  const auto digits = [&](std::size_t min, std::size_t max) {
    const std::size_t start = i;
    while (i < s.size() && is_digit(s[i]) && i - start < max) ++i;
    return i - start >= min;
  };
  if (!digits(4, 4) || i >= s.size() || s[i++] != '-') return false;
  if (!digits(1, 2) || i >= s.size() || s[i++] != '-') return false;
  if (!digits(1, 2)) return false;
  if (i == s.size()) return true;
  if (s[i] != 'T' && s[i] != 't' && s[i] != ' ') return false;
  ++i;
  if (!digits(1, 2) || i >= s.size() || s[i++] != ':') return false;
  if (!digits(1, 2) || i >= s.size() || s[i++] != ':') return false;
  if (!digits(1, 2)) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits(1, 9)) return false;
  }
  if (i == s.size()) return true;
  if (s[i] == 'Z') return i + 1 == s.size();
  if (s[i] != '+' && s[i] != '-') return false;
  ++i;
  if (!digits(2, 2) || i >= s.size() || s[i++] != ':') return false;
  return digits(2, 2) && i == s.size();
}

bool v3_resolves_to_non_string(std::string_view s) {
  if (is_one_of(s, {"",      "~",     "null",  "Null",  "NULL",  "true",  "True",  "TRUE",
                    "false", "False", "FALSE", ".nan",  ".NaN",  ".NAN",  ".inf",  ".Inf",
                    ".INF",  "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", "<<"})) {
    return true;
  }
  const char first = s.front();
  if (first == '.') {
    double d = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
    return ec == std::errc() && ptr == s.data() + s.size();
  }
  if (!is_digit(first) && first != '+' && first != '-') return false;
  if (is_digit(first) && is_timestamp(s)) return true;
  std::string plain;
  for (const char c : s) {
    if (c != '_') plain += c;
  }
  if (parse_go_int(plain)) return true;
  if (is_yaml_style_float(plain)) return true;
  return false;
}

// YAML 1.1 booleans go-yaml v3 still quotes for the benefit of 1.1 readers.
bool is_old_bool(std::string_view s) {
  return is_one_of(s, {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO",
                       "off", "Off", "OFF"});
}

// ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
bool is_base60_float(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i >= s.size() || !is_digit(s[i])) return false;
  ++i;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '_')) ++i;
  int groups = 0;
  while (i < s.size() && s[i] == ':') {
    ++i;
    if (i < s.size() && s[i] >= '0' && s[i] <= '5' && i + 1 < s.size() && is_digit(s[i + 1])) {
      i += 2;
    } else if (i < s.size() && is_digit(s[i])) {
      ++i;
    } else {
      return false;
    }
    ++groups;
  }
  if (groups == 0) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && (is_digit(s[i]) || s[i] == '_')) ++i;
  }
  return i == s.size();
}

// --- libyaml's scalar analysis (yaml_emitter_analyze_scalar), UTF-8 aware.
struct ScalarAnalysis {
  bool multiline = false;
  bool flow_plain_allowed = false;
  bool block_plain_allowed = false;
  bool single_quoted_allowed = false;
  bool block_allowed = false;
};

std::size_t utf8_width(unsigned char c) {
  if ((c & 0x80) == 0) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}

bool is_printable_at(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) -> unsigned char {
    return k < s.size() ? static_cast<unsigned char>(s[k]) : 0;
  };
  const unsigned char c = b(i);
  return c == 0x0A || (c >= 0x20 && c <= 0x7E) || (c == 0xC2 && b(i + 1) >= 0xA0) ||
         (c > 0xC2 && c < 0xED) || (c == 0xED && b(i + 1) < 0xA0) || c == 0xEE ||
         (c == 0xEF && !(b(i + 1) == 0xBB && b(i + 2) == 0xBF) &&
          !(b(i + 1) == 0xBF && (b(i + 2) == 0xBE || b(i + 2) == 0xBF)));
}

bool is_break_at(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c == '\r' || c == '\n') return true;
  if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) return true;
  if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
      (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
       static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
    return true;
  }
  return false;
}

bool is_blankz_at(std::string_view s, std::size_t i) {
  if (i >= s.size()) return true;
  const char c = s[i];
  return c == ' ' || c == '\t' || c == '\0' || is_break_at(s, i);
}

ScalarAnalysis analyze_scalar(std::string_view v) {
  ScalarAnalysis a;
  if (v.empty()) {
    a.block_plain_allowed = true;
    a.single_quoted_allowed = true;
    return a;
  }
  bool block_indicators = false, flow_indicators = false, line_breaks = false,
       special_characters = false, leading_space = false, leading_break = false,
       trailing_space = false, trailing_break = false, break_space = false, space_break = false,
       previous_space = false, previous_break = false;
  if ((v.substr(0, 3) == "---" || v.substr(0, 3) == "...")) {
    block_indicators = true;
    flow_indicators = true;
  }
  bool preceded_by_whitespace = true;
  for (std::size_t i = 0; i < v.size();) {
    const char c = v[i];
    const std::size_t w = utf8_width(static_cast<unsigned char>(c));
    const bool followed_by_whitespace = is_blankz_at(v, i + w);
    if (i == 0) {
      switch (c) {
        case '#':
        case ',':
        case '[':
        case ']':
        case '{':
        case '}':
        case '&':
        case '*':
        case '!':
        case '|':
        case '>':
        case '\'':
        case '"':
        case '%':
        case '@':
        case '`':
          flow_indicators = true;
          block_indicators = true;
          break;
        case '?':
        case ':':
          flow_indicators = true;
          if (followed_by_whitespace) block_indicators = true;
          break;
        case '-':
          if (followed_by_whitespace) {
            flow_indicators = true;
            block_indicators = true;
          }
          break;
        default:
          break;
      }
    } else {
      switch (c) {
        case ',':
        case '?':
        case '[':
        case ']':
        case '{':
        case '}':
          flow_indicators = true;
          break;
        case ':':
          flow_indicators = true;
          if (followed_by_whitespace) block_indicators = true;
          break;
        case '#':
          if (preceded_by_whitespace) {
            flow_indicators = true;
            block_indicators = true;
          }
          break;
        default:
          break;
      }
    }
    if (!is_printable_at(v, i)) special_characters = true;
    if (is_break_at(v, i)) line_breaks = true;
    if (c == ' ') {
      if (i == 0) leading_space = true;
      if (i + w == v.size()) trailing_space = true;
      if (previous_break) break_space = true;
      previous_space = true;
      previous_break = false;
    } else if (is_break_at(v, i)) {
      if (i == 0) leading_break = true;
      if (i + w == v.size()) trailing_break = true;
      if (previous_space) space_break = true;
      previous_space = false;
      previous_break = true;
    } else {
      previous_space = false;
      previous_break = false;
    }
    preceded_by_whitespace = is_blankz_at(v, i);
    i += w;
  }
  a.multiline = line_breaks;
  a.flow_plain_allowed = true;
  a.block_plain_allowed = true;
  a.single_quoted_allowed = true;
  a.block_allowed = true;
  if (leading_space || leading_break || trailing_space || trailing_break) {
    a.flow_plain_allowed = false;
    a.block_plain_allowed = false;
  }
  if (trailing_space) a.block_allowed = false;
  if (break_space) {
    a.flow_plain_allowed = false;
    a.block_plain_allowed = false;
    a.single_quoted_allowed = false;
  }
  if (space_break || special_characters) {
    a.flow_plain_allowed = false;
    a.block_plain_allowed = false;
    a.single_quoted_allowed = false;
    a.block_allowed = false;
  }
  if (line_breaks) {
    a.flow_plain_allowed = false;
    a.block_plain_allowed = false;
  }
  if (flow_indicators) a.flow_plain_allowed = false;
  if (block_indicators) a.block_plain_allowed = false;
  return a;
}

enum class Style { plain, single_quoted, double_quoted, literal };

// Most scalars of a generated config are identifiers, paths and label names: a letter
// or '_' first, then letters, digits and "_./-". No such string is a number, a
// timestamp or a base-60 float, none contains an indicator, a space or a break that
// libyaml's analysis looks for, so only the short keywords below resolve to something
// else: every other one is written plain (the full analysis gives the same answer).
bool plainly_an_identifier(std::string_view s) {
  if (s.empty()) return false;
  const auto c0 = static_cast<unsigned char>(s.front());
  if (!((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || c0 == '_')) return false;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '/' || c == '-';
    if (!ok) return false;
  }
  // The keywords ("null", "true", "FALSE", "yes", "off"...) are at most 5 bytes long.
  return s.size() > 5 || (!v3_resolves_to_non_string(s) && !is_old_bool(s));
}

// go-yaml v3's encoder choice, then libyaml's yaml_emitter_select_scalar_style in block
// context.
Style select_style(std::string_view s, bool simple_key) {
  if (plainly_an_identifier(s)) return Style::plain;
  Style style;
  if (s.find('\n') != std::string_view::npos) {
    style = Style::literal;
  } else if (!v3_resolves_to_non_string(s) && !is_base60_float(s) && !is_old_bool(s)) {
    style = Style::plain;
  } else {
    style = Style::double_quoted;
  }
  const ScalarAnalysis a = analyze_scalar(s);
  if (style == Style::plain) {
    if (!a.block_plain_allowed || (s.empty() && simple_key)) style = Style::single_quoted;
  }
  if (style == Style::single_quoted && !a.single_quoted_allowed) style = Style::double_quoted;
  if (style == Style::literal && (!a.block_allowed || simple_key)) style = Style::double_quoted;
  return style;
}

void write_double_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t w = utf8_width(c);
    const bool bom = c == 0xEF && i + 2 < s.size() &&
                     static_cast<unsigned char>(s[i + 1]) == 0xBB &&
                     static_cast<unsigned char>(s[i + 2]) == 0xBF;
    if (!is_printable_at(s, i) || bom || is_break_at(s, i) || c == '"' || c == '\\') {
      // Decode the code point for the escape.
      std::uint32_t cp = c;
      if (w == 2 && i + 1 < s.size()) {
        cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
      } else if (w == 3 && i + 2 < s.size()) {
        cp = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
             (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
      } else if (w == 4 && i + 3 < s.size()) {
        cp = ((c & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
             ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) |
             (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
      }
      switch (cp) {
        case 0x00:
          out += "\\0";
          break;
        case 0x07:
          out += "\\a";
          break;
        case 0x08:
          out += "\\b";
          break;
        case 0x09:
          out += "\\t";
          break;
        case 0x0A:
          out += "\\n";
          break;
        case 0x0B:
          out += "\\v";
          break;
        case 0x0C:
          out += "\\f";
          break;
        case 0x0D:
          out += "\\r";
          break;
        case 0x1B:
          out += "\\e";
          break;
        case 0x22:
          out += "\\\"";
          break;
        case 0x5C:
          out += "\\\\";
          break;
        case 0x85:
          out += "\\N";
          break;
        case 0xA0:
          out += "\\_";
          break;
        case 0x2028:
          out += "\\L";
          break;
        case 0x2029:
          out += "\\P";
          break;
        default: {
          char buf[16];
          if (cp <= 0xFF) {
            std::snprintf(buf, sizeof buf, "\\x%02X", cp);
          } else if (cp <= 0xFFFF) {
            std::snprintf(buf, sizeof buf, "\\u%04X", cp);
          } else {
            std::snprintf(buf, sizeof buf, "\\U%08X", cp);
          }
          out += buf;
        }
      }
    } else {
      out.append(s.substr(i, w));
    }
    i += w;
  }
  out += '"';
}

void write_single_quoted(std::string& out, std::string_view s) {
  out += '\'';
  for (const char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
}

void write_literal(std::string& out, std::string_view s, int content_indent, int best_indent) {
  out += '|';
  if (!s.empty() && (s.front() == ' ' || s.front() == '\n')) out += std::to_string(best_indent);
  // Chomping: no final break "-", one "" (clip), more "+" (keep).
  if (s.empty() || s.back() != '\n') {
    out += '-';
  } else if (s.size() == 1 || s[s.size() - 2] == '\n') {
    out += '+';
  }
  out += '\n';
  bool at_line_start = true;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n') {
      out += '\n';
      at_line_start = true;
      continue;
    }
    if (at_line_start) {
      out.append(static_cast<std::size_t>(content_indent), ' ');
      at_line_start = false;
    }
    out += c;
  }
  if (!s.empty() && s.back() != '\n') out += '\n';
}

// go-yaml v3's keyList.Less: a "natural" order where digit runs compare numerically and
// non-letters sort before letters.
std::vector<char32_t> runes(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t w = std::min(utf8_width(c), s.size() - i);
    char32_t cp = c;
    if (w == 2) cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
    if (w == 3) {
      cp = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
           (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
    }
    if (w == 4) {
      cp = ((c & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
           ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) |
           (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
    }
    out.push_back(cp);
    i += w;
  }
  return out;
}

bool rune_is_letter(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c != 0xD7 && c != 0xF7);
}
bool rune_is_digit(char32_t c) {
  return c >= '0' && c <= '9';
}

// The bytes of an ASCII string as runes, without decoding them into a vector.
struct AsciiRunes {
  std::string_view s;
  char32_t operator[](std::size_t i) const { return static_cast<unsigned char>(s[i]); }
  std::size_t size() const { return s.size(); }
};

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (static_cast<unsigned char>(c) & 0x80) == 0; });
}

template <class Runes>
bool runes_less(const Runes& ar, const Runes& br) {
  bool digits = false;
  for (std::size_t i = 0; i < ar.size() && i < br.size(); ++i) {
    if (ar[i] == br[i]) {
      digits = rune_is_digit(ar[i]);
      continue;
    }
    const bool al = rune_is_letter(ar[i]);
    const bool bl = rune_is_letter(br[i]);
    if (al && bl) return ar[i] < br[i];
    if (al || bl) return digits ? al : bl;
    std::int64_t an = 0, bn = 0;
    if (ar[i] == '0' || br[i] == '0') {
      for (std::size_t j = i; j-- > 0 && rune_is_digit(ar[j]);) {
        if (ar[j] != '0') {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    // Go's int arithmetic wraps on overflow (a run of 20 digits), and go-yaml's order
    // with it: accumulate modulo 2^64, as Go does, instead of overflowing (undefined in
    // C++; found by fuzzing).
    std::size_t ai = i, bi = i;
    std::uint64_t au = static_cast<std::uint64_t>(an), bu = static_cast<std::uint64_t>(bn);
    for (; ai < ar.size() && rune_is_digit(ar[ai]); ++ai) au = au * 10 + (ar[ai] - '0');
    for (; bi < br.size() && rune_is_digit(br[bi]); ++bi) bu = bu * 10 + (br[bi] - '0');
    an = static_cast<std::int64_t>(au);
    bn = static_cast<std::int64_t>(bu);
    if (an != bn) return an < bn;
    if (ai != bi) return ai < bi;
    return ar[i] < br[i];
  }
  return ar.size() < br.size();
}

bool go_yaml_key_less(std::string_view a_str, std::string_view b_str) {
  // Keys are nearly always ASCII: compare their bytes, which are their runes.
  if (is_ascii(a_str) && is_ascii(b_str)) {
    return runes_less(AsciiRunes{a_str}, AsciiRunes{b_str});
  }
  return runes_less(runes(a_str), runes(b_str));
}

class Emitter {
 public:
  explicit Emitter(const EmitOptions& o) : opt_(o) {}

  std::string run(const json::value& v) {
    // A top-level collection starts at indent 0; a top-level scalar is written as is.
    if (is_block_collection(v)) {
      emit_collection(v, 0, /*in_sequence_item=*/false);
    } else {
      write_scalar(v, /*content_indent=*/opt_.indent, /*simple_key=*/false);
      out_ += '\n';
    }
    return std::move(out_);
  }

 private:
  static bool is_block_collection(const json::value& v) {
    return (v.is_object() && !v.get_object().empty()) || (v.is_array() && !v.get_array().empty());
  }

  // go-yaml v3's indent rule for a nested block node.
  int nested_indent(int indent, bool parent_is_sequence_item) const {
    if (parent_is_sequence_item) return indent + 2;
    return opt_.indent * ((indent + opt_.indent) / opt_.indent);
  }

  void write_number(const json::value& v) {
    if (opt_.numbers == NumberStyle::go_float64 || v.is_double()) {
      const double d = v.to_number<double>();
      if (std::isnan(d)) {
        out_ += ".nan";
      } else if (std::isinf(d)) {
        out_ += d > 0 ? ".inf" : "-.inf";
      } else {
        out_ += format_go_float(d);
      }
    } else if (v.is_int64()) {
      out_ += std::to_string(v.get_int64());
    } else {
      out_ += std::to_string(v.get_uint64());
    }
  }

  void write_string(std::string_view s, int content_indent, bool simple_key) {
    switch (select_style(s, simple_key)) {
      case Style::plain:
        out_ += s;
        break;
      case Style::single_quoted:
        write_single_quoted(out_, s);
        break;
      case Style::double_quoted:
        write_double_quoted(out_, s);
        break;
      case Style::literal:
        write_literal(out_, s, content_indent, opt_.indent);
        literal_ended_line_ = true;
        break;
    }
  }

  // Writes a scalar or an empty collection inline.
  void write_scalar(const json::value& v, int content_indent, bool simple_key) {
    switch (v.kind()) {
      case json::kind::null:
        out_ += "null";
        break;
      case json::kind::bool_:
        out_ += v.get_bool() ? "true" : "false";
        break;
      case json::kind::int64:
      case json::kind::uint64:
      case json::kind::double_:
        write_number(v);
        break;
      case json::kind::string:
        write_string(v.get_string(), content_indent, simple_key);
        break;
      case json::kind::array:
        out_ += "[]";
        break;
      case json::kind::object:
        out_ += "{}";
        break;
    }
  }

  void end_line() {
    if (literal_ended_line_) {
      literal_ended_line_ = false;  // the literal block already wrote its final newline
      return;
    }
    out_ += '\n';
  }

  // Emits a non-empty collection whose first line continues the current line when
  // `inline_first` (after "- "), else starts at column `indent`.
  void emit_collection(const json::value& v, int indent, bool inline_first) {
    if (v.is_object()) {
      const auto& obj = v.get_object();
      std::vector<const json::key_value_pair*> entries;
      entries.reserve(obj.size());
      for (const auto& kv : obj) entries.push_back(&kv);
      // Stable (merge) sort: go-yaml's order is not always transitive (`a333` < `a3333...`
      // < `a4` < `a333` once a digit run wraps), and std::sort may then read out of
      // bounds; a merge sort stays within the range whatever the comparator says.
      std::stable_sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) {
        return go_yaml_key_less(a->key(), b->key());
      });
      bool first = true;
      for (const auto* kv : entries) {
        if (!(first && inline_first)) out_.append(static_cast<std::size_t>(indent), ' ');
        first = false;
        write_string(kv->key(), indent, /*simple_key=*/true);
        out_ += ':';
        const json::value& value = kv->value();
        if (is_block_collection(value)) {
          out_ += '\n';
          // Values of a mapping are never "in a sequence item" themselves.
          emit_collection(value, nested_indent(indent, false), false);
        } else {
          out_ += ' ';
          write_scalar(value, nested_indent(indent, false), false);
          end_line();
        }
      }
    } else {
      const auto& arr = v.get_array();
      bool first = true;
      for (const auto& item : arr) {
        if (!(first && inline_first)) out_.append(static_cast<std::size_t>(indent), ' ');
        first = false;
        out_ += "- ";
        if (is_block_collection(item)) {
          emit_collection(item, nested_indent(indent, true), true);
        } else {
          write_scalar(item, nested_indent(indent, true), false);
          end_line();
        }
      }
    }
  }

  const EmitOptions& opt_;
  std::string out_;
  bool literal_ended_line_ = false;
};

}  // namespace

std::string emit(const json::value& v, const EmitOptions& options) {
  return Emitter(options).run(v);
}

}  // namespace aop::k8s::yaml
