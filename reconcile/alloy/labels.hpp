// Component labels and file keys of the Alloy configuration: readable, valid identifiers
// that stay stable while other members come and go.
//
// ident("mi", "monitoring_primary", "MetricsInstance/monitoring/primary")
//   == "mi_monitoring_primary_7f26355a"
// The readable part is sanitized to [A-Za-z0-9_] and cut to 100 bytes; the suffix is the
// first 8 hex digits of SHA-256(key), which keeps `a-b` and `a.b` apart.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <boost/json/value.hpp>

namespace aop::alloy {

std::string ident(std::string_view prefix, std::string_view readable, std::string_view key);

// The labels of one configuration. The same (prefix, key) always gets the same label; a
// different key whose label is already taken (same sanitized text and hash prefix) gets
// `_2`, `_3`, ... in the order labels are requested.
class LabelSet {
 public:
  std::string label(std::string_view prefix, std::string_view readable, std::string_view key);

 private:
  std::map<std::pair<std::string, std::string>, std::string> by_key_;
  std::set<std::string> taken_;
};

// Compact JSON with object members sorted bytewise, strings escaped only for `"`, `\` and
// code points below U+0020 (`\u00xx`), numbers written as Alloy writes them. Used as an
// identity of discovery settings and as the text of exporter configs given as objects.
std::string canonical_json(const boost::json::value& v);

// Lowercase hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace aop::alloy
