// The checks of one configuration; see checker.hpp. Validation rules are those Alloy
// applies when it loads a component (relabel rules as Prometheus validates them, HTTP
// client settings, scrape and WAL durations, pipeline stages), so a violation here is a
// configuration Alloy would refuse.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include "tests/alloy/checker/checker.hpp"
#include "tests/alloy/checker/schema.hpp"

namespace aop::alloy::check {
namespace {

using schema::Kind;

constexpr double kSecondNs = 1e9;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool label_name(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

// Prometheus's rule for a `replace` target containing `$` and for `labelmap` replacements.
bool relabel_target(const std::string& s) {
  static const std::regex re(R"(^(?:(?:[a-zA-Z_]|\$(?:\{\w+\}|\w+))+\w*)+$)");
  return std::regex_match(s, re);
}

bool is_string_expr(const Value& v) {
  switch (v.kind) {
    case Value::Kind::string:
      return true;
    case Value::Kind::reference:
      return v.text == "constants.hostname";
    case Value::Kind::call:
      if (v.text == "sys.env") return true;
      if (v.text == "coalesce") return std::all_of(v.items.begin(), v.items.end(), is_string_expr);
      return false;
    case Value::Kind::concat:
      return std::all_of(v.items.begin(), v.items.end(), is_string_expr);
    default:
      return false;
  }
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::string:
      return "a string";
    case Kind::number:
      return "a number";
    case Kind::integer:
      return "an integer";
    case Kind::boolean:
      return "a bool";
    case Kind::duration:
      return "a duration string";
    case Kind::bytesize:
      return "a size string such as \"1048576B\"";
    case Kind::strings:
      return "a list of strings";
    case Kind::numbers:
      return "a list of numbers";
    case Kind::string_map:
      return "an object of strings";
    case Kind::list_map:
      return "an object of lists of strings";
    case Kind::objects:
      return "a list of objects of strings";
    case Kind::targets:
      return "a target list";
    case Kind::metric_receivers:
      return "a list of metric receivers";
    case Kind::log_receivers:
      return "a list of log receivers";
  }
  return "?";
}

struct Reference {
  std::string component;
  std::string label;
  std::string export_name;
};

// `a.b.<label>.<export>` → component `a.b`; nullopt for fewer than three parts.
std::optional<Reference> split_reference(const std::string& path) {
  const auto last = path.rfind('.');
  if (last == std::string::npos) return std::nullopt;
  const auto mid = path.rfind('.', last - 1);
  if (mid == std::string::npos || mid == 0) return std::nullopt;
  return Reference{path.substr(0, mid), path.substr(mid + 1, last - mid - 1),
                   path.substr(last + 1)};
}

class ConfigChecker {
 public:
  explicit ConfigChecker(std::vector<Violation>& out) : out_(out) {}

  void run(const std::vector<ParsedFile>& files) {
    declare(files);
    for (const auto& f : files) {
      file_ = &f.key;
      for (const auto& b : f.blocks) {
        if (b.name == "logging") {
          body(b, "logging", "logging");
          continue;
        }
        const auto* comp = schema::component(b.name);
        if (comp == nullptr || !b.label) continue;  // reported by declare()
        owner_ = b.name + "." + *b.label;
        body(b, comp->body, b.name + " \"" + *b.label + "\"");
      }
    }
    cycles();
  }

 private:
  struct Decl {
    std::string file;
    int line = 0;
    std::set<std::string> deps;
  };

  void report(int line, std::string message) { out_.push_back({*file_, line, std::move(message)}); }

