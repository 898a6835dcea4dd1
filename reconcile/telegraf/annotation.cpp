#include "reconcile/telegraf/annotation.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "reconcile/telegraf/validation.hpp"

namespace aop::telegraf {
namespace {

constexpr std::string_view kShapes =
    "expected a YAML list of `name: url` entries, a map of `name: url`, or either with "
    "`name: {url: ..., interval: ..., metric_version: ..., tags: {...}}`";

enum class ScalarType { null, boolean, integer, floating, string };

std::string_view type_name(ScalarType t) {
  switch (t) {
    case ScalarType::null:
      return "null";
    case ScalarType::boolean:
      return "a boolean";
    case ScalarType::integer:
      return "an integer";
    case ScalarType::floating:
      return "a floating-point number";
    case ScalarType::string:
      return "a string";
  }
  return "a value";
}

bool all_of_chars(std::string_view s, std::string_view allowed) {
  return !s.empty() && s.find_first_not_of(allowed) == std::string_view::npos;
}

// YAML 1.1 resolution of a plain scalar, as go-yaml v2 (sigs.k8s.io/yaml) does it.
ScalarType resolve_plain(std::string_view s) {
  static const std::set<std::string_view> nulls{"", "~", "null", "Null", "NULL"};
  static const std::set<std::string_view> bools{
      "y",    "Y",    "yes",   "Yes",   "YES",   "n",  "N",  "no", "No",  "NO",  "true",
      "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"};
  static const std::set<std::string_view> specials{".inf",  ".Inf",  ".INF",  "+.inf",
                                                   "+.Inf", "+.INF", "-.inf", "-.Inf",
                                                   "-.INF", ".nan",  ".NaN",  ".NAN"};
  if (nulls.count(s) != 0) return ScalarType::null;
  if (bools.count(s) != 0) return ScalarType::boolean;
  if (specials.count(s) != 0) return ScalarType::floating;
  std::string_view body = s;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') &&
      all_of_chars(body.substr(2), "0123456789abcdefABCDEF_")) {
    return ScalarType::integer;
  }
  if (body.size() > 2 && body[0] == '0' && body[1] == 'b' && all_of_chars(body.substr(2), "01_")) {
    return ScalarType::integer;
  }
  if (all_of_chars(body, "0123456789_") && body[0] != '_') return ScalarType::integer;
  // [0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)? or \.[0-9]+...
  std::string_view mantissa = body;
  std::string_view exponent;
  if (auto e = body.find_first_of("eE"); e != std::string_view::npos) {
    mantissa = body.substr(0, e);
    exponent = body.substr(e + 1);
    if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.remove_prefix(1);
    if (!all_of_chars(exponent, "0123456789")) return ScalarType::string;
  }
  const auto dot = mantissa.find('.');
  if (dot == std::string_view::npos) {
    return (!exponent.empty() && all_of_chars(mantissa, "0123456789_")) ? ScalarType::floating
                                                                        : ScalarType::string;
  }
  const std::string_view whole = mantissa.substr(0, dot);
  const std::string_view fraction = mantissa.substr(dot + 1);
  const bool whole_ok = whole.empty() || all_of_chars(whole, "0123456789_");
  const bool fraction_ok = fraction.empty() || all_of_chars(fraction, "0123456789_");
  if (whole_ok && fraction_ok && !(whole.empty() && fraction.empty())) return ScalarType::floating;
  return ScalarType::string;
}

ScalarType scalar_type(const YAML::Node& n) {
  if (n.IsNull()) return ScalarType::null;
  const std::string& tag = n.Tag();
  if (tag == "!") return ScalarType::string;  // quoted
  if (tag == "?" || tag.empty()) return resolve_plain(n.Scalar());
  constexpr std::string_view prefix = "tag:yaml.org,2002:";
  if (tag.rfind(prefix, 0) == 0) {
    const std::string_view kind = std::string_view(tag).substr(prefix.size());
    if (kind == "null") return ScalarType::null;
    if (kind == "bool") return ScalarType::boolean;
    if (kind == "int") return ScalarType::integer;
    if (kind == "float") return ScalarType::floating;
  }
  return ScalarType::string;
}

std::string_view node_kind(const YAML::Node& n) {
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  if (n.IsNull()) return "nothing (null)";
  return type_name(scalar_type(n));
}

int line_of(const YAML::Node& n) {
  return n.Mark().line + 1;
}

std::string at_line(const YAML::Node& n) {
  const int line = line_of(n);
  return line > 0 ? " (line " + std::to_string(line) + ")" : std::string{};
}

bool has_indenting_tab(std::string_view text) {
  bool at_line_start = true;
  for (char c : text) {
    if (c == '\n') {
      at_line_start = true;
    } else if (at_line_start && c == '\t') {
      return true;
    } else if (c != ' ') {
      at_line_start = false;
    }
  }
  return false;
}

// A line starting a YAML document (`---`) or ending one (`...`).
bool has_document_marker(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::string_view line = text.substr(start, text.find('\n', start) - start);
    if (line.rfind("---", 0) == 0 || line.rfind("...", 0) == 0) return true;
    const auto nl = text.find('\n', start);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return false;
}

// Counts the YAML documents of `text`, stopping at kMaxDocuments, and notes where the
// second one starts. Not YAML::LoadAll: yaml-cpp 0.7 yields endless empty documents for some
// inputs (`,- a`), so LoadAll never returns and fills memory; one annotation would take
// the operator down. The parser is only asked for as many documents as the rules need.
constexpr int kMaxDocuments = 100;

struct DocumentCount : YAML::EventHandler {
  int documents = 0;
  int second_line = 0;  // 1-based

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents == 2) second_line = mark.line + 1;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

DocumentCount count_documents(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentCount count;
  while (count.documents < kMaxDocuments && parser.HandleNextDocument(count)) {
  }
  return count;
}

class AnnotationReader {
 public:
  explicit AnnotationReader(AnnotationParse& out) : out_(out) {}

