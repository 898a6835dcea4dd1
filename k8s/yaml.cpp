#include "k8s/yaml.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <istream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <streambuf>
#include <unordered_map>

#include <yaml-cpp/eventhandler.h>
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

// ---------------------------------------------------------------------------------
// Input checks before the parser sees the bytes: YAML streams are UTF-8 here (as for
// kubectl and the agent); UTF-16/32, NUL bytes, invalid UTF-8 and the control characters
// YAML does not allow are refused with their position.
// ---------------------------------------------------------------------------------

std::string position(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0u) != 0x80u) {
      ++column;  // count characters, not continuation bytes
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string hex_code_point(std::uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", cp);
  return buf;
}

// The length of the valid UTF-8 sequence at s[i] (1 for ASCII), with its code point in
// cp; 0 when the bytes there are not UTF-8 (overlong forms, surrogates and code points
// past U+10FFFF included).
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = 0;
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0Fu;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07u;
  }
  if (len == 0 || i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (cc & 0x3Fu);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return len;
}

Result<void> check_encoding(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto starts = [&](std::initializer_list<unsigned char> bom) {
    if (text.size() < bom.size()) return false;
    std::size_t i = 0;
    for (const unsigned char b : bom) {
      if (byte(i++) != b) return false;
    }
    return true;
  };
  const std::string_view convert = "; save it as UTF-8";
  if (starts({0x00, 0x00, 0xFE, 0xFF}) || starts({0xFF, 0xFE, 0x00, 0x00})) {
    return make_error("the input is UTF-32 encoded (it starts with a UTF-32 byte order mark)" +
                      std::string(convert));
  }
  if (starts({0xFE, 0xFF}) || starts({0xFF, 0xFE})) {
    return make_error("the input is UTF-16 encoded (it starts with a UTF-16 byte order mark)" +
                      std::string(convert));
  }
  // UTF-16 without a byte order mark: ASCII text with every other byte NUL.
  if (text.size() >= 2 && ((byte(0) == 0 && byte(1) != 0) || (byte(0) != 0 && byte(1) == 0))) {
    return make_error("the input looks UTF-16 encoded (NUL bytes between ASCII characters)" +
                      std::string(convert));
  }
  std::size_t i = 0;
  if (starts({0xEF, 0xBB, 0xBF})) i = 3;  // a UTF-8 byte order mark is allowed
  const std::size_t n = text.size();
  while (i < n) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      if (c == 0) return make_error("the input contains a NUL byte at " + position(text, i));
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
        return make_error("the input contains the control character " + hex_code_point(c) + " at " +
                          position(text, i) +
                          "; YAML allows only tab, line feed and carriage return");
      }
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t len = utf8_sequence(text, i, cp);
    if (len == 0) return make_error("the input is not valid UTF-8 at " + position(text, i));
    // C1 controls other than NEL, and the two non-characters YAML excludes.
    if ((cp >= 0x80 && cp <= 0x9F && cp != 0x85) || cp == 0xFFFE || cp == 0xFFFF) {
      return make_error("the input contains the control character " + hex_code_point(cp) + " at " +
                        position(text, i));
    }
    i += len;
  }
  return {};
}

// ---------------------------------------------------------------------------------
// The parser's input: the caller's bytes without a copy, handed out in windows so that
// the bytes consumed since the last parse event can be bounded. yaml-cpp reads a scalar
// (or a comment) whole before reporting it; without this a 100 MiB scalar would be read
// and held before any limit could look at it.
// ---------------------------------------------------------------------------------

class BoundedInput final : public std::streambuf {
 public:
  BoundedInput(std::string_view text, std::size_t max_gap) : text_(text), max_gap_(max_gap) {
    window(0);
  }

  // Where the last event started (a byte offset); the parser never needs to read more
  // than max_gap bytes past it.
  void mark_event(std::size_t pos) { event_pos_ = std::max(event_pos_, pos); }
  bool stopped() const { return stopped_; }
  std::size_t stopped_at() const { return stopped_at_; }