  // Top level: known components with labels, unique (name, label), one logging block.
  void declare(const std::vector<ParsedFile>& files) {
    std::optional<std::pair<std::string, int>> logging;
    for (const auto& f : files) {
      file_ = &f.key;
      for (const auto& b : f.blocks) {
        if (b.name == "logging") {
          if (b.label) report(b.line, "the logging block takes no label");
          if (logging) {
            report(b.line, "logging block appears more than once in the configuration (first at " +
                               logging->first + ":" + std::to_string(logging->second) + ")");
          } else {
            logging = {f.key, b.line};
          }
          continue;
        }
        if (schema::component(b.name) == nullptr) {
          report(b.line,
                 "unknown top-level block " + b.name + " (not a component the operator emits)");
          continue;
        }
        if (!b.label) {
          report(b.line, "component " + b.name + " needs a label");
          continue;
        }
        const std::string id = b.name + "." + *b.label;
        if (const auto it = decls_.find(id); it != decls_.end()) {
          report(b.line, "duplicate component " + b.name + " \"" + *b.label +
                             "\" (first declared at " + it->second.file + ":" +
                             std::to_string(it->second.line) + ")");
          continue;
        }
        decls_[id] = Decl{f.key, b.line, {}};
      }
    }
  }

  // ---- Schema ---------------------------------------------------------------------------

  void body(const Block& b, const std::string& id, const std::string& where) {
    const schema::Body* s = schema::body(id);
    if (s == nullptr) return;
    if (b.attribute_after_block) report(b.line, where + ": attributes must come before blocks");
    std::set<std::string> seen;
    std::string previous;
    std::size_t last = 0;
    for (const auto& a : b.attributes) {
      const schema::Attr* spec = s->attr(a.name);
      if (spec == nullptr) {
        report(a.line, where + ": unknown attribute " + a.name);
        continue;
      }
      if (!seen.insert(a.name).second) {
        report(a.line, where + ": attribute " + a.name + " set twice");
        continue;
      }
      const std::size_t index = s->attr_index(a.name);
      if (s->bytewise ? (!previous.empty() && a.name < previous) : index < last) {
        std::string m = where;
        m.append(": attribute ").append(a.name).append(" is out of order (after ");
        report(a.line, m.append(previous).append(")"));
      }
      previous = a.name;
      last = std::max(last, index);
      value(a.value, *spec, where + "." + a.name);
    }
    for (const auto& spec : s->attrs) {
      if (spec.required && seen.count(spec.name) == 0) {
        report(b.line, where + ": missing required attribute " + spec.name);
      }
    }
    std::map<std::string, int> count;
    previous.clear();
    last = 0;
    for (const auto& child : b.blocks) {
      const schema::Nested* n = s->block(child.name);
      if (n == nullptr) {
        report(child.line, where + ": unknown block " + child.name);
        continue;
      }
      if (++count[child.name] == 2 && !n->repeated) {
        report(child.line, where + ": block " + child.name + " appears more than once");
      }
      if (n->labelled != child.label.has_value()) {
        report(child.line, where + ": block " + child.name +
                               (n->labelled ? " needs a label" : " takes no label"));
      }
      const std::size_t index = s->block_index(child.name);
      if (!s->free_block_order &&
          (s->bytewise ? (!previous.empty() && child.name < previous) : index < last)) {
        std::string m = where;
        m.append(": block ").append(child.name).append(" is out of order (after ");
        report(child.line, m.append(previous).append(")"));
      }
      previous = child.name;
      last = std::max(last, index);
      body(child, n->body, where + " > " + child.name);
    }
    rules(b, id, where);
  }

  // References and calls anywhere in a value.
  void walk(const Value& v, const std::string& where) {
    switch (v.kind) {
      case Value::Kind::null:
        report(v.line, where + ": null is never written (absent values are omitted)");
        return;
      case Value::Kind::reference:
        reference(v, where);
        return;
      case Value::Kind::call:
        if (v.text != "sys.env" && v.text != "coalesce" && v.text != "array.concat") {
          report(v.line, where + ": function " + v.text +
                             " is not one the operator uses (sys.env, coalesce, array.concat)");
        }
        if (v.text == "sys.env" &&
            (v.items.size() != 1 || v.items[0].kind != Value::Kind::string)) {
          report(v.line, where + ": sys.env takes one string literal");
        }
        break;
      default:
        break;
    }
    for (const auto& i : v.items) walk(i, where);
  }