  void read_root(const YAML::Node& root) {
    if (root.IsSequence()) {
      if (!check_count(root.size())) return;
      std::size_t index = 0;
      for (const YAML::Node& item : root) {
        ++index;
        read_list_item(index, item);
        if (exhausted_) return;
      }
    } else if (root.IsMap()) {
      if (!check_count(root.size())) return;
      for (const auto& pair : root) {
        read_entry(pair.first, pair.second, "map key" + at_line(pair.first));
        if (exhausted_) return;
      }
    } else {
      error(std::string("the value is ") + std::string(node_kind(root)) + ", not a list of " +
            "endpoints; " + std::string(kShapes));
    }
  }

 private:
  bool check_count(std::size_t n) {
    if (n == 0) {
      error("the annotation lists no endpoints; remove the annotation to stop scraping");
      return false;
    }
    if (n > kMaxEndpoints) {
      error("the annotation lists " + std::to_string(n) + " endpoints; at most " +
            std::to_string(kMaxEndpoints) + " are allowed");
      return false;
    }
    return true;
  }

  void read_list_item(std::size_t index, const YAML::Node& item) {
    const std::string where = "list item " + std::to_string(index) + at_line(item);
    if (!item.IsMap()) {
      error(where + ": expected a single-key map `name: url`, found " +
            std::string(node_kind(item)));
      return;
    }
    if (item.size() != 1) {
      error(where + ": has " + std::to_string(item.size()) +
            " keys; each list item is one `name: url` pair (put options in a map: "
            "`name: {url: ..., interval: ...}`)");
      return;
    }
    const auto pair = *item.begin();
    read_entry(pair.first, pair.second, where);
  }

  // Counts bytes read from scalars: YAML aliases can repeat a large node many times,
  // and the 64 KiB limit must hold for what the annotation expands to.
  bool charge(std::string_view text) {
    expanded_ += text.size() + 1;
    if (expanded_ > kMaxAnnotationBytes && !exhausted_) {
      exhausted_ = true;
      error("the annotation expands (through YAML aliases) to more than " +
            std::to_string(kMaxAnnotationBytes) + " bytes");
    }
    return !exhausted_;
  }