 private:
  static constexpr std::size_t kWindow = std::size_t{64} * 1024;

  void window(std::size_t from) {
    char* base = const_cast<char*>(text_.data());  // never written: get area only
    const std::size_t to = std::min(text_.size(), from + kWindow);
    setg(base + from, base + from, base + to);
  }

  int_type underflow() override {
    const auto pos = static_cast<std::size_t>(gptr() - text_.data());
    if (pos >= text_.size()) return traits_type::eof();
    if (pos > event_pos_ + max_gap_) {
      stopped_ = true;
      stopped_at_ = event_pos_;
      return traits_type::eof();
    }
    window(pos);
    return traits_type::to_int_type(*gptr());
  }

  std::string_view text_;
  std::size_t max_gap_;
  std::size_t event_pos_ = 0;
  bool stopped_ = false;
  std::size_t stopped_at_ = 0;
};

// ---------------------------------------------------------------------------------
// Parse events → JSON values, with the limits enforced as the values are built. Anchors
// keep their converted value and its size, so an alias is charged its full expanded size
// before it is copied: a 1 KiB "billion laughs" document fails after copying at most
// max_alias_nodes nodes, not after expanding to gigabytes.
// ---------------------------------------------------------------------------------

struct LimitExceeded {
  std::string message;
};

std::string at(const YAML::Mark& m) {
  if (m.is_null()) return {};
  return " at line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1);
}

bool is_string_tag(const std::string& tag) {
  return tag == "!" || tag == "tag:yaml.org,2002:str";
}

std::string key_text(const std::string& tag, const std::string& text) {
  if (is_string_tag(tag)) return text;
  const json::value v = resolve_plain(text);
  if (v.is_bool()) return v.get_bool() ? "true" : "false";
  if (v.is_null()) return "null";
  return text;
}

// The size of a converted value, as the limits count it.
struct Size {
  std::size_t nodes = 0;
  std::size_t bytes = 0;  // scalar and key bytes
  std::size_t depth = 0;  // collection levels below and including the value
};

// yaml-cpp decodes the double-quoted escapes \N (U+0085) and \_ (U+00A0) into the single
// bytes 0x85 and 0xA0, which are not UTF-8. The input is valid UTF-8 (checked before
// parsing), so such a lone byte in a scalar comes from one of these escapes: it is
// written as the code point's UTF-8, as Go reads the same escape (found by fuzzing:
// fuzz/corpus/yaml/regression-nel-escape).
std::string with_escapes_as_utf8(const std::string& text) {
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    return text;
  }
  std::string out;
  out.reserve(text.size() + 4);
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_sequence(text, i, cp);
    if (n > 0) {
      out.append(text, i, n);
      i += n;
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x85 || c == 0xA0) {
      out += '\xC2';
      out += static_cast<char>(c);
    } else {
      out += text[i];
    }
    ++i;
  }
  return out;
}

class Converter final : public YAML::EventHandler {
 public:
  Converter(const ParseLimits& limits, BoundedInput& input) : limits_(limits), input_(input) {}

