// Lexer and parser of the Alloy subset the operator generates. The lexer follows Alloy's
// scanner (itself modelled on Go's): escapes `\\ \" \n \r \t \a \b \f \v \xNN \NNN
// \uNNNN \UNNNNNNNN` only, no raw newline in a string, UTF-8 source without NUL or a byte
// order mark after the start, `//` and `/* */` comments. As in Go, a newline ends an
// attribute or block, so a multi-line list or object needs a comma after its last element.
#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "tests/alloy/checker/checker.hpp"

namespace aop::alloy::check {
namespace {

enum class Tok { ident, string, number, punct, newline, eof };

struct Token {
  Tok kind = Tok::eof;
  int line = 0;
  std::string text;  // identifier, punctuation, raw number; decoded string bytes
};

bool letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}

int hex(char c) {
  if (digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void put_utf8(std::string& out, std::uint32_t r) {
  if (r < 0x80) {
    out += static_cast<char>(r);
  } else if (r < 0x800) {
    out += static_cast<char>(0xC0 | (r >> 6));
    out += static_cast<char>(0x80 | (r & 0x3F));
  } else if (r < 0x10000) {
    out += static_cast<char>(0xE0 | (r >> 12));
    out += static_cast<char>(0x80 | ((r >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (r & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (r >> 18));
    out += static_cast<char>(0x80 | ((r >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((r >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (r & 0x3F));
  }
}

// Length of the UTF-8 sequence at s[i] and its code point; 0 when invalid.
std::size_t utf8_at(std::string_view s, std::size_t i, std::uint32_t& r) {
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

class Lexer {
 public:
  Lexer(const SourceFile& f, std::vector<Violation>& v) : file_(f), violations_(v) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    const std::string_view s = file_.text;
    while (pos_ < s.size()) {
      const char c = s[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\n') {
        out.push_back({Tok::newline, line_, "\n"});
        ++line_;
        ++pos_;
      } else if (s.substr(pos_, 2) == "//") {
        while (pos_ < s.size() && s[pos_] != '\n') check_char();
      } else if (s.substr(pos_, 2) == "/*") {
        block_comment(out);
      } else if (letter(c)) {
        const std::size_t start = pos_;
        while (pos_ < s.size() && (letter(s[pos_]) || digit(s[pos_]))) ++pos_;
        out.push_back({Tok::ident, line_, std::string(s.substr(start, pos_ - start))});
      } else if (digit(c)) {
        out.push_back(number());
      } else if (c == '"') {
        out.push_back(string());
      } else if (c == '`') {
        error("raw (backtick) strings are never generated");
        ++pos_;
        while (pos_ < s.size() && s[pos_] != '`') {
          if (s[pos_] == '\n') ++line_;
          ++pos_;
        }
        ++pos_;
        out.push_back({Tok::string, line_, ""});
      } else if (std::string_view("{}[](),.=+-").find(c) != std::string_view::npos) {
        out.push_back({Tok::punct, line_, std::string(1, c)});
        ++pos_;
      } else {
        std::uint32_t r = 0;
        const std::size_t n = utf8_at(s, pos_, r);
        error(n == 0 ? "illegal UTF-8 encoding"
                     : "unexpected character U+" + std::to_string(r) + " outside a string");
        pos_ += n == 0 ? 1 : n;
      }
    }
    out.push_back({Tok::eof, line_, ""});
    return out;
  }

 private:
  void error(std::string m) { violations_.push_back({file_.key, line_, std::move(m)}); }

  // Consumes one character of a comment or string, checking it is valid UTF-8.
  void check_char() {
    std::uint32_t r = 0;
    const std::size_t n = utf8_at(file_.text, pos_, r);
    if (n == 0) {
      error("illegal UTF-8 encoding");
      ++pos_;
      return;
    }
    if (r == 0) error("illegal character NUL");
    if (r == 0xFEFF) error("illegal byte order mark");
    pos_ += n;
  }

  void block_comment(std::vector<Token>& out) {
    const std::string_view s = file_.text;
    pos_ += 2;
    bool newline = false;
    while (pos_ < s.size() && s.substr(pos_, 2) != "*/") {
      if (s[pos_] == '\n') {
        newline = true;
        ++line_;
        ++pos_;
      } else {
        check_char();
      }
    }
    if (pos_ >= s.size()) error("comment not terminated");
    pos_ += 2;
    if (newline) out.push_back({Tok::newline, line_, "\n"});
  }

  Token number() {
    const std::string_view s = file_.text;
    const std::size_t start = pos_;
    while (pos_ < s.size() && digit(s[pos_])) ++pos_;
    if (pos_ < s.size() && s[pos_] == '.') {
      ++pos_;
      if (pos_ >= s.size() || !digit(s[pos_])) error("malformed number: digits expected after '.'");
      while (pos_ < s.size() && digit(s[pos_])) ++pos_;
    }
    if (pos_ < s.size() && (s[pos_] == 'e' || s[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s.size() && (s[pos_] == '+' || s[pos_] == '-')) ++pos_;
      if (pos_ >= s.size() || !digit(s[pos_])) error("malformed number: exponent has no digits");
      while (pos_ < s.size() && digit(s[pos_])) ++pos_;
    }
    if (pos_ < s.size() && letter(s[pos_])) error("malformed number: letter after digits");
    return {Tok::number, line_, std::string(s.substr(start, pos_ - start))};
  }

  Token string() {
    const std::string_view s = file_.text;
    Token t{Tok::string, line_, ""};
    ++pos_;
    while (true) {
      if (pos_ >= s.size()) {
        error("string literal not terminated");
        return t;
      }
      const char c = s[pos_];
      if (c == '"') {
        ++pos_;
        return t;
      }
      if (c == '\n') {
        error("newline in string");
        return t;  // the newline is lexed as a token; parsing reports the rest
      }
      if (c != '\\') {
        const std::size_t before = pos_;
        check_char();
        t.text.append(s.substr(before, pos_ - before));
        continue;
      }
      escape(t.text);
    }
  }

  void escape(std::string& out) {
    const std::string_view s = file_.text;
    ++pos_;
    if (pos_ >= s.size()) return;
    const char e = s[pos_++];
    switch (e) {
      case 'a':
        out += '\a';
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'v':
        out += '\v';
        return;
      case '\\':
        out += '\\';
        return;
      case '"':
        out += '"';
        return;
      case 'x':
      case 'u':
      case 'U': {
        const std::size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        std::uint32_t v = 0;
        for (std::size_t k = 0; k < n; ++k) {
          if (pos_ >= s.size() || hex(s[pos_]) < 0) {
            error(std::string("escape sequence \\") + e + " needs " + std::to_string(n) +
                  " hex digits");
            return;
          }
          v = v * 16 + static_cast<std::uint32_t>(hex(s[pos_++]));
        }
        if (e == 'x') {
          out += static_cast<char>(v);
        } else if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
          error("escape sequence is invalid Unicode code point");
        } else {
          put_utf8(out, v);
        }
        return;
      }
      default:
        if (e >= '0' && e <= '7') {
          std::uint32_t v = static_cast<std::uint32_t>(e - '0');
          for (int k = 0; k < 2; ++k) {
            if (pos_ >= s.size() || s[pos_] < '0' || s[pos_] > '7') {
              error("octal escape needs three digits");
              return;
            }
            v = v * 8 + static_cast<std::uint32_t>(s[pos_++] - '0');
          }
          if (v > 255) error("octal escape value above 255");
          out += static_cast<char>(v);
          return;
        }
        if (e == '\n') ++line_;
        error(std::string("unknown escape sequence \\") + e);
    }
  }

  const SourceFile& file_;
  std::vector<Violation>& violations_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

// Recursive descent over the token list; the first grammar error ends the file.
class Parser {
 public:
  Parser(const SourceFile& f, std::vector<Token> tokens, std::vector<Violation>& v)
      : file_(f), tokens_(std::move(tokens)), violations_(v) {}

  std::vector<Block> run() {
    std::vector<Block> out;
    try {
      skip_newlines();
      while (peek().kind != Tok::eof) {
        const Token& start = peek();
        std::string name = dotted_name();
        if (is_punct("=")) fail(start.line, "attribute " + name + " at top level");
        out.push_back(block_rest(std::move(name), start.line));
        end_statement();
        skip_newlines();
      }
    } catch (const Failure&) {
    }
    return out;
  }

 private:
  struct Failure {};

  [[noreturn]] void fail(int line, std::string message) {
    violations_.push_back({file_.key, line, std::move(message)});
    throw Failure{};
  }

  const Token& peek() const { return tokens_[pos_]; }
  const Token& take() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool is_punct(std::string_view p) const { return peek().kind == Tok::punct && peek().text == p; }
  void expect(std::string_view p, std::string_view where) {
    if (!is_punct(p)) {
      fail(peek().line,
           "expected '" + std::string(p) + "' " + std::string(where) + ", got " + describe(peek()));
    }
    take();
  }
  void skip_newlines() {
    while (peek().kind == Tok::newline) take();
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::newline:
        return "newline";
      case Tok::eof:
        return "end of file";
      case Tok::string:
        return "string";
      default:
        return "'" + t.text + "'";
    }
  }
  static bool keyword(const std::string& s) { return s == "true" || s == "false" || s == "null"; }

  std::string identifier(std::string_view what) {
    if (peek().kind != Tok::ident) {
      fail(peek().line, "expected " + std::string(what) + ", got " + describe(peek()));
    }
    if (keyword(peek().text)) {
      fail(peek().line, "keyword " + peek().text + " used as " + std::string(what));
    }
    return take().text;
  }

  std::string dotted_name() {
    std::string name = identifier("a block or attribute name");
    while (is_punct(".")) {
      take();
      name += "." + identifier("an identifier after '.'");
    }
    return name;
  }

  // A statement ends with a newline (or, last in a body, right before the `}`... which
  // the generated subset never does: the newline is required) or at the end of file.
  void end_statement() {
    if (peek().kind == Tok::newline || peek().kind == Tok::eof) return;
    fail(peek().line, "expected newline after statement, got " + describe(peek()));
  }

  Block block_rest(std::string name, int line) {
    Block b;
    b.name = std::move(name);
    b.line = line;
    if (peek().kind == Tok::string) {
      b.label = take().text;
      const auto& l = *b.label;
      const bool ok = !l.empty() && letter(l[0]) && std::all_of(l.begin(), l.end(), [](char c) {
        return letter(c) || digit(c);
      }) && !keyword(l);
      if (!ok) {
        violations_.push_back({file_.key, line, "block label \"" + l + "\" is not an identifier"});
      }
    }
    expect("{", "to open the body of " + b.name);
    skip_newlines();
    while (!is_punct("}")) {
      if (peek().kind == Tok::eof) fail(peek().line, "block " + b.name + " not closed");
      const Token& start = peek();
      std::string n = dotted_name();
      if (is_punct("=")) {
        if (n.find('.') != std::string::npos) {
          fail(start.line, "attribute name " + n + " contains '.'");
        }
        take();
        Attribute a{std::move(n), expression(), start.line};
        if (!b.blocks.empty()) b.attribute_after_block = true;
        b.attributes.push_back(std::move(a));
      } else {
        b.blocks.push_back(block_rest(std::move(n), start.line));
      }
      end_statement();
      skip_newlines();
    }
    take();
    return b;
  }

  Value expression() {
    Value first = term();
    if (!is_punct("+")) return first;
    Value v;
    v.kind = Value::Kind::concat;
    v.line = first.line;
    v.items.push_back(std::move(first));
    while (is_punct("+")) {
      take();
      skip_newlines();
      v.items.push_back(term());
    }
    return v;
  }

  // Comma-separated elements up to `close`; newlines only after the opening bracket, after
  // a comma, or before the closing bracket when a comma precedes.
  template <class Element>
  void elements(std::string_view close, std::string_view what, Element element) {
    skip_newlines();
    while (!is_punct(close)) {
      element();
      if (is_punct(",")) {
        take();
        skip_newlines();
        continue;
      }
      if (peek().kind == Tok::newline) {
        fail(peek().line, "missing ',' before newline in " + std::string(what));
      }
      if (!is_punct(close)) {
        fail(peek().line, "expected ',' or '" + std::string(close) + "' in " + std::string(what) +
                              ", got " + describe(peek()));
      }
    }
    take();
  }

  Value term() {
    const Token t = peek();
    Value v;
    v.line = t.line;
    if (t.kind == Tok::string) {
      take();
      v.kind = Value::Kind::string;
      v.text = t.text;
      return v;
    }
    if (t.kind == Tok::number || (t.kind == Tok::punct && t.text == "-")) {
      bool negative = false;
      if (t.kind == Tok::punct) {
        take();
        negative = true;
        if (peek().kind != Tok::number) fail(peek().line, "expected a number after '-'");
      }
      v.kind = Value::Kind::number;
      v.text = (negative ? "-" : "") + take().text;
      v.number = std::strtod(v.text.c_str(), nullptr);
      return v;
    }
    if (t.kind == Tok::punct && t.text == "[") {
      take();
      v.kind = Value::Kind::list;
      elements("]", "list", [&] { v.items.push_back(expression()); });
      return v;
    }
    if (t.kind == Tok::punct && t.text == "{") {
      take();
      v.kind = Value::Kind::object;
      elements("}", "object", [&] {
        if (peek().kind == Tok::string) {
          v.keys.push_back(take().text);
        } else {
          v.keys.push_back(identifier("an object key"));
        }
        expect("=", "after an object key");
        v.items.push_back(expression());
      });
      return v;
    }
    if (t.kind == Tok::ident) {
      if (t.text == "true" || t.text == "false") {
        take();
        v.kind = Value::Kind::boolean;
        v.boolean = t.text == "true";
        return v;
      }
      if (t.text == "null") {
        take();
        v.kind = Value::Kind::null;
        return v;
      }
      v.text = identifier("a reference");
      if (!is_punct(".") && !is_punct("(")) {
        fail(t.line, "bare identifier " + v.text + " is not a reference");
      }
      while (is_punct(".")) {
        take();
        v.text += "." + identifier("an identifier after '.'");
      }
      if (is_punct("(")) {
        take();
        v.kind = Value::Kind::call;
        elements(")", "call arguments", [&] { v.items.push_back(expression()); });
        return v;
      }
      v.kind = Value::Kind::reference;
      return v;
    }
    fail(t.line, "expected a value, got " + describe(t));
  }

  const SourceFile& file_;
  std::vector<Token> tokens_;
  std::vector<Violation>& violations_;
  std::size_t pos_ = 0;
};

}  // namespace

const Attribute* Block::attribute(std::string_view n) const {
  for (const auto& a : attributes) {
    if (a.name == n) return &a;
  }
  return nullptr;
}

std::vector<const Block*> Block::children(std::string_view n) const {
  std::vector<const Block*> out;
  for (const auto& b : blocks) {
    if (b.name == n) out.push_back(&b);
  }
  return out;
}

ParsedFile parse_file(const SourceFile& file, std::vector<Violation>& violations) {
  const std::size_t before = violations.size();
  auto tokens = Lexer(file, violations).run();
  ParsedFile out{file.key, {}};
  // A lexical error leaves token boundaries unreliable; report it alone.
  if (violations.size() > before) return out;
  out.blocks = Parser(file, std::move(tokens), violations).run();
  return out;
}

}  // namespace aop::alloy::check