  void reference(const Value& v, const std::string& where) {
    if (v.text == "constants.hostname") return;
    const auto r = split_reference(v.text);
    if (!r) {
      report(v.line, where + ": " + v.text + " is not a component export");
      return;
    }
    const auto* comp = schema::component(r->component);
    const std::string id = r->component + "." + r->label;
    if (comp == nullptr || decls_.count(id) == 0) {
      report(v.line, where + ": reference to undeclared component " + r->component + " \"" +
                         r->label + "\"");
      return;
    }
    if (std::find(comp->exports.begin(), comp->exports.end(), r->export_name) ==
        comp->exports.end()) {
      report(v.line, where + ": " + r->component + " has no export " + r->export_name);
      return;
    }
    if (!owner_.empty()) decls_[owner_].deps.insert(id);
  }

  bool targets(const Value& v) {
    if (v.kind == Value::Kind::reference) {
      const auto r = split_reference(v.text);
      return r && (r->export_name == "targets" || r->export_name == "output");
    }
    if (v.kind == Value::Kind::list) {
      return std::all_of(v.items.begin(), v.items.end(), [](const Value& o) {
        return o.kind == Value::Kind::object &&
               std::all_of(o.items.begin(), o.items.end(), is_string_expr);
      });
    }
    if (v.kind == Value::Kind::call && v.text == "array.concat" && !v.items.empty()) {
      return std::all_of(v.items.begin(), v.items.end(),
                         [&](const Value& i) { return targets(i); });
    }
    return false;
  }

  void receivers(const Value& v, schema::Receiver want, const std::string& where) {
    if (v.kind != Value::Kind::list) {
      report(v.line, where + ": expected a list of receivers");
      return;
    }
    for (const auto& i : v.items) {
      const auto r = i.kind == Value::Kind::reference ? split_reference(i.text) : std::nullopt;
      const auto* comp = r ? schema::component(r->component) : nullptr;
      if (!r || r->export_name != "receiver" || comp == nullptr) {
        report(i.line, where + ": expected a receiver reference");
        continue;
      }
      if (comp->receiver != want) {
        report(i.line, where + ": " + i.text + " is a " +
                           (comp->receiver == schema::Receiver::logs ? "log" : "metric") +
                           " receiver, not a " +
                           (want == schema::Receiver::logs ? "log" : "metric") + " receiver");
      }
    }
  }