  // The converted document (null for an empty one), after OnDocumentEnd.
  json::value take() { return std::move(result_); }
  const ParseLimits& limits() const { return limits_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    event(mark);
    result_ = nullptr;
    anchors_.clear();
    total_ = {};
    alias_nodes_ = 0;
    stack_.clear();
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    event(mark);
    count(mark, Size{1, 0, 0});
    Scalar raw{"?", "~"};
    complete(mark, json::value(nullptr), Size{1, 0, 0}, anchor, &raw);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    event(mark);
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) fail("an alias names an unknown anchor" + at(mark));
    const Anchored& a = it->second;
    alias_nodes_ += a.size.nodes;
    if (alias_nodes_ > limits_.max_alias_nodes) {
      fail("YAML aliases expand to more than " + std::to_string(limits_.max_alias_nodes) +
           " nodes" + at(mark) +
           " (an alias bomb?); write repeated parts out instead of aliasing them");
    }
    if (stack_.size() + a.size.depth > limits_.max_depth) fail_depth(mark);
    count(mark, a.size);
    complete(mark, json::value(a.value), a.size, 0, a.raw ? &*a.raw : nullptr);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& read) override {
    const std::string text = with_escapes_as_utf8(read);
    event(mark);
    if (text.size() > limits_.max_scalar_bytes) fail_scalar(mark.pos);
    const Size size{1, text.size(), 0};
    count(mark, size);
    Scalar raw{tag, text};
    // A mapping key stays text: it is converted in complete().
    if (!stack_.empty() && stack_.back().is_map && stack_.back().expecting_key) {
      complete(mark, json::value(nullptr), size, anchor, &raw);
      return;
    }
    json::value v = is_string_tag(tag) ? json::value(json::string(text)) : resolve_plain(text);
    complete(mark, std::move(v), size, anchor, &raw);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, true);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Scalar {
    std::string tag;
    std::string text;
  };
  struct Anchored {
    json::value value;
    Size size;
    std::optional<Scalar> raw;  // for scalars: their text, should they be used as a key
  };
  struct Frame {
    bool is_map = false;
    YAML::anchor_t anchor = 0;
    YAML::Mark mark;
    json::value value;  // json::array or json::object
    Size size{1, 0, 1};
    bool expecting_key = true;
    std::string key;
    bool merge_key = false;  // the pending key is `<<`
    std::vector<std::pair<json::value, YAML::Mark>> merges;
  };

  [[noreturn]] void fail(std::string message) { throw LimitExceeded{std::move(message)}; }
  [[noreturn]] void fail_depth(const YAML::Mark& mark) {
    fail("YAML nesting is deeper than " + std::to_string(limits_.max_depth) + " levels" + at(mark));
  }
  [[noreturn]] void fail_scalar(std::size_t) {
    fail("a YAML scalar or comment is longer than " + std::to_string(limits_.max_scalar_bytes) +
         " bytes");
  }

  void event(const YAML::Mark& mark) {
    if (input_.stopped()) fail_scalar(input_.stopped_at());
    if (!mark.is_null() && mark.pos >= 0) input_.mark_event(static_cast<std::size_t>(mark.pos));
  }

  void count(const YAML::Mark& mark, const Size& s) {
    total_.nodes += s.nodes;
    total_.bytes += s.bytes;
    if (total_.nodes > limits_.max_nodes) {
      fail("the YAML document has more than " + std::to_string(limits_.max_nodes) + " nodes" +
           at(mark));
    }
    if (total_.bytes > limits_.max_document_bytes) {
      fail("the YAML document's values add up to more than " +
           std::to_string(limits_.max_document_bytes) + " bytes" + at(mark));
    }
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool is_map) {
    event(mark);
    if (!stack_.empty() && stack_.back().is_map && stack_.back().expecting_key) {
      fail("a mapping key is a " + std::string(is_map ? "mapping" : "sequence") + at(mark) +
           "; only scalar keys are supported");
    }
    if (stack_.size() + 1 > limits_.max_depth) fail_depth(mark);
    count(mark, Size{1, 0, 0});
    Frame f;
    f.is_map = is_map;
    f.anchor = anchor;
    f.mark = mark;
    if (is_map) {
      f.value = json::object();
    } else {
      f.value = json::array();
    }
    stack_.push_back(std::move(f));
  }

  void close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.is_map) {
      // Merge keys (`<<: *anchor`): explicit keys win over merged ones, earlier merged
      // mappings over later ones.
      auto& obj = f.value.get_object();
      for (auto& [merged, mark] : f.merges) {
        std::vector<const json::value*> sources;
        if (merged.is_array()) {
          for (const auto& s : merged.get_array()) sources.push_back(&s);
        } else {
          sources.push_back(&merged);
        }
        for (const json::value* src : sources) {
          if (!src->is_object()) fail("merge key value is not a mapping" + at(mark));
          for (const auto& kv : src->get_object()) {
            if (!obj.contains(kv.key())) obj[kv.key()] = kv.value();
          }
        }
      }
    }
    complete(f.mark, std::move(f.value), f.size, f.anchor, nullptr);
  }

  // A node is finished: remember it under its anchor, then hand it to its parent.
  void complete(const YAML::Mark& mark, json::value v, const Size& size, YAML::anchor_t anchor,
                const Scalar* raw) {
    if (anchor != 0) {
      Anchored a{v, size, raw ? std::optional<Scalar>(*raw) : std::nullopt};
      // The copy kept for aliases is memory too.
      count(mark, Size{0, size.bytes, 0});
      anchors_.insert_or_assign(anchor, std::move(a));
    }
    if (stack_.empty()) {
      result_ = std::move(v);
      return;
    }
    Frame& parent = stack_.back();
    parent.size.nodes += size.nodes;
    parent.size.bytes += size.bytes;
    parent.size.depth = std::max(parent.size.depth, size.depth + 1);
    if (!parent.is_map) {
      parent.value.get_array().push_back(std::move(v));
      return;
    }
    if (parent.expecting_key) {
      if (raw == nullptr) {
        fail("a mapping key is not a scalar" + at(mark) + "; only scalar keys are supported");
      }
      parent.merge_key = raw->tag == "?" && raw->text == "<<";
      parent.key = parent.merge_key ? std::string() : key_text(raw->tag, raw->text);
      parent.expecting_key = false;
      return;
    }
    parent.expecting_key = true;
    if (parent.merge_key) {
      parent.merges.emplace_back(std::move(v), mark);
      return;
    }
    parent.value.get_object()[parent.key] = std::move(v);
  }

  const ParseLimits& limits_;
  BoundedInput& input_;
  json::value result_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Anchored> anchors_;
  Size total_;
  std::size_t alias_nodes_ = 0;
};

