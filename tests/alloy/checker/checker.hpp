// An Alloy configuration checker for tests: would Alloy load what the operator generated?
//
// There is no Alloy binary on the build machines, so tests parse every generated file
// with this independent implementation (it shares no code with the product's writer) and
// check it against the rules Alloy enforces for the components the operator emits:
//
//   * lexical rules of Alloy's scanner (escapes, no raw newline in a string, UTF-8) and
//     the grammar of the generated subset (blocks, attributes, expressions, commas);
//   * top level: `logging` at most once, known components, labels, (name, label) unique;
//   * a schema per component: allowed attributes and blocks (in the documented order),
//     value kinds, required fields;
//   * references: declared components, the right export in the right place (targets to
//     targets, metric receivers to metric pipelines, log receivers to log pipelines), only
//     the three functions the operator uses, an acyclic graph;
//   * relabel, HTTP client, scrape, WAL and pipeline-stage validation rules;
//   * the file layout byte for byte, and the packing of files into Secrets.
//
// Every violation carries the file key, a line and a message.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aop::alloy::check {

struct Violation {
  std::string file;
  int line = 0;
  std::string message;
};
std::string to_string(const Violation& v);  // `file:line: message`
std::string to_string(const std::vector<Violation>& vs);

// ---- Syntax tree of a parsed file ------------------------------------------------------

struct Value {
  enum class Kind { string, number, boolean, null, list, object, reference, call, concat };
  Kind kind = Kind::null;
  int line = 0;
  std::string text;   // decoded string bytes; dotted reference or function name
  double number = 0;  // numbers (sign applied)
  bool boolean = false;
  std::vector<Value> items;       // list elements, object values, call arguments, terms
  std::vector<std::string> keys;  // object keys (decoded), parallel to items
};

struct Attribute {
  std::string name;
  Value value;
  int line = 0;
};

struct Block {
  std::string name;
  std::optional<std::string> label;
  int line = 0;
  std::vector<Attribute> attributes;
  std::vector<Block> blocks;
  bool attribute_after_block = false;  // source order: an attribute followed a nested block

  const Attribute* attribute(std::string_view n) const;
  std::vector<const Block*> children(std::string_view n) const;
};

struct ParsedFile {
  std::string key;
  std::vector<Block> blocks;
};

struct SourceFile {
  std::string key;
  std::string text;
};

// Parses one file. Lexical errors are all reported and leave the file unparsed (token
// boundaries are unreliable after one); otherwise parsing stops at the first grammar
// error and returns the blocks before it.
ParsedFile parse_file(const SourceFile& file, std::vector<Violation>& violations);

// ---- Checks ----------------------------------------------------------------------------

// Checks the files of one configuration (everything one workload loads). `ns`/`root`
// name the GrafanaAgent in the header line every file must start with.
std::vector<Violation> check_config(const std::vector<SourceFile>& files, std::string_view ns,
                                    std::string_view root);

struct ConfigSecret {
  std::string name;
  std::vector<SourceFile> data;
};

// The Secrets of one configuration and the projected volume's source names, in order:
// data keys, the per-Secret size budget, keys unique across Secrets, names `<base>`,
// `<base>-1`, ..., then check_config over all files.
std::vector<Violation> check_config_secrets(const std::vector<ConfigSecret>& secrets,
                                            std::string_view base,
                                            const std::vector<std::string>& projected_sources,
                                            std::string_view ns, std::string_view root);

// The canonical layout of parsed blocks (header line, one empty line between blocks,
// two-space indentation, sorted object keys, ...), for the byte-for-byte comparison.
std::string canonical_text(const std::vector<Block>& blocks, std::string_view ns,
                           std::string_view root);

// Go's time.ParseDuration, in nanoseconds; nullopt when it does not parse.
std::optional<double> parse_go_duration(std::string_view s);

}  // namespace aop::alloy::check