  void value(const Value& v, const schema::Attr& spec, const std::string& where) {
    walk(v, where);
    bool ok = true;
    switch (spec.kind) {
      case Kind::string:
        ok = is_string_expr(v);
        if (ok && !spec.one_of.empty()) {
          if (v.kind != Value::Kind::string ||
              std::find(spec.one_of.begin(), spec.one_of.end(), v.text) == spec.one_of.end()) {
            std::string allowed;
            for (const auto& o : spec.one_of) allowed += (allowed.empty() ? "" : ", ") + o;
            report(v.line, where + ": \"" + v.text + "\" is not one of " + allowed);
          }
        }
        break;
      case Kind::number:
        ok = v.kind == Value::Kind::number;
        break;
      case Kind::integer:
        ok = v.kind == Value::Kind::number && std::trunc(v.number) == v.number;
        break;
      case Kind::boolean:
        ok = v.kind == Value::Kind::boolean;
        break;
      case Kind::duration:
        ok = v.kind == Value::Kind::string;
        if (ok && !parse_go_duration(v.text)) {
          report(v.line, where + ": \"" + v.text + "\" is not a Go duration");
        }
        break;
      case Kind::bytesize: {
        static const std::regex re(R"(^[0-9]+(B|KB|MB|GB|TB|PB|KiB|MiB|GiB|TiB|PiB)$)");
        ok = v.kind == Value::Kind::string && std::regex_match(v.text, re);
        break;
      }
      case Kind::strings:
        ok = v.kind == Value::Kind::list &&
             std::all_of(v.items.begin(), v.items.end(), is_string_expr);
        break;
      case Kind::numbers:
        ok = v.kind == Value::Kind::list &&
             std::all_of(v.items.begin(), v.items.end(),
                         [](const Value& i) { return i.kind == Value::Kind::number; });
        break;
      case Kind::string_map:
        ok = v.kind == Value::Kind::object &&
             std::all_of(v.items.begin(), v.items.end(), is_string_expr);
        break;
      case Kind::list_map:
        ok = v.kind == Value::Kind::object &&
             std::all_of(v.items.begin(), v.items.end(), [](const Value& i) {
               return i.kind == Value::Kind::list &&
                      std::all_of(i.items.begin(), i.items.end(), is_string_expr);
             });
        break;
      case Kind::objects:
        ok = v.kind == Value::Kind::list &&
             std::all_of(v.items.begin(), v.items.end(), [](const Value& o) {
               return o.kind == Value::Kind::object &&
                      std::all_of(o.items.begin(), o.items.end(), is_string_expr);
             });
        break;
      case Kind::targets:
        ok = targets(v);
        break;
      case Kind::metric_receivers:
        receivers(v, schema::Receiver::metrics, where);
        return;
      case Kind::log_receivers:
        receivers(v, schema::Receiver::logs, where);
        return;
    }
    if (!ok) report(v.line, where + ": expected " + kind_name(spec.kind));
  }

  // ---- Validation rules -----------------------------------------------------------------

  static const Value* attr(const Block& b, std::string_view n) {
    const Attribute* a = b.attribute(n);
    return a ? &a->value : nullptr;
  }
  static std::optional<std::string> str(const Block& b, std::string_view n) {
    const Value* v = attr(b, n);
    if (v == nullptr || v->kind != Value::Kind::string) return std::nullopt;
    return v->text;
  }
  static std::optional<double> num(const Block& b, std::string_view n) {
    const Value* v = attr(b, n);
    if (v == nullptr || v->kind != Value::Kind::number) return std::nullopt;
    return v->number;
  }
  static std::optional<bool> boolean(const Block& b, std::string_view n) {
    const Value* v = attr(b, n);
    if (v == nullptr || v->kind != Value::Kind::boolean) return std::nullopt;
    return v->boolean;
  }
  // Nanoseconds of a duration attribute, or `fallback` when absent or malformed.
  static double duration(const Block& b, std::string_view n, double fallback) {
    const auto s = str(b, n);
    if (!s) return fallback;
    return parse_go_duration(*s).value_or(fallback);
  }
  static bool has(const Block& b, std::string_view n) {
    return b.attribute(n) != nullptr || !b.children(n).empty();
  }