  void read_entry(const YAML::Node& key, const YAML::Node& value, const std::string& where) {
    if (!key.IsScalar()) {
      error(where + ": the endpoint name must be a string, found " + std::string(node_kind(key)));
      return;
    }
    const std::string& name = key.Scalar();
    if (!charge(name)) return;
    const std::string who = "endpoint " + describe(name) + at_line(key);
    if (auto c = check_endpoint_name(name)) {
      error(who + ": " + *c);
      return;
    }
    if (auto [it, inserted] = first_line_.emplace(name, line_of(key)); !inserted) {
      error(who + ": the name is already used on line " + std::to_string(it->second) +
            "; endpoint names must be unique within the annotation");
      return;
    }
    Endpoint ep;
    ep.name = name;
    bool ok = true;
    if (value.IsNull()) {
      error(who + ": has no URL; write `" + name +
            ": http://host:port/metrics` (a URL on the next line must be indented further "
            "than the name)");
      return;
    }
    if (value.IsScalar()) {
      ok = read_url(who, value, ep.url);
    } else if (value.IsMap()) {
      ok = read_options(who, value, ep);
    } else {
      error(who +
            ": the value must be a URL or a map of options (url, interval, "
            "metric_version, tags), not " +
            std::string(node_kind(value)));
      return;
    }
    if (ok) out_.endpoints.push_back(std::move(ep));
  }

  bool read_string(const std::string& who, std::string_view field, const YAML::Node& n,
                   std::string& out) {
    if (!n.IsScalar() || scalar_type(n) != ScalarType::string) {
      std::string msg =
          who + ": " + std::string(field) + " must be a string, found " + std::string(node_kind(n));
      if (n.IsScalar()) msg += " (" + describe(n.Scalar()) + "; quote it to make it a string)";
      error(msg);
      return false;
    }
    out = n.Scalar();
    return charge(out);
  }

  bool read_url(const std::string& who, const YAML::Node& n, std::string& out) {
    if (!read_string(who, "the URL", n, out)) return false;
    if (auto c = check_http_url(out)) {
      error(who + ": url " + describe(out) + ": " + *c);
      return false;
    }
    return true;
  }

  bool read_options(const std::string& who, const YAML::Node& map, Endpoint& ep) {
    bool ok = true;
    bool have_url = false;
    std::set<std::string> seen;
    for (const auto& pair : map) {
      if (!pair.first.IsScalar()) {
        error(who + ": option names must be strings");
        ok = false;
        continue;
      }
      const std::string& option = pair.first.Scalar();
      if (!seen.insert(option).second) {
        error(who + ": option " + describe(option) + " is given twice");
        ok = false;
        continue;
      }
      const YAML::Node& v = pair.second;
      if (option == "url") {
        have_url = true;
        ok = read_url(who, v, ep.url) && ok;
      } else if (option == "interval") {
        std::string text;
        if (!read_string(who, "interval", v, text)) {
          ok = false;
        } else if (auto c = check_positive_duration(text)) {
          error(who + ": interval: " + *c);
          ok = false;
        } else {
          ep.interval = std::move(text);
        }
      } else if (option == "metric_version") {
        const bool integer = v.IsScalar() && scalar_type(v) == ScalarType::integer;
        if (integer && (v.Scalar() == "1" || v.Scalar() == "2")) {
          ep.metric_version = v.Scalar() == "1" ? 1 : 2;
        } else {
          error(who + ": metric_version must be the number 1 or 2, found " +
                (v.IsScalar() ? describe(v.Scalar()) + " (" + std::string(node_kind(v)) + ")"
                              : std::string(node_kind(v))));
          ok = false;
        }
      } else if (option == "tags") {
        ok = read_tags(who, v, ep) && ok;
      } else {
        error(who + ": unknown option " + describe(option) +
              "; the options are url, interval, metric_version and tags");
        ok = false;
      }
      if (exhausted_) return false;
    }
    if (!have_url) {
      error(who + ": the option map has no url");
      ok = false;
    }
    return ok;
  }

