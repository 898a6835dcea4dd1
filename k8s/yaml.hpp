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

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "net/result.hpp"

namespace aop::k8s::yaml {

// Parses one YAML document. An empty document is JSON null.
Result<boost::json::value> parse(std::string_view text);

// Parses a multi-document stream (`---` separated); empty documents are skipped.
Result<std::vector<boost::json::value>> parse_all(std::string_view text);

enum class NumberStyle {
  // Integers print as integers, doubles with the shortest round-trip form (Kubernetes
  // object manifests).
  exact,
  // Every number is a float64 printed like Go's strconv.FormatFloat(v, 'g', -1, 64):
  // `1e+06`, `1.048576e+06`, `1e-05`, `2.5`, `100000` (the agent configuration).
  go_float64,
};

struct EmitOptions {
  int indent = 4;                            // go-yaml v3 default
  NumberStyle numbers = NumberStyle::exact;  //
};

// Emits one document (no leading `---`), ending with a single newline.
std::string emit(const boost::json::value& v, const EmitOptions& options = {});

// Go's strconv.FormatFloat(v, 'g', -1, 64).
std::string format_go_float(double v);

}  // namespace aop::k8s::yaml