  void rules(const Block& b, const std::string& id, const std::string& where) {
    if (id == "rule") return relabel_rule(b, where);
    if (id == "tls_config") return tls(b, where);
    if (id == "basic_auth" && b.attribute("password") && b.attribute("password_file")) {
      report(b.line, where + ": at most one of password and password_file");
    }
    if (id == "authorization") {
      if (b.attribute("credentials") && b.attribute("credentials_file")) {
        report(b.line, where + ": at most one of credentials and credentials_file");
      }
      if (lower(str(b, "type").value_or("")) == "basic") {
        report(b.line, where + ": authorization type \"basic\" is not allowed (use basic_auth)");
      }
    }
    if (id == "oauth2") {
      if (str(b, "client_id").value_or("").empty()) {
        report(b.line, where + ": client_id is required");
      }
      if (str(b, "token_url").value_or("").empty()) {
        report(b.line, where + ": token_url is required");
      }
      const int secrets =
          (b.attribute("client_secret") ? 1 : 0) + (b.attribute("client_secret_file") ? 1 : 0);
      if (secrets != 1) {
        report(b.line, where + ": exactly one of client_secret and client_secret_file is required");
      }
    }
    if (id == "sigv4" &&
        (b.attribute("access_key") != nullptr) != (b.attribute("secret_key") != nullptr)) {
      report(b.line, where + ": access_key and secret_key must be set together");
    }
    if (id == "prometheus.scrape" || id == "discovery.kubernetes" ||
        id == "prometheus.remote_write/endpoint" || id == "loki.write/endpoint") {
      client(b, where);
    }
    if (id == "prometheus.scrape" && duration(b, "scrape_timeout", 10 * kSecondNs) >
                                         duration(b, "scrape_interval", 60 * kSecondNs)) {
      report(b.line, where + ": scrape_timeout is greater than scrape_interval");
    }
    if (id == "prometheus.remote_write/wal") {
      if (duration(b, "min_keepalive_time", 300 * kSecondNs) >=
          duration(b, "max_keepalive_time", 8 * 3600 * kSecondNs)) {
        report(b.line, where + ": min_keepalive_time must be less than max_keepalive_time");
      }
      if (duration(b, "truncate_frequency", 7200 * kSecondNs) <= 0) {
        report(b.line, where + ": truncate_frequency must be greater than 0");
      }
    }
    if (id.rfind("stage.", 0) == 0) stage(b, id, where);
    if (id.rfind("metric.", 0) == 0) metric(b, id, where);
  }

  void client(const Block& b, const std::string& where) {
    int auth = 0;
    for (const char* n :
         {"basic_auth", "authorization", "oauth2", "sigv4", "bearer_token", "bearer_token_file"}) {
      auth += has(b, n) ? 1 : 0;
    }
    if (auth > 1) {
      report(b.line, where +
                         ": at most one of basic_auth, authorization, oauth2, sigv4, "
                         "bearer_token and bearer_token_file");
    }
  }

  void tls(const Block& b, const std::string& where) {
    for (const char* pair : {"ca", "cert", "key"}) {
      if (b.attribute(std::string(pair) + "_pem") && b.attribute(std::string(pair) + "_file")) {
        report(b.line, where + ": at most one of " + pair + "_pem and " + pair + "_file");
      }
    }
    const bool cert = b.attribute("cert_pem") || b.attribute("cert_file");
    const bool key = b.attribute("key_pem") || b.attribute("key_file");
    if (cert != key) report(b.line, where + ": a client certificate needs both cert and key");
  }

  void relabel_rule(const Block& b, const std::string& where) {
    static const std::set<std::string> kActions = {
        "replace",   "keep",      "drop",      "hashmod",   "labelmap", "labeldrop",
        "labelkeep", "lowercase", "uppercase", "keepequal", "dropequal"};
    const std::string action = str(b, "action").value_or("replace");
    const std::string target = str(b, "target_label").value_or("");
    const std::string replacement = str(b, "replacement").value_or("$1");
    const bool default_separator = str(b, "separator").value_or(";") == ";";
    const bool default_regex = str(b, "regex").value_or("(.*)") == "(.*)";
    const double modulus = num(b, "modulus").value_or(0);
    const auto bad = [&](const std::string& m) { report(b.line, where + ": " + m); };
    if (kActions.count(action) == 0) {
      bad("unknown relabel action \"" + action + "\"");
      return;
    }
    const bool needs_target = action == "replace" || action == "hashmod" || action == "lowercase" ||
                              action == "uppercase" || action == "keepequal" ||
                              action == "dropequal";
    const bool case_or_equal = action == "lowercase" || action == "uppercase" ||
                               action == "keepequal" || action == "dropequal";
    if (needs_target && target.empty()) bad("relabel action " + action + " requires target_label");
    if (action == "replace" && !target.empty() &&
        (target.find('$') == std::string::npos ? !label_name(target) : !relabel_target(target))) {
      bad("\"" + target + "\" is invalid target_label for replace action");
    }
    if ((case_or_equal || action == "hashmod") && !target.empty() && !label_name(target)) {
      bad("\"" + target + "\" is invalid target_label for " + action + " action");
    }
    if (case_or_equal && replacement != "$1") bad(action + " action requires no replacement");
    if (action == "labelmap" && !relabel_target(replacement)) {
      bad("\"" + replacement + "\" is invalid replacement for labelmap action");
    }
    if (action == "hashmod" && modulus == 0) {
      bad("relabel action hashmod requires a non-zero modulus");
    }
    if ((action == "labeldrop" || action == "labelkeep") &&
        (b.attribute("source_labels") || !target.empty() || modulus != 0 || !default_separator ||
         replacement != "$1")) {
      bad(action + " action requires only regex, and no other fields");
    }
    if ((action == "keepequal" || action == "dropequal") &&
        (!default_regex || modulus != 0 || !default_separator || replacement != "$1")) {
      bad(action + " action requires only source_labels and target_label, and no other fields");
    }
  }