// ---------------------------------------------------------------------------------
// yaml-cpp tokenizes a whole flow collection (`[...]`, `{...}`) before it reports any of
// it (each element might still turn out to be a key), at about 250 bytes of tokens per
// element: a 1 MiB `[0,0,0,...]` would take 130 MiB before the node limit could see a
// single node. This pass finds the flow collections of a YAML text and counts their
// tokens (`,` `:` and nested brackets) without building anything. It is a lexer for
// what decides "in a flow collection or not" (comments, quoted scalars, block scalars,
// plain scalars that merely contain brackets); on text that is not valid YAML it may
// count too much or too little, which the parser then reports on its own.
// ---------------------------------------------------------------------------------

struct FlowScan {
  std::size_t largest = 0;  // tokens in the largest outermost flow collection
  std::size_t offset = 0;   // where that collection starts
};

FlowScan scan_flow_collections(std::string_view t) {
  FlowScan out;
  const std::size_t n = t.size();
  std::size_t i = 0;
  std::size_t line_indent = 0;  // indentation of the current line
  bool at_line_start = true;    // only indentation seen on this line so far
  bool node_start = true;       // a node may start here (quotes, `[`, `{`, `|`, `>`)
  const auto blank = [&](std::size_t k) {
    return k >= n || t[k] == ' ' || t[k] == '\t' || t[k] == '\n' || t[k] == '\r';
  };
  const auto skip_quoted = [&](std::size_t k) {  // k at the opening quote; returns past it
    const char q = t[k++];
    while (k < n) {
      if (q == '\'' && t[k] == '\'') {
        if (k + 1 < n && t[k + 1] == '\'') {
          k += 2;
          continue;
        }
        return k + 1;
      }
      if (q == '"' && t[k] == '\\') {
        k += 2;
        continue;
      }
      if (q == '"' && t[k] == '"') return k + 1;
      ++k;
    }
    return n;
  };
  const auto skip_line = [&](std::size_t k) {
    while (k < n && t[k] != '\n') ++k;
    return k;
  };
  while (i < n) {
    const char c = t[i];
    if (c == '\n') {
      ++i;
      at_line_start = true;
      node_start = true;
      line_indent = 0;
      continue;
    }
    if (at_line_start && c == ' ') {
      ++line_indent;
      ++i;
      continue;
    }
    at_line_start = false;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') {  // a comment (preceded by whitespace or at a line start)
      i = skip_line(i);
      continue;
    }
    if (node_start && (c == '\'' || c == '"')) {
      i = skip_quoted(i);
      node_start = false;
      continue;
    }
    if (node_start && (c == '|' || c == '>')) {
      // A block scalar: its lines are the following ones indented deeper than this one
      // (and empty lines).
      i = skip_line(i);
      while (i < n) {
        std::size_t k = i + 1;  // past the '\n'
        std::size_t indent = 0;
        while (k < n && t[k] == ' ') {
          ++indent;
          ++k;
        }
        const bool empty = k >= n || t[k] == '\n' || t[k] == '\r';
        if (!empty && indent <= line_indent) break;
        i = skip_line(k);
      }
      continue;
    }
    if (node_start && (c == '[' || c == '{')) {
      // A flow collection: count its tokens up to the matching close.
      const std::size_t start = i;
      std::size_t depth = 0;
      std::size_t tokens = 0;
      bool value_start = true;
      while (i < n) {
        const char f = t[i];
        if (f == '[' || f == '{') {
          ++depth;
          ++tokens;
          value_start = true;
          ++i;
        } else if (f == ']' || f == '}') {
          ++i;
          if (--depth == 0) break;
          value_start = false;
        } else if (f == ',' || f == ':') {
          ++tokens;
          value_start = true;
          ++i;
        } else if ((f == '\'' || f == '"') && value_start) {
          i = skip_quoted(i);
          value_start = false;
        } else if (f == '#' && i > 0 && blank(i - 1)) {
          i = skip_line(i);
        } else {
          if (!blank(i)) value_start = false;
          ++i;
        }
      }
      if (tokens > out.largest) {
        out.largest = tokens;
        out.offset = start;
      }
      node_start = false;
      continue;
    }
    if ((c == '-' || c == '?' || c == ':') && blank(i + 1)) {  // indicators: a node follows
      ++i;
      node_start = true;
      continue;
    }
    // Plain text (a scalar, a key, `---`): up to `: ` or a comment; brackets and quotes
    // inside it are characters.
    while (i < n && t[i] != '\n') {
      if (t[i] == ':' && blank(i + 1)) break;
      if (t[i] == '#' && blank(i - 1)) break;
      ++i;
    }
    node_start = false;
  }
  return out;
}

