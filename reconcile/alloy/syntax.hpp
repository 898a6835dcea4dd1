// Alloy configuration syntax: a small typed tree (values, attributes, blocks, files) and
// the one writer that turns it into text. Every piece of Alloy configuration the operator
// produces is built as this tree; nothing else concatenates configuration text, so every
// user string goes through the same quoting and can never break out of its literal.
//
//   Block b("prometheus.scrape", "scrape_web_1a2b3c4d");
//   b.attr("targets", Expr::ref("discovery.relabel", "scrape_web_1a2b3c4d", "output"));
//   b.attr("job_name", Expr::string("serviceMonitor/ns/web/0"));
//   b.block(Block("clustering").attr("enabled", Expr::boolean(true)));
//   std::string text = write_file("monitoring", "agent", {b});
//
// Layout (what Alloy's own formatter would produce modulo tabs and `=` alignment): two
// spaces per level; attributes first, in the order added, then nested blocks; objects with
// one sorted entry per line and a trailing comma; lists of scalars on one line; a file
// starts with a header comment naming the GrafanaAgent and separates top-level blocks by
// one empty line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aop::alloy {

// One Alloy expression. Only the forms the operator generates exist: literals, lists,
// objects, references to component exports, the three functions it calls and `+`.
class Expr {
 public:
  enum class Kind { string, number, boolean, list, object, reference, call, concat };

  // Any bytes; bytes that are not UTF-8 are written as `\xNN` escapes.
  static Expr string(std::string bytes);
  // Must be finite: callers turn NaN and infinities into a translation failure before
  // building the tree (throws std::invalid_argument otherwise, a programmer error).
  static Expr number(double v);
  static Expr boolean(bool b);
  static Expr list(std::vector<Expr> items);
  static Expr strings(const std::vector<std::string>& items);  // a list of string literals
  // Keys are written sorted bytewise; a key given twice is a programmer error.
  static Expr object(std::vector<std::pair<std::string, Expr>> entries);
  // `<component>.<label>.<export>`, e.g. discovery.relabel.<label>.output.
  static Expr ref(std::string_view component, std::string_view label, std::string_view export_);
  // A dotted name that is not a component export: `constants.hostname`.
  static Expr constant(std::string_view dotted);
  // `sys.env("NAME")`, `coalesce(a, b)`, `array.concat(a, b)`.
  static Expr call(std::string_view function, std::vector<Expr> args);
  static Expr env(std::string_view name) { return call("sys.env", {string(std::string(name))}); }
  // `a + b + c` (string concatenation).
  static Expr concat(std::vector<Expr> terms);

  Kind kind() const { return kind_; }
  const std::string& text() const { return text_; }  // string bytes, reference or function
  double number_value() const { return number_; }
  bool bool_value() const { return bool_; }
  const std::vector<Expr>& items() const { return items_; }       // list, call args, terms
  const std::vector<std::string>& keys() const { return keys_; }  // object keys, sorted
  // True when the value needs more than one line (an object with entries, or a list
  // holding one).
  bool multiline() const;

 private:
  Kind kind_ = Kind::boolean;
  std::string text_;
  double number_ = 0;
  bool bool_ = false;
  std::vector<Expr> items_;  // object values, parallel to keys_
  std::vector<std::string> keys_;
};

// A block: `name ["label"] { attributes, then blocks }`.
class Block {
 public:
  // `name` is dot-separated identifiers; `label`, when present, must be an identifier.
  explicit Block(std::string name, std::optional<std::string> label = std::nullopt);

  Block& attr(std::string name, Expr value);
  Block& block(Block b);

  const std::string& name() const { return name_; }
  const std::optional<std::string>& label() const { return label_; }
  const std::vector<std::pair<std::string, Expr>>& attributes() const { return attributes_; }
  const std::vector<Block>& blocks() const { return blocks_; }
  bool empty() const { return attributes_.empty() && blocks_.empty(); }

 private:
  std::string name_;
  std::optional<std::string> label_;
  std::vector<std::pair<std::string, Expr>> attributes_;
  std::vector<Block> blocks_;
};

// One logical configuration file: its key (`main.alloy`, `<label>.alloy`) and blocks.
struct File {
  std::string key;
  std::vector<Block> blocks;
};

// Alloy numbers are doubles: integers are exact up to 2^53 in magnitude.
inline constexpr double kTwoPow53 = 9007199254740992.0;

// A double-quoted Alloy string literal holding exactly `bytes`.
std::string quote(std::string_view bytes);
// A number literal: integral values below 2^53 in magnitude as integers, others in the
// shortest form that reads back to the same double.
std::string format_number(double v);
// True for an ASCII identifier that is not a keyword (`true`, `false`, `null`).
bool is_identifier(std::string_view s);

std::string write_expr(const Expr& e, int indent = 0);
// A block at `indent` levels, ending with a newline.
std::string write_block(const Block& b, int indent = 0);
// The first line of every file, newline included.
std::string file_header(std::string_view ns, std::string_view name);
// Header, empty line, blocks separated by one empty line. `blocks` must not be empty.
std::string write_file(std::string_view ns, std::string_view name,
                       const std::vector<Block>& blocks);

}  // namespace aop::alloy