  void stage(const Block& b, const std::string& id, const std::string& where) {
    const auto bad = [&](const std::string& m) { report(b.line, where + ": " + m); };
    if (id == "stage.limit") {
      if (num(b, "rate").value_or(0) <= 0) bad("rate must be greater than 0");
      if (num(b, "burst").value_or(0) <= 0) bad("burst must be greater than 0");
      if (b.attribute("by_label_name") && !boolean(b, "drop").value_or(false)) {
        bad("by_label_name requires drop = true");
      }
    } else if (id == "stage.tenant") {
      int set = 0;
      for (const char* n : {"label", "source", "value"}) {
        set += str(b, n).value_or("").empty() ? 0 : 1;
      }
      if (set != 1) bad("exactly one of label, source and value must be set");
    } else if (id == "stage.match") {
      const std::string action = str(b, "action").value_or("keep");
      if (action != "keep" && action != "drop") bad("action must be keep or drop");
      if (action == "keep" && b.blocks.empty()) bad("a keep match needs at least one nested stage");
      if (action == "drop" && !b.blocks.empty()) bad("a drop match takes no nested stages");
    } else if (id == "stage.drop") {
      if (!b.attribute("source") && !b.attribute("expression") && !b.attribute("older_than") &&
          !b.attribute("longer_than")) {
        bad("at least one of source, expression, older_than and longer_than is required");
      }
      if (b.attribute("value") && b.attribute("expression")) {
        bad("value and expression are exclusive");
      }
      if (b.attribute("value") && !b.attribute("source")) bad("value requires source");
    } else if (id == "stage.timestamp") {
      if (const auto a = str(b, "action_on_failure"); a && *a != "fudge" && *a != "skip") {
        bad("action_on_failure must be fudge or skip");
      }
    } else if (id == "stage.labels" || id == "stage.static_labels") {
      if (const Value* v = attr(b, "values"); v && v->kind == Value::Kind::object) {
        for (const auto& k : v->keys) {
          if (!label_name(k)) {
            std::string m = where;
            report(v->line, m.append(": \"").append(k).append("\" is not a valid label name"));
          }
        }
      }
    } else if (id == "stage.multiline") {
      if (b.attribute("max_wait_time") && duration(b, "max_wait_time", 0) <= 0) {
        bad("max_wait_time must be greater than 0");
      }
    } else if (id == "stage.cri") {
      if (b.attribute("max_partial_lines") && num(b, "max_partial_lines").value_or(0) <= 0) {
        bad("max_partial_lines must be greater than 0");
      }
    } else if (id == "stage.json") {
      if (!b.attribute("expressions")) bad("expressions is required");
      if (const auto s = str(b, "source"); s && s->empty()) bad("source must not be empty");
    }
  }