// JSON is YAML too, and common (`kubectl get -o json`): a document that is JSON is
// parsed by Boost.JSON, which needs neither the token queue nor the converter. Returns
// nullopt when the text is not JSON (then it is parsed as YAML).
std::optional<Result<json::value>> parse_json_document(std::string_view text,
                                                       const ParseLimits& limits) {
  std::size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
    ++i;
  }
  if (i >= text.size() || (text[i] != '{' && text[i] != '[')) return std::nullopt;
  // Values outside strings, counted before anything is built (a JSON array of 4 million
  // zeros fits in 8 MiB and would take 64 MiB as values).
  std::size_t values = 1;
  for (std::size_t k = i; k < text.size(); ++k) {
    const char c = text[k];
    if (c == '"') {
      for (++k; k < text.size() && text[k] != '"'; ++k) {
        if (text[k] == '\\') ++k;
      }
    } else if (c == ',' || c == ':' || c == '[' || c == '{') {
      ++values;
    }
  }
  if (values > limits.max_nodes) {
    return make_error("invalid YAML: the YAML document has more than " +
                      std::to_string(limits.max_nodes) + " nodes");
  }
  json::parse_options options;
  options.max_depth = limits.max_depth + 1;  // Boost.JSON counts the outermost level
  boost::system::error_code ec;
  json::value v = json::parse(text.substr(i), ec, {}, options);
  if (ec) {
    if (ec == json::error::too_deep) {
      return make_error("invalid YAML: nesting is deeper than " + std::to_string(limits.max_depth) +
                        " levels");
    }
    return std::nullopt;  // YAML flow style that is not JSON (`{a: 1}`): the YAML path
  }
  // Node and byte limits, as for YAML.
  std::size_t nodes = 0;
  std::size_t bytes = 0;
  std::vector<const json::value*> todo{&v};
  while (!todo.empty()) {
    const json::value* e = todo.back();
    todo.pop_back();
    ++nodes;
    if (e->is_string()) bytes += e->get_string().size();
    if (e->is_array()) {
      for (const auto& x : e->get_array()) todo.push_back(&x);
    } else if (e->is_object()) {
      for (const auto& kv : e->get_object()) {
        bytes += kv.key().size();
        todo.push_back(&kv.value());
      }
    }
    if (e->is_string() && e->get_string().size() > limits.max_scalar_bytes) {
      return make_error("invalid YAML: a string is longer than " +
                        std::to_string(limits.max_scalar_bytes) + " bytes");
    }
  }
  if (nodes > limits.max_nodes) {
    return make_error("invalid YAML: the YAML document has more than " +
                      std::to_string(limits.max_nodes) + " nodes");
  }
  if (bytes > limits.max_document_bytes) {
    return make_error("invalid YAML: the YAML document's values add up to more than " +
                      std::to_string(limits.max_document_bytes) + " bytes");
  }
  return Result<json::value>(std::move(v));
}

