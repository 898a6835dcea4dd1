// YAML <-> JSON data model.
//
// Parsing follows what Kubernetes tooling does with manifests (sigs.k8s.io/yaml over
// go-yaml): YAML 1.1 scalar resolution (`yes`/`no`/`on`/`off` are booleans, `~` and
// `null` are null, integers and floats become numbers, everything else a string; a
// quoted scalar is always a string), mapping keys become strings, anchors and aliases
// are resolved. Emitting follows go-yaml v3's `Marshal`, because the generated agent
// configuration is compared value-for-value and byte-for-byte with upstream's: block
// style, 4-space indentation, sorted map keys, literal blocks for multi-line strings,
// quoting of strings that would read as another type.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include "net/result.hpp"

namespace aop::k8s::yaml {

// Bounds on the work and memory one parse may take, so that hostile input (an alias
// bomb, deep nesting, a huge scalar) fails fast with a clear error instead of expanding
// to gigabytes. The defaults sit far above anything a Kubernetes object can hold (the
// API server stores at most ~1.5 MiB per object, 1 MiB per Secret).
struct ParseLimits {
  std::size_t max_input_bytes = 8 << 20;      // the whole stream
  std::size_t max_documents = 20'000;         // in one stream
  std::size_t max_depth = 200;                // nested mappings and sequences
  std::size_t max_nodes = 250'000;            // per document, aliases expanded
  std::size_t max_alias_nodes = 100'000;      // per document, nodes copied through aliases
  std::size_t max_scalar_bytes = 4 << 20;     // one scalar (or comment)
  std::size_t max_document_bytes = 32 << 20;  // per document: scalar and key bytes, expanded
  // Elements (`,` and `:` separators and nested brackets) of one flow collection
  // (`[...]`, `{...}`) in YAML that is not JSON: yaml-cpp reads a flow collection whole
  // before reporting any of it, at ~250 bytes of memory per element.
  std::size_t max_flow_tokens = 100'000;
};

// Parses one YAML document (the first of a stream). An empty document is JSON null.
// The input must be UTF-8 (a byte order mark is allowed) without NUL bytes or control
// characters other than tab, line feed and carriage return; errors name the position.
Result<boost::json::value> parse(std::string_view text, const ParseLimits& limits = {});

// Parses a multi-document stream (`---` separated); empty documents are skipped. The
// limits apply per document, the input size to the whole stream.
Result<std::vector<boost::json::value>> parse_all(std::string_view text,
                                                  const ParseLimits& limits = {});

enum class NumberStyle {
  // Integers print as integers, doubles with the shortest round-trip form (Kubernetes
  // object manifests).
  exact,
  // Every number is a float64 printed like Go's strconv.FormatFloat(v, 'g', -1, 64):
  // `1e+06`, `1.048576e+06`, `1e-05`, `2.5`, `100000` (the agent configuration).
  go_float64,
};

// Items emitted on their own by emit_items() (for the column they will stand at) and put
// into a document afterwards: a caller that writes the same large sequence items document
// after document keeps their text, or what it made of it, instead of emitting them again.
// A block sequence item that is an object with this one key, whose value is an index n,
// stands for splice n: emit_spliced() writes the rest of the document and says where each
// splice goes. The key is not valid UTF-8, so no parsed document and no Kubernetes object
// can hold it.
inline constexpr std::string_view kSpliceKey =
    "\xff"
    "splice";

// Where splice `splice` goes in a document emitted without it: at byte `offset`.
struct SplicePoint {
  std::size_t offset = 0;
  std::size_t splice = 0;
  bool operator==(const SplicePoint&) const = default;
};

// A document emitted without its splices: the text around them and where each one goes,
// in document order (offsets ascending).
struct SplicedText {
  std::string text;
  std::vector<SplicePoint> points;
};

struct EmitOptions {
  int indent = 4;                            // go-yaml v3 default
  NumberStyle numbers = NumberStyle::exact;  //
  // For a file read by a Grafana Agent started with -config.expand-env: the agent
  // replaces `${NAME}` with its environment and turns `$$` into `$`, `\\` into `\` and
  // `\/` into `/` before parsing (drone/envsubst; `$NAME`, `$1` and lone `$` or `\` stay).
  // With this set, every scalar whose written form contains one of those sequences is
  // written with each `$` and `\` doubled, which the expansion undoes exactly, so the
  // agent reads every value as it was given. Other scalars are written unchanged.
  bool escape_env_expansion = false;
  // emit_spliced(): the column each splice's items were emitted for, by index.
  const std::vector<int>* splice_columns = nullptr;
};

// Whether the agent's environment expansion would change this text (it contains `${`,
// `$$`, `\\` or `\/`).
bool changed_by_env_expansion(std::string_view text);

// Emits one document (no leading `---`), ending with a single newline. A splice item
// throws std::logic_error (emit_spliced() writes documents that have them).
std::string emit(const boost::json::value& v, const EmitOptions& options = {});

// emit() of a document whose sequences hold splice items (kSpliceKey), without them:
// the text with each splice's text inserted at its point is what emit() writes for the
// document with the splices' items in their places. A splice item where its items would
// not start at their column (options.splice_columns), or an index without a column,
// throws std::logic_error: a splice is only ever text emit() itself would write there.
SplicedText emit_spliced(const boost::json::value& v, const EmitOptions& options);

// The items of `items` as emit() writes them in a block sequence whose `- ` is at column
// `indent` (each line ended), for a splice. Empty for an empty array.
std::string emit_items(const boost::json::array& items, int indent,
                       const EmitOptions& options = {});

// Go's strconv.FormatFloat(v, 'g', -1, 64).
std::string format_go_float(double v);

}  // namespace aop::k8s::yaml