  void metric(const Block& b, const std::string& id, const std::string& where) {
    const auto bad = [&](const std::string& m) { report(b.line, where + ": " + m); };
    const std::string action = str(b, "action").value_or("");
    if (id == "metric.counter") {
      if (action != "inc" && action != "add") bad("counter action must be inc or add");
      const bool match_all = boolean(b, "match_all").value_or(false);
      if (match_all && b.attribute("value")) bad("match_all and value are exclusive");
      if (boolean(b, "count_entry_bytes").value_or(false) && (!match_all || action != "add")) {
        bad("count_entry_bytes requires match_all = true and action = \"add\"");
      }
    }
    if (id == "metric.gauge" && action != "set" && action != "inc" && action != "dec" &&
        action != "add" && action != "sub") {
      bad("gauge action must be set, inc, dec, add or sub");
    }
    if (b.attribute("max_idle_duration") && duration(b, "max_idle_duration", 0) < kSecondNs) {
      bad("max_idle_duration must be at least 1s");
    }
  }

  // ---- Graph ----------------------------------------------------------------------------

  void cycles() {
    std::map<std::string, int> state;  // 1 on the stack, 2 done
    std::vector<std::string> stack;
    std::function<void(const std::string&)> visit = [&](const std::string& id) {
      state[id] = 1;
      stack.push_back(id);
      for (const auto& d : decls_[id].deps) {
        if (state[d] == 1) {
          std::string path;
          for (auto it = std::find(stack.begin(), stack.end(), d); it != stack.end(); ++it) {
            path += *it + " -> ";
          }
          const auto& decl = decls_[id];
          out_.push_back({decl.file, decl.line, "reference cycle: " + path.append(d)});
        } else if (state[d] == 0) {
          visit(d);
        }
      }
      stack.pop_back();
      state[id] = 2;
    };
    for (const auto& [id, decl] : decls_) {
      if (state[id] == 0) visit(id);
    }
  }

  std::vector<Violation>& out_;
  std::map<std::string, Decl> decls_;
  const std::string* file_ = nullptr;
  std::string owner_;
};

// The layout of the file, compared line by line with the canonical text.
void layout(const SourceFile& f, const ParsedFile& parsed, std::string_view ns,
            std::string_view root, std::vector<Violation>& out) {
  const std::string want = canonical_text(parsed.blocks, ns, root);
  if (want == f.text) return;
  std::size_t a = 0;
  std::size_t b = 0;
  for (int line = 1;; ++line) {
    const auto ea = want.find('\n', a);
    const auto eb = f.text.find('\n', b);
    const std::string wl = want.substr(a, ea == std::string::npos ? std::string::npos : ea - a);
    const std::string gl = f.text.substr(b, eb == std::string::npos ? std::string::npos : eb - b);
    if (wl != gl || (ea == std::string::npos) != (eb == std::string::npos)) {
      // Control characters shown as escapes: a stray `\r` or tab must be visible.
      const auto cut = [](const std::string& s) {
        std::string o;
        for (const char c : s.substr(0, 120)) {
          if (c == '\r') {
            o += "\\r";
          } else if (c == '\t') {
            o += "\\t";
          } else {
            o += c;
          }
        }
        return s.size() > 120 ? o + "..." : o;
      };
      out.push_back({f.key, line,
                     "layout differs from the generated format: expected `" + cut(wl) +
                         "`, found `" + cut(gl) + "`" +
                         (ea == std::string::npos || eb == std::string::npos
                              ? " (the file must end with exactly one newline)"
                              : "")});
      return;
    }
    a = ea + 1;
    b = eb + 1;
  }
}

}  // namespace

std::string to_string(const Violation& v) {
  return v.file + ":" + std::to_string(v.line) + ": " + v.message;
}

std::string to_string(const std::vector<Violation>& vs) {
  std::string out;
  for (const auto& v : vs) out += to_string(v) + "\n";
  return out;
}

std::optional<double> parse_go_duration(std::string_view s) {
  double sign = 1;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    sign = s[0] == '-' ? -1 : 1;
    s.remove_prefix(1);
  }
  if (s == "0") return 0.0;
  if (s.empty()) return std::nullopt;
  static const std::map<std::string, double, std::less<>> kUnits = {
      {"ns", 1},   {"us", 1e3}, {"\xC2\xB5s", 1e3}, {"\xCE\xBCs", 1e3},
      {"ms", 1e6}, {"s", 1e9},  {"m", 60e9},        {"h", 3600e9}};
  double total = 0;
  while (!s.empty()) {
    std::size_t i = 0;
    bool digits = false;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) digits = (++i, true);
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) digits = (++i, true);
    }
    if (!digits) return std::nullopt;
    const double n = std::strtod(std::string(s.substr(0, i)).c_str(), nullptr);
    s.remove_prefix(i);
    std::size_t u = 0;
    while (u < s.size() && s[u] != '.' && !std::isdigit(static_cast<unsigned char>(s[u]))) ++u;
    const auto it = kUnits.find(s.substr(0, u));
    if (u == 0 || it == kUnits.end()) return std::nullopt;
    total += n * it->second;
    s.remove_prefix(u);
  }
  return sign * total;
}