// Runs the parser over `text`, calling `on_document` with each converted document.
template <class OnDocument>
Result<void> parse_stream(std::string_view text, const ParseLimits& limits,
                          OnDocument&& on_document) {
  if (text.size() > limits.max_input_bytes) {
    return make_error("the YAML input is " + std::to_string(text.size()) + " bytes long; at most " +
                      std::to_string(limits.max_input_bytes) + " are accepted");
  }
  if (auto ok = check_encoding(text); !ok) return ok.error();
  if (auto doc = parse_json_document(text, limits)) {
    if (!*doc) return doc->error();
    on_document(std::move(**doc));
    return {};
  }
  if (const FlowScan flow = scan_flow_collections(text); flow.largest > limits.max_flow_tokens) {
    return make_error("invalid YAML: the flow collection at " + position(text, flow.offset) +
                      " has more than " + std::to_string(limits.max_flow_tokens) +
                      " elements; write large collections in block style (one `- ` item or "
                      "`key: value` per line)");
  }
  // Room for the tokens the scanner reads ahead of the last event.
  constexpr std::size_t kLookahead = 4096;
  BoundedInput input(text, limits.max_scalar_bytes + kLookahead);
  std::istream stream(&input);
  Converter converter(limits, input);
  try {
    YAML::Parser parser(stream);
    for (std::size_t documents = 0; parser.HandleNextDocument(converter);) {
      if (input.stopped()) throw LimitExceeded{};
      if (++documents > limits.max_documents) {
        return make_error("the YAML input has more than " + std::to_string(limits.max_documents) +
                          " documents");
      }
      if (!on_document(converter.take())) break;
    }
    if (input.stopped()) throw LimitExceeded{};
  } catch (const LimitExceeded& e) {
    if (input.stopped()) {
      return make_error("invalid YAML: a scalar or comment following " +
                        position(text, input.stopped_at()) + " is longer than " +
                        std::to_string(limits.max_scalar_bytes) + " bytes");
    }
    return make_error("invalid YAML: " + e.message);
  } catch (const YAML::Exception& e) {
    if (input.stopped()) {
      return make_error("invalid YAML: a scalar or comment following " +
                        position(text, input.stopped_at()) + " is longer than " +
                        std::to_string(limits.max_scalar_bytes) + " bytes");
    }
    return make_error("invalid YAML: " + std::string(e.what()));
  }
  return {};
}

}  // namespace

Result<json::value> parse(std::string_view text, const ParseLimits& limits) {
  json::value out;
  bool first = true;
  auto ok = parse_stream(text, limits, [&](json::value v) {
    if (first) out = std::move(v);
    first = false;
    return false;  // the first document only
  });
  if (!ok) return ok.error();
  return out;
}