  bool read_tags(const std::string& who, const YAML::Node& tags, Endpoint& ep) {
    if (tags.IsNull()) return true;
    if (!tags.IsMap()) {
      error(who + ": tags must be a map of strings, found " + std::string(node_kind(tags)));
      return false;
    }
    bool ok = true;
    std::map<std::string, std::string> sorted;
    for (const auto& pair : tags) {
      std::string key;
      std::string value;
      // Keys are taken as written, like endpoint names: `y: x` is the tag "y", not the
      // YAML 1.1 boolean a value `y` would be.
      if (!pair.first.IsScalar()) {
        error(who + ": a tag key must be a string, found " + std::string(node_kind(pair.first)));
        ok = false;
        continue;
      }
      key = pair.first.Scalar();
      if (!charge(key)) return false;
      const std::string tag = "tag " + describe(key);
      if (auto c = check_tag_text(key)) {
        error({who, ": ", tag, ": the key ", *c});
        ok = false;
        continue;
      }
      if (key == kAppTag) {
        error({who, ": ", tag,
               " is set by the operator (the application's bucket) and cannot be overridden"});
        ok = false;
        continue;
      }
      if (!read_string(who, tag, pair.second, value)) {
        ok = false;
        continue;
      }
      if (auto c = check_tag_text(value)) {
        error({who, ": ", tag, ": the value ", *c});
        ok = false;
        continue;
      }
      if (!sorted.emplace(key, std::move(value)).second) {
        error({who, ": ", tag, " is given twice"});
        ok = false;
      }
      if (exhausted_) return false;
    }
    ep.tags.assign(sorted.begin(), sorted.end());
    return ok;
  }

  void error(std::string message) { out_.errors.push_back(std::move(message)); }
  void error(std::initializer_list<std::string_view> parts) {
    std::string message;
    for (std::string_view p : parts) message += p;
    error(std::move(message));
  }

  AnnotationParse& out_;
  std::map<std::string, int> first_line_;
  std::size_t expanded_ = 0;
  bool exhausted_ = false;
};

}  // namespace

std::string AnnotationParse::summary(std::size_t limit) const {
  std::string out;
  const std::size_t shown = std::min(limit, errors.size());
  for (std::size_t i = 0; i < shown; ++i) {
    if (i != 0) out += "; ";
    out += errors[i];
  }
  if (errors.size() > shown) {
    out += " (and " + std::to_string(errors.size() - shown) + " more)";
  }
  return out;
}

AnnotationParse parse_annotation(std::string_view value) {
  AnnotationParse out;
  if (value.size() > kMaxAnnotationBytes) {
    out.errors.push_back("the annotation value is " + std::to_string(value.size()) +
                         " bytes; at most " + std::to_string(kMaxAnnotationBytes) + " are allowed");
    return out;
  }
  if (!is_valid_utf8(value)) {
    out.errors.push_back("the annotation value is not valid UTF-8");
    return out;
  }
  const std::string empty_hint =
      "the annotation value is empty; it must list endpoints as YAML (`- name: url`). "
      "In a manifest written with a block scalar (`|`), indent the list further than the "
      "annotation key";
  if (value.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    out.errors.push_back(empty_hint);
    return out;
  }
  const std::string text(value);
  DocumentCount documents;
  YAML::Node doc;
  try {
    documents = count_documents(text);
    if (documents.documents == 1) doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::string msg = "the annotation value is not valid YAML: line " +
                      std::to_string(e.mark.line + 1) + ", column " +
                      std::to_string(e.mark.column + 1) + ": " + e.msg;
    if (has_indenting_tab(value))
      msg += " (a line is indented with a tab; YAML allows only spaces)";
    out.errors.push_back(std::move(msg));
    return out;
  }
  if (documents.documents == 0 || (documents.documents == 1 && doc.IsNull())) {
    out.errors.push_back(empty_hint);
    return out;
  }
  if (documents.documents > 1) {
    if (has_document_marker(value)) {
      const int n = documents.documents;
      out.errors.push_back(
          "the annotation value holds " +
          (n < kMaxDocuments ? std::to_string(n) : "at least " + std::to_string(n)) +
          " YAML documents (separated by `---`); put every endpoint in one "
          "list");
    } else {
      // yaml-cpp starts a new document where text no longer fits the first value.
      out.errors.push_back("the annotation value is not valid YAML: line " +
                           std::to_string(documents.second_line) +
                           " does not belong to the list or map above it; check the "
                           "indentation (a URL on its own line must be indented further than "
                           "its name)");
    }
    return out;
  }
  try {
    AnnotationReader reader(out);
    reader.read_root(doc);
  } catch (const YAML::Exception& e) {
    out.errors.push_back(std::string("the annotation value could not be read: ") + e.msg);
  }
  if (!out.errors.empty()) out.endpoints.clear();
  return out;
}

}  // namespace aop::telegraf