std::vector<Violation> check_config(const std::vector<SourceFile>& files, std::string_view ns,
                                    std::string_view root) {
  std::vector<Violation> out;
  std::vector<ParsedFile> parsed;
  std::set<std::string> keys;
  for (const auto& f : files) {
    if (!keys.insert(f.key).second) out.push_back({f.key, 0, "file key used twice"});
    const std::size_t before = out.size();
    parsed.push_back(parse_file(f, out));
    if (out.size() == before) layout(f, parsed.back(), ns, root, out);
  }
  ConfigChecker(out).run(parsed);
  return out;
}

std::vector<Violation> check_config_secrets(const std::vector<ConfigSecret>& secrets,
                                            std::string_view base,
                                            const std::vector<std::string>& projected_sources,
                                            std::string_view ns, std::string_view root) {
  static const std::regex kKey(R"(^[-._a-zA-Z0-9]+$)");
  constexpr std::size_t kBudget = 786432;
  std::vector<Violation> out;
  std::vector<SourceFile> files;
  std::map<std::string, std::string> owner;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < secrets.size(); ++i) {
    const auto& s = secrets[i];
    names.push_back(s.name);
    const std::string want =
        i == 0 ? std::string(base) : std::string(base) + "-" + std::to_string(i);
    if (s.name != want) {
      out.push_back(
          {s.name, 0,
           "config Secret " + std::to_string(i) + " is named " + s.name + ", expected " + want});
    }
    std::size_t size = 0;
    for (const auto& f : s.data) {
      size += f.key.size() + f.text.size();
      if (f.key.size() < 7 || f.key.substr(f.key.size() - 6) != ".alloy" ||
          !std::regex_match(f.key, kKey) || f.key.size() > 253) {
        out.push_back({f.key, 0,
                       "data key of Secret " + s.name +
                           " must end in .alloy and match [-._a-zA-Z0-9]+ (≤ 253)"});
      }
      if (const auto [it, fresh] = owner.emplace(f.key, s.name); !fresh) {
        out.push_back({f.key, 0, "key in both Secret " + it->second + " and Secret " + s.name});
      }
      files.push_back(f);
    }
    if (size > kBudget) {
      out.push_back(
          {s.name, 0,
           "Secret holds " + std::to_string(size) + " bytes of keys and values, above 786432"});
    }
    if (s.data.empty()) out.push_back({s.name, 0, "config Secret without files"});
  }
  if (projected_sources != names) {
    std::string got;
    for (const auto& p : projected_sources) got += (got.empty() ? "" : ", ") + p;
    out.push_back(
        {std::string(base), 0,
         "projected volume sources [" + got + "] do not list the config Secrets in order"});
  }
  auto more = check_config(files, ns, root);
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

}  // namespace aop::alloy::check