Result<std::vector<json::value>> parse_all(std::string_view text, const ParseLimits& limits) {
  std::vector<json::value> out;
  auto ok = parse_stream(text, limits, [&](json::value v) {
    if (!v.is_null()) out.push_back(std::move(v));
    return true;
  });
  if (!ok) return ok.error();
  return out;
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
  // `points`: where splice items go (emit_spliced); null: they are an error.
  explicit Emitter(const EmitOptions& o, std::vector<SplicePoint>* points = nullptr)
      : opt_(o), points_(points) {}

  std::string run(const json::value& v) {
    // A top-level collection starts at indent 0; a top-level scalar is written as is.
    if (is_block_collection(v)) {
      emit_collection(v, 0, /*in_sequence_item=*/false);
    } else {
      write_scalar(v, /*content_indent=*/opt_.indent, /*simple_key=*/false);
      // A literal block already ends its last line; another break would be read back as
      // content of a keep-chomped (`|+`) block.
      if (!literal_ended_line_) out_ += '\n';
      literal_ended_line_ = false;
    }
    return std::move(out_);
  }

  std::string items(const json::array& a, int indent) {
    if (!a.empty()) emit_collection(a, indent, /*inline_first=*/false);
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
    const std::size_t start = out_.size();
    write_styled(s, content_indent, simple_key);
    if (opt_.escape_env_expansion) {
      const std::string_view written = std::string_view(out_).substr(start);
      if (written.find_first_of("$\\") != std::string_view::npos &&
          changed_by_env_expansion(written)) {
        std::string doubled;
        doubled.reserve(written.size() + 8);
        for (const char c : written) {
          if (c == '$' || c == '\\') doubled += c;
          doubled += c;
        }
        out_.replace(start, std::string::npos, doubled);
      }
    }
  }

  void write_styled(std::string_view s, int content_indent, bool simple_key) {
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
        if (const auto splice = splice_of(item)) {
          const int column = (*opt_.splice_columns)[*splice];
          if (column != indent || (first && inline_first)) {
            throw std::logic_error("yaml::emit: a splice emitted for column " +
                                   std::to_string(column) + " written at column " +
                                   std::to_string(indent));
          }
          points_->push_back(SplicePoint{out_.size(), *splice});
          first = false;
          continue;
        }
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

  // The index of the splice `item` stands for, or none when it is an ordinary item.
  std::optional<std::size_t> splice_of(const json::value& item) const {
    const json::object* o = item.if_object();
    if (o == nullptr || o->size() != 1 || o->begin()->key() != kSpliceKey) return std::nullopt;
    const json::value& index = o->begin()->value();
    if (points_ == nullptr || opt_.splice_columns == nullptr || !index.is_number()) {
      throw std::logic_error("yaml::emit: a splice item outside emit_spliced()");
    }
    const auto i = static_cast<std::size_t>(index.to_number<double>());
    if (i >= opt_.splice_columns->size()) {
      throw std::logic_error("yaml::emit: a splice index without a column");
    }
    return i;
  }

  const EmitOptions& opt_;
  std::vector<SplicePoint>* points_;
  std::string out_;
  bool literal_ended_line_ = false;
};

}  // namespace

bool changed_by_env_expansion(std::string_view text) {
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    const char a = text[i];
    const char b = text[i + 1];
    if (a == '$' && (b == '{' || b == '$')) return true;
    if (a == '\\' && (b == '\\' || b == '/')) return true;
  }
  return false;
}

std::string emit(const json::value& v, const EmitOptions& options) {
  return Emitter(options).run(v);
}

SplicedText emit_spliced(const json::value& v, const EmitOptions& options) {
  SplicedText out;
  out.text = Emitter(options, &out.points).run(v);
  return out;
}

std::string emit_items(const json::array& items, int indent, const EmitOptions& options) {
  return Emitter(options).items(items, indent);
}

}  // namespace aop::k8s::yaml
