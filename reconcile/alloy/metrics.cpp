// Translation of the static metrics tree into Alloy components; see metrics.hpp.
//
// Each scrape job is a member: a violation Alloy would reject skips that job only
// (class A), a key Alloy cannot express fails the whole render (class B). Remote writes,
// WAL settings and the logging block belong to the root or an instance, so their
// violations are class B. A job is validated completely before any label is taken, so a
// skipped job never shifts the labels of the others.
#include "reconcile/alloy/metrics.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/alloy/duration.hpp"
#include "reconcile/alloy/labels.hpp"

namespace aop::alloy {

bool translation_failed(const std::vector<TranslationProblem>& problems) {
  return std::any_of(problems.begin(), problems.end(),
                     [](const TranslationProblem& p) { return p.cls == ProblemClass::b; });
}

namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;

constexpr std::string_view kReportSeries =
    "up|scrape_duration_seconds|scrape_samples_scraped|scrape_samples_post_metric_relabeling|"
    "scrape_series_added";
constexpr std::string_view kSkipped = "skipped in the Alloy configuration";
constexpr std::string_view kNotApplied = "the Alloy configuration was not applied";
constexpr std::uint64_t kDefaultInterval = 60000;  // Prometheus: 1m
constexpr std::uint64_t kDefaultTimeout = 10000;   // Prometheus: 10s

// Findings while translating one part of the tree, classified by the caller.
struct Sink {
  std::vector<std::string> rejected;     // Alloy would refuse it: A for a member, B otherwise
  std::vector<std::string> unsupported;  // no Alloy translation: always B
  std::vector<std::string> warnings;     // C
  bool failed_elsewhere = false;         // reported against another object already

  void reject(const std::string& path, const std::string& what) {
    rejected.push_back(path + ": " + what);
  }
  bool clean() const { return rejected.empty() && unsupported.empty() && !failed_elsewhere; }
};

// Who a problem belongs to.
struct Owner {
  std::string kind;
  std::string ns;
  std::string name;
  std::string field;
};

// Reading the static tree. Numbers that reach string fields (possible in additional
// scrape configs) read as the text the static config file held: Go's float64 formatting,
// or an integer for integral values when the static config was written that way.
class StaticReader {
 public:
  explicit StaticReader(bool integers) : integers_(integers) {}

 protected:
  // ---- Values ------------------------------------------------------------------------------

  // Text of a scalar, as a YAML scalar decoded into a Go string field reads.
  std::optional<std::string> scalar_text(const value& v) const {
    if (v.is_string()) return std::string(v.get_string());
    if (v.is_bool()) return std::string(v.get_bool() ? "true" : "false");
    if (v.is_number()) {
      const double d = v.to_number<double>();
      if (!std::isfinite(d)) return std::nullopt;
      if (integers_ && std::trunc(d) == d && std::fabs(d) < 9007199254740992.0) {
        return format_number(d);
      }
      return k8s::yaml::format_go_float(d);
    }
    return std::nullopt;
  }

  enum class T { text, boolean, integer, number, prom_duration, strings, string_map, list_map };

  std::optional<Expr> convert(const value& v, T t, const std::string& path, Sink& s) const {
    switch (t) {
      case T::text:
        if (auto x = scalar_text(v)) return Expr::string(*x);
        s.reject(path, "expected a string");
        return std::nullopt;
      case T::boolean:
        if (v.is_bool()) return Expr::boolean(v.get_bool());
        s.reject(path, "expected a boolean");
        return std::nullopt;
      case T::integer:
      case T::number: {
        if (v.is_number()) {
          const double d = v.to_number<double>();
          if (std::isfinite(d) && (t == T::number || std::trunc(d) == d)) return Expr::number(d);
        }
        s.reject(path, t == T::integer ? "expected an integer" : "expected a finite number");
        return std::nullopt;
      }
      case T::prom_duration: {
        const auto x = scalar_text(v);
        const auto go = x ? go_duration(*x) : std::nullopt;
        if (go) return Expr::string(*go);
        s.reject(path, "not a Prometheus duration");
        return std::nullopt;
      }
      case T::strings: {
        if (!v.is_array()) {
          s.reject(path, "expected a list of strings");
          return std::nullopt;
        }
        std::vector<Expr> items;
        for (const auto& i : v.get_array()) {
          const auto x = scalar_text(i);
          if (!x) {
            s.reject(path, "expected a list of strings");
            return std::nullopt;
          }
          items.push_back(Expr::string(*x));
        }
        return Expr::list(std::move(items));
      }
      case T::string_map:
      case T::list_map: {
        if (!v.is_object()) {
          s.reject(path, "expected a mapping");
          return std::nullopt;
        }
        std::vector<std::pair<std::string, Expr>> entries;
        for (const auto& [k, e] : v.get_object()) {
          auto x =
              convert(e, t == T::string_map ? T::text : T::strings, path + "." + std::string(k), s);
          if (!x) return std::nullopt;
          entries.emplace_back(std::string(k), std::move(*x));
        }
        return Expr::object(std::move(entries));
      }
    }
    return std::nullopt;
  }

  static const object* as_object(const value& v, const std::string& path, Sink& s) {
    if (v.is_object()) return &v.get_object();
    s.reject(path, "expected a mapping");
    return nullptr;
  }

  std::optional<std::string> text_of(const object& o, std::string_view key) const {
    const value* v = o.if_contains(key);
    return v ? scalar_text(*v) : std::nullopt;
  }

  // A static key mapped to an Alloy attribute.
  struct Field {
    std::string_view from;
    std::string_view to;
    T type = T::text;
  };

  void put(Block& b, const object& src, const Field& f, const std::string& path, Sink& s) const {
    const value* v = src.if_contains(f.from);
    if (v == nullptr) return;
    if (auto e = convert(*v, f.type, path + "." + std::string(f.from), s)) {
      b.attr(std::string(f.to), std::move(*e));
    }
  }

  // Every key of `src` must be a field or one of `nested` (handled by the caller).
  static void unknown_keys(const object& src, const std::vector<Field>& fields,
                           std::initializer_list<std::string_view> nested, const std::string& path,
                           Sink& s) {
    for (const auto& kv : src) {
      const std::string_view k = kv.key();
      const bool known =
          std::any_of(fields.begin(), fields.end(), [&](const Field& f) { return f.from == k; }) ||
          std::find(nested.begin(), nested.end(), k) != nested.end();
      if (!known) {
        s.unsupported.push_back(path + "." + std::string(k) + ": has no Alloy translation");
      }
    }
  }

  Block mapped(std::string name, const object& src, const std::vector<Field>& fields,
               const std::string& path, Sink& s,
               std::initializer_list<std::string_view> nested = {}) const {
    Block b(std::move(name));
    for (const auto& f : fields) put(b, src, f, path, s);
    unknown_keys(src, fields, nested, path, s);
    return b;
  }

  // A copy of `b` carrying `label`.
  static Block labelled(const Block& b, const std::string& label) {
    Block out(b.name(), label);
    for (const auto& [n, v] : b.attributes()) out.attr(n, v);
    for (const auto& c : b.blocks()) out.block(c);
    return out;
  }

  // ---- Client blocks -------------------------------------------------------------------------

  std::optional<Block> tls_block(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    Block b = mapped("tls_config", *o,
                     {{"ca", "ca_pem"},
                      {"ca_file", "ca_file"},
                      {"cert", "cert_pem"},
                      {"cert_file", "cert_file"},
                      {"key", "key_pem"},
                      {"key_file", "key_file"},
                      {"server_name", "server_name"},
                      {"insecure_skip_verify", "insecure_skip_verify", T::boolean},
                      {"min_version", "min_version"}},
                     path, s);
    for (const char* pair : {"ca", "cert", "key"}) {
      if (o->contains(pair) && o->contains(std::string(pair) + "_file")) {
        s.reject(path, std::string("both ") + pair + " and " + pair + "_file are set");
      }
    }
    const bool cert = o->contains("cert") || o->contains("cert_file");
    const bool key = o->contains("key") || o->contains("key_file");
    if (cert != key) s.reject(path, "a client certificate needs both cert and key");
    return b;
  }

  std::optional<Block> basic_auth_block(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    if (o->contains("password") && o->contains("password_file")) {
      s.reject(path, "both password and password_file are set");
    }
    return mapped(
        "basic_auth", *o,
        {{"username", "username"}, {"password", "password"}, {"password_file", "password_file"}},
        path, s);
  }

  std::optional<Block> authorization_block(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    if (o->contains("credentials") && o->contains("credentials_file")) {
      s.reject(path, "both credentials and credentials_file are set");
    }
    std::string type = text_of(*o, "type").value_or("");
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (type == "basic") s.reject(path + ".type", "type Basic is not allowed (use basic_auth)");
    return mapped("authorization", *o,
                  {{"type", "type"},
                   {"credentials", "credentials"},
                   {"credentials_file", "credentials_file"}},
                  path, s);
  }

  std::optional<Block> oauth2_block(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    Block b = mapped("oauth2", *o,
                     {{"client_id", "client_id"},
                      {"client_secret", "client_secret"},
                      {"client_secret_file", "client_secret_file"},
                      {"scopes", "scopes", T::strings},
                      {"token_url", "token_url"},
                      {"endpoint_params", "endpoint_params", T::string_map},
                      {"proxy_url", "proxy_url"}},
                     path, s, {"tls_config"});
    if (text_of(*o, "client_id").value_or("").empty()) s.reject(path, "client_id is missing");
    if (text_of(*o, "token_url").value_or("").empty()) s.reject(path, "token_url is missing");
    const int secrets =
        (o->contains("client_secret") ? 1 : 0) + (o->contains("client_secret_file") ? 1 : 0);
    if (secrets != 1) s.reject(path, "needs exactly one of client_secret and client_secret_file");
    if (const value* t = o->if_contains("tls_config")) {
      if (auto tb = tls_block(*t, path + ".tls_config", s)) b.block(std::move(*tb));
    }
    return b;
  }

  std::optional<Block> sigv4_block(const value& v, const std::string& path, Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    if (o->contains("access_key") != o->contains("secret_key")) {
      s.reject(path, "access_key and secret_key must be set together");
    }
    return mapped("sigv4", *o,
                  {{"region", "region"},
                   {"access_key", "access_key"},
                   {"secret_key", "secret_key"},
                   {"profile", "profile"},
                   {"role_arn", "role_arn"}},
                  path, s);
  }

  // At most one authentication method per HTTP client.
  static void auth_exclusive(const object& o, const std::string& path, Sink& s) {
    int n = 0;
    for (const char* k :
         {"basic_auth", "authorization", "oauth2", "sigv4", "bearer_token", "bearer_token_file"}) {
      n += o.contains(k) ? 1 : 0;
    }
    if (n > 1) s.reject(path, "more than one authentication method is set");
  }

  // The nested client blocks of `o` present in `names`, in that order.
  void client_blocks(const object& o, std::initializer_list<std::string_view> names,
                     const std::string& path, Block& b, Sink& s) const {
    for (const auto name : names) {
      const value* v = o.if_contains(name);
      if (v == nullptr) continue;
      const std::string p = path + "." + std::string(name);
      std::optional<Block> out;
      if (name == "basic_auth") out = basic_auth_block(*v, p, s);
      if (name == "authorization") out = authorization_block(*v, p, s);
      if (name == "oauth2") out = oauth2_block(*v, p, s);
      if (name == "sigv4") out = sigv4_block(*v, p, s);
      if (name == "tls_config") out = tls_block(*v, p, s);
      if (out) b.block(std::move(*out));
    }
  }

  // ---- Relabel rules ---------------------------------------------------------------------------

  static bool label_name(std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    });
  }

  // Prometheus's pattern for a `replace` target with `$` references and for `labelmap`
  // replacements: letters, digits and `_` (not leading with a digit), and `$name` or
  // `${name}` references.
  static bool relabel_target(std::string_view s) {
    const auto word = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    };
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
    for (std::size_t i = 0; i < s.size();) {
      if (word(s[i])) {
        ++i;
      } else if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{') {
        const auto close = s.find('}', i + 2);
        if (close == std::string_view::npos || close == i + 2 ||
            !std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i) + 2,
                         s.begin() + static_cast<std::ptrdiff_t>(close), word)) {
          return false;
        }
        i = close + 1;
      } else if (s[i] == '$' && i + 1 < s.size() && word(s[i + 1])) {
        i += 2;
      } else {
        return false;
      }
    }
    return true;
  }

  // One static relabel entry as a `rule` (or `write_relabel_config`) block, with the
  // validation Prometheus and Alloy apply.
  std::optional<Block> rule_block(const value& v, const std::string& name, const std::string& path,
                                  Sink& s) const {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    const std::size_t before = s.rejected.size();
    Block b = mapped(name, *o,
                     {{"source_labels", "source_labels", T::strings},
                      {"separator", "separator"},
                      {"regex", "regex"},
                      {"modulus", "modulus", T::integer},
                      {"target_label", "target_label"},
                      {"replacement", "replacement"}},
                     path, s, {"action"});
    std::string action = text_of(*o, "action").value_or("replace");
    std::transform(action.begin(), action.end(), action.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (o->contains("action")) b.attr("action", Expr::string(action));
    if (s.rejected.size() > before) return b;

    static const std::set<std::string, std::less<>> kActions = {
        "replace",   "keep",      "drop",      "hashmod",   "labelmap", "labeldrop",
        "labelkeep", "lowercase", "uppercase", "keepequal", "dropequal"};
    const std::string target = text_of(*o, "target_label").value_or("");
    const std::string replacement = text_of(*o, "replacement").value_or("$1");
    const bool default_separator = text_of(*o, "separator").value_or(";") == ";";
    const bool default_regex = text_of(*o, "regex").value_or("(.*)") == "(.*)";
    const double modulus = o->contains("modulus") ? o->at("modulus").to_number<double>() : 0;
    const auto bad = [&](const std::string& what) { s.reject(path, what); };
    if (kActions.count(action) == 0) {
      bad("unknown relabel action");
      return b;
    }
    const bool case_or_equal = action == "lowercase" || action == "uppercase" ||
                               action == "keepequal" || action == "dropequal";
    if ((action == "replace" || action == "hashmod" || case_or_equal) && target.empty()) {
      bad("action " + action + " needs target_label");
    }
    if (action == "replace" && !target.empty() &&
        (target.find('$') == std::string::npos ? !label_name(target) : !relabel_target(target))) {
      bad("target_label is not a valid label name");
    }
    if ((case_or_equal || action == "hashmod") && !target.empty() && !label_name(target)) {
      bad("target_label is not a valid label name");
    }
    if (case_or_equal && replacement != "$1") bad("action " + action + " takes no replacement");
    if (action == "labelmap" && !relabel_target(replacement)) {
      bad("replacement is not a valid label name pattern");
    }
    if (action == "hashmod" && modulus == 0) bad("action hashmod needs a non-zero modulus");
    if ((action == "labeldrop" || action == "labelkeep") &&
        (o->contains("source_labels") || !target.empty() || modulus != 0 || !default_separator ||
         replacement != "$1")) {
      bad("action " + action + " takes only regex");
    }
    if ((action == "keepequal" || action == "dropequal") &&
        (!default_regex || modulus != 0 || !default_separator || replacement != "$1")) {
      bad("action " + action + " takes only source_labels and target_label");
    }
    return b;
  }

  std::vector<Block> rule_blocks(const value* list, const std::string& name,
                                 const std::string& path, Sink& s) const {
    std::vector<Block> out;
    if (list == nullptr) return out;
    if (!list->is_array()) {
      s.reject(path, "expected a list");
      return out;
    }
    const auto& a = list->get_array();
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (auto b = rule_block(a[i], name, path + "[" + std::to_string(i) + "]", s)) {
        out.push_back(std::move(*b));
      }
    }
    return out;
  }

  // In a constant relabel replacement, `$` is written `$$` (Go's regexp expansion turns `$$`
  // back into `$`), so that the value reaches the label literally.
  static std::string literal_replacement(std::string_view v) {
    std::string out;
    for (const char c : v) {
      out += c;
      if (c == '$') out += '$';
    }
    return out;
  }

  // ---- Environment references ------------------------------------------------------------------

  // Static mode expanded `$VAR`, `${VAR}` and `$(VAR)` in its configuration; Alloy keeps
  // the text. `$1`, `${1}` (regex references) are not environment references.
  static bool env_reference(std::string_view s) {
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      if (s[i] != '$') continue;
      const char n = s[i + 1];
      if (std::isalpha(static_cast<unsigned char>(n)) != 0 || n == '_' || n == '(') return true;
      if (n == '{' &&
          (i + 2 >= s.size() || std::isdigit(static_cast<unsigned char>(s[i + 2])) == 0)) {
        return true;
      }
    }
    return false;
  }

  static void env_references(const value& v, const std::string& path,
                             std::vector<std::string>& out) {
    if (v.is_string()) {
      if (env_reference(v.get_string())) out.push_back(path);
    } else if (v.is_array()) {
      const auto& a = v.get_array();
      for (std::size_t i = 0; i < a.size(); ++i) {
        env_references(a[i], path + "[" + std::to_string(i) + "]", out);
      }
    } else if (v.is_object()) {
      for (const auto& [k, e] : v.get_object()) env_references(e, path + "." + std::string(k), out);
    }
  }

 private:
  bool integers_;
};

// ---- Translator ---------------------------------------------------------------------------------

// A scrape job validated and converted, before labels are assigned.
struct Job {
  std::string name;
  struct Sd {
    std::string key;       // canonical JSON of the static entry: the identity of the component
    std::string readable;  // role + `_<namespace>` for each listed namespace
    Block block;           // unlabelled
  };
  std::vector<Sd> sds;
  std::optional<Expr> inline_targets;
  std::vector<Block> rules;
  std::vector<std::pair<std::string, Expr>> scrape_attrs;  // from job_name on
  std::vector<Block> scrape_blocks;
  std::vector<Block> metric_rules;
};

class MetricsTranslator : StaticReader {
 public:
  explicit MetricsTranslator(const MetricsRoot& root)
      : StaticReader(root.integer_numbers), root_(root) {}

  AlloyConfig run(const value& tree) {
    AlloyConfig out;
    const object* top = tree.if_object();
    const value* mv = top != nullptr ? top->if_contains("metrics") : nullptr;
    const object* metrics = mv != nullptr ? mv->if_object() : nullptr;
    if (metrics == nullptr) {
      root_problem("spec.metrics", "the static metrics configuration is not a mapping");
      out.problems = std::move(problems_);
      return out;
    }
    const value* server = top->if_contains("server");
    out.files.push_back({"main.alloy", {logging(server ? server->if_object() : nullptr)}});
    const object* global =
        metrics->contains("global") ? metrics->at("global").if_object() : nullptr;
    global_ = global ? *global : object{};
    global_interval_ = global_duration("scrape_interval", kDefaultInterval);
    global_timeout_ = global_duration("scrape_timeout", kDefaultTimeout);

    std::vector<File> jobs;
    if (const value* configs = metrics->if_contains("configs"); configs && configs->is_array()) {
      for (const auto& c : configs->get_array()) {
        if (!c.is_object()) continue;
        instance(c.get_object(), out.files, jobs);
      }
    }
    if (!discovery_.empty()) {
      File d{"discovery.alloy", {}};
      for (auto& [label, block] : discovery_) d.blocks.push_back(std::move(block));
      out.files.push_back(std::move(d));
    }
    for (auto& j : jobs) out.files.push_back(std::move(j));
    out.problems = std::move(problems_);
    if (translation_failed(out.problems)) out.files.clear();
    return out;
  }

 private:
  void add(ProblemClass cls, const Owner& o, const std::string& message) {
    TranslationProblem p{cls, o.kind, o.ns, o.name, o.field, message};
    if (std::find(problems_.begin(), problems_.end(), p) == problems_.end()) {
      problems_.push_back(std::move(p));
    }
  }
  void root_problem(const std::string& field, const std::string& what) {
    add(ProblemClass::b, {"GrafanaAgent", root_.ns, root_.name, field},
        field + ": " + what + " (" + std::string(kNotApplied) + ")");
  }
  // Root- or instance-level findings: everything Alloy would refuse is class B.
  void root_findings(const Owner& o, const Sink& s) {
    const std::string consequence = " (" + std::string(kNotApplied) + ")";
    for (const auto& m : s.rejected) add(ProblemClass::b, o, m + consequence);
    for (const auto& m : s.unsupported) add(ProblemClass::b, o, m + consequence);
    for (const auto& m : s.warnings) add(ProblemClass::c, o, m);
  }

  std::uint64_t global_duration(std::string_view key, std::uint64_t fallback) {
    const auto t = text_of(global_, key);
    if (!t) return fallback;
    if (const auto ms = parse_prometheus_duration(*t)) return *ms;
    root_problem(std::string(key == "scrape_interval" ? "spec.metrics.scrapeInterval"
                                                      : "spec.metrics.scrapeTimeout"),
                 "not a Prometheus duration");
    return fallback;
  }

  Block logging(const object* server) {
    Block b("logging");
    if (server == nullptr) return b;
    static const std::vector<std::string> kLevels = {"debug", "info", "warn", "error"};
    static const std::vector<std::string> kFormats = {"logfmt", "json"};
    for (const auto& [key, field, allowed] :
         {std::tuple{"log_level", "spec.logLevel", &kLevels},
          std::tuple{"log_format", "spec.logFormat", &kFormats}}) {
      const auto v = text_of(*server, key);
      if (!v || v->empty()) continue;
      if (std::find(allowed->begin(), allowed->end(), *v) == allowed->end()) {
        root_problem(field, "is not one of the values Alloy accepts");
        continue;
      }
      b.attr(std::string(key) == "log_level" ? "level" : "format", Expr::string(*v));
    }
    return b;
  }

  // One MetricsInstance: its remote write file, then its jobs.
  void instance(const object& c, std::vector<File>& files, std::vector<File>& jobs) {
    const std::string full = text_of(c, "name").value_or("");
    const auto slash = full.find('/');
    const std::string ins = slash == std::string::npos ? std::string() : full.substr(0, slash);
    const std::string iname = slash == std::string::npos ? full : full.substr(slash + 1);
    const Owner owner{"MetricsInstance", ins, iname, "spec"};
    const std::string mi = labels_.label("mi", ins + "_" + iname, "MetricsInstance/" + full);
    files.push_back({mi + ".alloy", {remote_write(c, mi, owner)}});

    std::set<std::string> job_names;
    std::size_t additional = 0;
    const value* list = c.if_contains("scrape_configs");
    if (list == nullptr || !list->is_array()) return;
    for (const auto& jv : list->get_array()) {
      const std::string job_name =
          jv.is_object() ? text_of(jv.get_object(), "job_name").value_or("") : "";
      Owner member = member_of(job_name, ins, iname, additional);
      Sink s;
      std::optional<Job> job = translate_job(jv, member.field, member.kind != "MetricsInstance", s);
      if (job && !job->name.empty() && !job_names.insert(job->name).second) {
        s.reject(member.field,
                 "job_name \"" + job->name + "\" is used by an earlier job of this instance");
      }
      const std::string not_applied = " (" + std::string(kNotApplied) + ")";
      const std::string skipped = " (" + std::string(kSkipped) + ")";
      for (const auto& m : s.unsupported) add(ProblemClass::b, member, m + not_applied);
      for (const auto& m : s.rejected) add(ProblemClass::a, member, m + skipped);
      for (const auto& m : s.warnings) add(ProblemClass::c, member, m);
      if (job && s.clean()) jobs.push_back(assemble(std::move(*job), full, mi));
    }
  }

  // The member a job comes from, by its generated job name; anything else is an entry
  // of the instance's additional scrape configs.
  static Owner member_of(const std::string& job, const std::string& ins, const std::string& iname,
                         std::size_t& additional) {
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
      const auto slash = job.find('/', start);
      parts.push_back(job.substr(start, slash == std::string::npos ? slash : slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    if (parts.size() == 4 && parts[0] == "serviceMonitor") {
      return {"ServiceMonitor", parts[1], parts[2], "spec.endpoints[" + parts[3] + "]"};
    }
    if (parts.size() == 4 && parts[0] == "podMonitor") {
      return {"PodMonitor", parts[1], parts[2], "spec.podMetricsEndpoints[" + parts[3] + "]"};
    }
    if (parts.size() == 3 && parts[0] == "probe") return {"Probe", parts[1], parts[2], "spec"};
    return {"MetricsInstance", ins, iname,
            "spec.additionalScrapeConfigs[" + std::to_string(additional++) + "]"};
  }

  // ---- Remote write ------------------------------------------------------------------------

  Block remote_write(const object& c, const std::string& label, const Owner& owner) {
    Block b("prometheus.remote_write", label);
    Sink s;
    if (const value* el = global_.if_contains("external_labels");
        el && el->is_object() && !el->get_object().empty()) {
      std::vector<std::pair<std::string, Expr>> entries;
      for (const auto& [k, v] : el->get_object()) {
        if (!root_.replica_label.empty() && k == root_.replica_label) {
          entries.emplace_back(
              std::string(k), Expr::concat({Expr::string("replica-"), Expr::env("REPLICA_GROUP")}));
          continue;
        }
        auto x = convert(v, T::text, "spec.metrics.externalLabels." + std::string(k), s);
        if (x) entries.emplace_back(std::string(k), std::move(*x));
        if (v.is_string() && env_reference(v.get_string())) {
          s.warnings.push_back("spec.metrics.externalLabels." + std::string(k) +
                               ": contains an environment reference that static mode expanded "
                               "(Alloy keeps the text literally)");
        }
      }
      b.attr("external_labels", Expr::object(std::move(entries)));
    }
    root_findings({"GrafanaAgent", root_.ns, root_.name, "spec.metrics.externalLabels"}, s);

    const value* own = c.if_contains("remote_write");
    const bool use_own = own && own->is_array() && !own->get_array().empty();
    const value* rws = use_own ? own : global_.if_contains("remote_write");
    const Owner rw_owner =
        use_own ? Owner{owner.kind, owner.ns, owner.name, "spec.remoteWrite"}
                : Owner{"GrafanaAgent", root_.ns, root_.name, "spec.metrics.remoteWrite"};
    if (rws && rws->is_array()) {
      const auto& a = rws->get_array();
      for (std::size_t i = 0; i < a.size(); ++i) {
        Sink es;
        const std::string path = rw_owner.field + "[" + std::to_string(i) + "]";
        if (auto e = endpoint(a[i], path, es)) b.block(std::move(*e));
        root_findings(rw_owner, es);
      }
    }
    b.block(wal(c, owner));
    return b;
  }

  std::optional<Block> endpoint(const value& v, const std::string& path, Sink& s) {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    Block b = mapped("endpoint", *o,
                     {{"url", "url"},
                      {"name", "name"},
                      {"remote_timeout", "remote_timeout", T::prom_duration},
                      {"headers", "headers", T::string_map},
                      {"proxy_url", "proxy_url"}},
                     path, s,
                     {"basic_auth", "authorization", "oauth2", "sigv4", "tls_config",
                      "queue_config", "metadata_config", "write_relabel_configs"});
    if (!o->contains("url")) s.reject(path, "url is missing");
    auth_exclusive(*o, path, s);
    client_blocks(*o, {"basic_auth", "authorization", "oauth2", "sigv4", "tls_config"}, path, b, s);
    if (const value* q = o->if_contains("queue_config")) {
      if (const object* qo = as_object(*q, path + ".queue_config", s)) {
        const std::string qp = path + ".queue_config";
        Block qb = mapped("queue_config", *qo,
                          {{"capacity", "capacity", T::integer},
                           {"max_shards", "max_shards", T::integer},
                           {"min_shards", "min_shards", T::integer},
                           {"max_samples_per_send", "max_samples_per_send", T::integer},
                           {"batch_send_deadline", "batch_send_deadline", T::prom_duration},
                           {"min_backoff", "min_backoff", T::prom_duration},
                           {"max_backoff", "max_backoff", T::prom_duration}},
                          qp, s, {"retry_on_rate_limit", "retry_on_http_429", "max_retries"});
        // The fixed compat mode writes Prometheus's retry_on_rate_limit; both mean the same.
        const char* retry =
            qo->contains("retry_on_http_429") ? "retry_on_http_429" : "retry_on_rate_limit";
        put(qb, *qo, {retry, "retry_on_http_429", T::boolean}, qp, s);
        if (qo->contains("max_retries")) {
          s.warnings.push_back(qp +
                               ".max_retries: has no Alloy argument (Alloy retries recoverable "
                               "errors without limit)");
        }
        b.block(std::move(qb));
      }
    }
    if (const value* m = o->if_contains("metadata_config")) {
      if (const object* mo = as_object(*m, path + ".metadata_config", s)) {
        b.block(mapped(
            "metadata_config", *mo,
            {{"send", "send", T::boolean}, {"send_interval", "send_interval", T::prom_duration}},
            path + ".metadata_config", s));
      }
    }
    for (auto& r : rule_blocks(o->if_contains("write_relabel_configs"), "write_relabel_config",
                               path + ".write_relabel_configs", s)) {
      b.block(std::move(r));
    }
    std::vector<std::string> env;
    env_references(v, path, env);
    for (const auto& p : env) {
      s.warnings.push_back(p +
                           ": contains an environment reference that static mode expanded (Alloy "
                           "keeps the text literally)");
    }
    return b;
  }

  Block wal(const object& c, const Owner& owner) {
    Block b("wal");
    const std::string truncate = text_of(c, "wal_truncate_frequency").value_or("60m");
    const std::string min = text_of(c, "min_wal_time").value_or("5m");
    const std::string max = text_of(c, "max_wal_time").value_or("4h");
    const auto t = parse_go_duration(truncate);
    const auto lo = parse_go_duration(min);
    const auto hi = parse_go_duration(max);
    const Owner o{owner.kind, owner.ns, owner.name, "spec"};
    const auto fail = [&](const std::string& field, const std::string& what) {
      add(ProblemClass::b, {o.kind, o.ns, o.name, field},
          field + ": " + what + " (" + std::string(kNotApplied) + ")");
    };
    if (!t || *t <= 0) fail("spec.walTruncateFrequency", "must be a positive Go duration");
    if (!lo) fail("spec.minWALTime", "is not a Go duration");
    if (!hi) fail("spec.maxWALTime", "is not a Go duration");
    if (lo && hi && *lo >= *hi) {
      fail("spec.minWALTime", "must be less than spec.maxWALTime (Alloy requires min < max)");
    }
    b.attr("truncate_frequency", Expr::string(truncate));
    b.attr("min_keepalive_time", Expr::string(min));
    b.attr("max_keepalive_time", Expr::string(max));
    if (const auto d = text_of(c, "remote_flush_deadline"); d && *d != "1m") {
      add(ProblemClass::c, {o.kind, o.ns, o.name, "spec.remoteFlushDeadline"},
          "spec.remoteFlushDeadline: has no effect in Alloy (its flush deadline is fixed at 1m)");
    }
    if (const value* w = c.if_contains("write_stale_on_shutdown");
        w && w->is_bool() && w->get_bool()) {
      add(ProblemClass::c, {o.kind, o.ns, o.name, "spec.writeStaleOnShutdown"},
          "spec.writeStaleOnShutdown: has no equivalent in Alloy (no stale markers are written on "
          "shutdown)");
    }
    return b;
  }

  // ---- Scrape jobs ------------------------------------------------------------------------

  // `generated`: a ServiceMonitor, PodMonitor or Probe job, whose discovery settings come
  // from the GrafanaAgent's spec.apiServer (their violations belong to the root).
  std::optional<Job> translate_job(const value& jv, const std::string& path, bool generated,
                                   Sink& s) {
    static const std::set<std::string, std::less<>> kKeys = {"job_name",
                                                             "honor_labels",
                                                             "honor_timestamps",
                                                             "params",
                                                             "scrape_interval",
                                                             "scrape_timeout",
                                                             "metrics_path",
                                                             "scheme",
                                                             "sample_limit",
                                                             "target_limit",
                                                             "label_limit",
                                                             "label_name_length_limit",
                                                             "label_value_length_limit",
                                                             "body_size_limit",
                                                             "basic_auth",
                                                             "authorization",
                                                             "oauth2",
                                                             "bearer_token",
                                                             "bearer_token_file",
                                                             "tls_config",
                                                             "proxy_url",
                                                             "no_proxy",
                                                             "proxy_from_environment",
                                                             "follow_redirects",
                                                             "enable_http2",
                                                             "relabel_configs",
                                                             "metric_relabel_configs",
                                                             "kubernetes_sd_configs",
                                                             "static_configs"};
    const object* o = as_object(jv, path, s);
    if (o == nullptr) return std::nullopt;
    for (const auto& kv : *o) {
      const std::string_view k = kv.key();
      const bool sd = k.size() > 11 && k.substr(k.size() - 11) == "_sd_configs";
      if (kKeys.count(k) == 0 && !sd) {
        s.unsupported.push_back(path + "." + std::string(kv.key()) + ": has no Alloy translation");
      }
    }
    Job job;
    job.name = text_of(*o, "job_name").value_or("");
    if (job.name.empty()) s.reject(path + ".job_name", "is missing");

    // Interval and timeout as the static agent defaulted them (Alloy has no global section).
    std::uint64_t si = global_interval_;
    std::uint64_t st = 0;
    if (const auto t = text_of(*o, "scrape_interval")) {
      if (const auto ms = parse_prometheus_duration(*t)) {
        si = *ms;
      } else {
        s.reject(path + ".scrape_interval", "not a Prometheus duration");
      }
    }
    if (const auto t = text_of(*o, "scrape_timeout")) {
      if (const auto ms = parse_prometheus_duration(*t)) {
        st = *ms;
      } else {
        s.reject(path + ".scrape_timeout", "not a Prometheus duration");
      }
      if (st > si) s.reject(path + ".scrape_timeout", "is greater than scrape_interval");
    } else {
      st = std::min(global_timeout_, si);
    }

    targets(*o, job, path, generated, s);

    // Relabel rules: prelude, then the static rules without the shard rules.
    job.rules = prelude(*o, job.name, si, st);
    const value* rl = o->if_contains("relabel_configs");
    value stripped;
    if (rl && rl->is_array() &&
        (job.name.rfind("serviceMonitor/", 0) == 0 || job.name.rfind("podMonitor/", 0) == 0)) {
      stripped = without_shard_rules(rl->get_array());
      rl = &stripped;
    }
    for (auto& r : rule_blocks(rl, "rule", path + ".relabel_configs", s)) {
      job.rules.push_back(std::move(r));
    }

    // prometheus.scrape attributes in the documented order.
    auto& a = job.scrape_attrs;
    a.emplace_back("job_name", Expr::string(job.name));
    for (const Field& f : {Field{"honor_labels", "honor_labels", T::boolean},
                           Field{"honor_timestamps", "honor_timestamps", T::boolean},
                           Field{"params", "params", T::list_map}}) {
      if (const value* v = o->if_contains(f.from)) {
        if (auto e = convert(*v, f.type, path + "." + std::string(f.from), s)) {
          a.emplace_back(std::string(f.to), std::move(*e));
        }
      }
    }
    a.emplace_back("scrape_interval", Expr::string(*go_duration(prometheus_duration_text(si))));
    a.emplace_back("scrape_timeout", Expr::string(*go_duration(prometheus_duration_text(st))));
    for (const Field& f :
         {Field{"metrics_path", "metrics_path"}, Field{"scheme", "scheme"},
          Field{"sample_limit", "sample_limit", T::integer},
          Field{"target_limit", "target_limit", T::integer},
          Field{"label_limit", "label_limit", T::integer},
          Field{"label_name_length_limit", "label_name_length_limit", T::integer},
          Field{"label_value_length_limit", "label_value_length_limit", T::integer},
          Field{"body_size_limit", "body_size_limit"}, Field{"bearer_token", "bearer_token"},
          Field{"bearer_token_file", "bearer_token_file"}, Field{"proxy_url", "proxy_url"},
          Field{"no_proxy", "no_proxy"},
          Field{"proxy_from_environment", "proxy_from_environment", T::boolean},
          Field{"follow_redirects", "follow_redirects", T::boolean},
          Field{"enable_http2", "enable_http2", T::boolean}}) {
      if (const value* v = o->if_contains(f.from)) {
        if (auto e = convert(*v, f.type, path + "." + std::string(f.from), s)) {
          a.emplace_back(std::string(f.to), std::move(*e));
        }
      }
    }
    auth_exclusive(*o, path, s);
    Block holder("prometheus.scrape");
    client_blocks(*o, {"basic_auth", "authorization", "oauth2", "tls_config"}, path, holder, s);
    job.scrape_blocks = holder.blocks();

    const value* mr = o->if_contains("metric_relabel_configs");
    if (mr && mr->is_array() && !mr->get_array().empty()) {
      job.metric_rules = rule_blocks(mr, "rule", path + ".metric_relabel_configs", s);
      if (o->contains("sample_limit")) {
        s.warnings.push_back(
            path +
            ".sample_limit: Alloy counts the limit before metric relabeling, Prometheus after it");
      }
    } else if (mr != nullptr && !mr->is_array()) {
      s.reject(path + ".metric_relabel_configs", "expected a list");
    }

    std::vector<std::string> env;
    value scanned = jv;
    if (rl == &stripped) scanned.as_object()["relabel_configs"] = stripped;
    env_references(scanned, path, env);
    for (const auto& p : env) {
      s.warnings.push_back(p +
                           ": contains an environment reference that static mode expanded (Alloy "
                           "keeps the text literally)");
    }
    return job;
  }

  // The two shard rules the static renderer appends to ServiceMonitor and PodMonitor jobs:
  // Alloy clustering distributes targets instead.
  value without_shard_rules(const array& rules) const {
    array out = rules;
    if (out.size() < 2) return out;
    const value& hash = out[out.size() - 2];
    const value& keep = out.back();
    const bool is_hash = hash.is_object() && text_of(hash.get_object(), "action") == "hashmod" &&
                         text_of(hash.get_object(), "target_label") == "__tmp_hash";
    const bool is_keep = keep.is_object() && text_of(keep.get_object(), "regex") == "$(SHARD)" &&
                         text_of(keep.get_object(), "action") == "keep";
    if (is_hash && is_keep) out.resize(out.size() - 2);
    return out;
  }

  // Rules giving discovery.relabel the labels Prometheus sets before relabeling and Alloy
  // only inside prometheus.scrape, each only where the discovered label is empty; params
  // overwrite `__param_<k>` as Prometheus 2 did.
  std::vector<Block> prelude(const object& o, const std::string& job, std::uint64_t si,
                             std::uint64_t st) const {
    std::vector<Block> out;
    const auto defaulted = [&](const char* label, const std::string& v) {
      out.push_back(Block("rule")
                        .attr("source_labels", Expr::strings({label}))
                        .attr("regex", Expr::string(""))
                        .attr("target_label", Expr::string(label))
                        .attr("replacement", Expr::string(literal_replacement(v))));
    };
    defaulted("job", job);
    defaulted("__scrape_interval__", prometheus_duration_text(si));
    defaulted("__scrape_timeout__", prometheus_duration_text(st));
    defaulted("__metrics_path__", text_of(o, "metrics_path").value_or("/metrics"));
    defaulted("__scheme__", text_of(o, "scheme").value_or("http"));
    if (const value* p = o.if_contains("params"); p && p->is_object()) {
      std::vector<std::string> keys;
      for (const auto& kv : p->get_object()) keys.emplace_back(kv.key());
      std::sort(keys.begin(), keys.end());
      for (const auto& k : keys) {
        const value& list = p->get_object().at(k);
        if (!label_name("__param_" + k) || !list.is_array() || list.get_array().empty()) continue;
        const auto first = scalar_text(list.get_array()[0]);
        if (!first) continue;
        out.push_back(Block("rule")
                          .attr("target_label", Expr::string("__param_" + k))
                          .attr("replacement", Expr::string(literal_replacement(*first))));
      }
    }
    return out;
  }

  // Target sources: kubernetes_sd_configs entries (shared components) and static_configs.
  void targets(const object& o, Job& job, const std::string& path, bool generated, Sink& s) {
    for (const auto& kv : o) {
      const std::string_view k = kv.key();
      if (k.size() > 11 && k.substr(k.size() - 11) == "_sd_configs" &&
          k != "kubernetes_sd_configs") {
        s.unsupported.push_back(path + "." + std::string(k) + ": no Alloy translation");
      }
    }
    if (const value* sd = o.if_contains("kubernetes_sd_configs")) {
      if (!sd->is_array()) {
        s.reject(path + ".kubernetes_sd_configs", "expected a list");
      } else {
        const auto& a = sd->get_array();
        for (std::size_t i = 0; i < a.size(); ++i) {
          Sink ds;
          // A generated job's discovery settings are the GrafanaAgent's spec.apiServer.
          auto d = discovery(a[i],
                             generated ? std::string("spec.apiServer")
                                       : path + ".kubernetes_sd_configs[" + std::to_string(i) + "]",
                             ds);
          if (generated) {
            // Skipping the member would not help: every generated job shares the setting.
            root_findings({"GrafanaAgent", root_.ns, root_.name, "spec.apiServer"}, ds);
            s.failed_elsewhere = s.failed_elsewhere || !ds.clean();
          } else {
            s.rejected.insert(s.rejected.end(), ds.rejected.begin(), ds.rejected.end());
            s.unsupported.insert(s.unsupported.end(), ds.unsupported.begin(), ds.unsupported.end());
            s.warnings.insert(s.warnings.end(), ds.warnings.begin(), ds.warnings.end());
          }
          if (d) job.sds.push_back(std::move(*d));
        }
      }
    }
    if (const value* sc = o.if_contains("static_configs")) {
      if (!sc->is_array()) {
        s.reject(path + ".static_configs", "expected a list");
        return;
      }
      std::vector<Expr> list;
      const auto& groups = sc->get_array();
      for (std::size_t g = 0; g < groups.size(); ++g) {
        const std::string gp = path + ".static_configs[" + std::to_string(g) + "]";
        const object* group = as_object(groups[g], gp, s);
        if (group == nullptr) continue;
        std::vector<std::pair<std::string, Expr>> labels;
        if (const value* l = group->if_contains("labels")) {
          if (auto x = convert(*l, T::string_map, gp + ".labels", s)) {
            for (std::size_t i = 0; i < x->keys().size(); ++i) {
              if (x->keys()[i] != "__address__") labels.emplace_back(x->keys()[i], x->items()[i]);
            }
          }
        }
        const value* t = group->if_contains("targets");
        if (t == nullptr) continue;
        const auto ts = convert(*t, T::strings, gp + ".targets", s);
        if (!ts) continue;
        for (const auto& target : ts->items()) {
          auto entry = labels;
          entry.emplace_back("__address__", target);
          list.push_back(Expr::object(std::move(entry)));
        }
      }
      job.inline_targets = Expr::list(std::move(list));
    }
  }

  std::optional<Job::Sd> discovery(const value& v, const std::string& path, Sink& s) {
    const object* o = as_object(v, path, s);
    if (o == nullptr) return std::nullopt;
    Block b = mapped("discovery.kubernetes", *o,
                     {{"role", "role"},
                      {"api_server", "api_server"},
                      {"kubeconfig_file", "kubeconfig_file"},
                      {"bearer_token", "bearer_token"},
                      {"bearer_token_file", "bearer_token_file"},
                      {"proxy_url", "proxy_url"},
                      {"follow_redirects", "follow_redirects", T::boolean},
                      {"enable_http2", "enable_http2", T::boolean}},
                     path, s,
                     {"namespaces", "selectors", "attach_metadata", "basic_auth", "authorization",
                      "oauth2", "tls_config"});
    static const std::set<std::string, std::less<>> kRoles = {
        "endpoints", "endpointslice", "pod", "service", "node", "ingress"};
    const std::string role = text_of(*o, "role").value_or("");
    if (kRoles.count(role) == 0) s.reject(path + ".role", "is not a Kubernetes discovery role");
    std::string readable = role;
    if (const value* ns = o->if_contains("namespaces")) {
      if (const object* no = as_object(*ns, path + ".namespaces", s)) {
        Block nb =
            mapped("namespaces", *no,
                   {{"names", "names", T::strings}, {"own_namespace", "own_namespace", T::boolean}},
                   path + ".namespaces", s);
        if (const value* names = no->if_contains("names"); names && names->is_array()) {
          for (const auto& n : names->get_array()) readable += "_" + scalar_text(n).value_or("");
        }
        b.block(std::move(nb));
      }
    }
    if (const value* sel = o->if_contains("selectors")) {
      if (!sel->is_array()) {
        s.reject(path + ".selectors", "expected a list");
      } else {
        const auto& a = sel->get_array();
        for (std::size_t i = 0; i < a.size(); ++i) {
          const std::string sp = path + ".selectors[" + std::to_string(i) + "]";
          if (const object* so = as_object(a[i], sp, s)) {
            b.block(mapped("selectors", *so,
                           {{"role", "role"}, {"label", "label"}, {"field", "field"}}, sp, s));
          }
        }
      }
    }
    if (const value* am = o->if_contains("attach_metadata")) {
      if (const object* ao = as_object(*am, path + ".attach_metadata", s)) {
        b.block(mapped("attach_metadata", *ao,
                       {{"node", "node", T::boolean}, {"namespace", "namespace", T::boolean}},
                       path + ".attach_metadata", s));
      }
    }
    auth_exclusive(*o, path, s);
    client_blocks(*o, {"basic_auth", "authorization", "oauth2", "tls_config"}, path, b, s);
    return Job::Sd{canonical_json(v), readable, std::move(b)};
  }

  // Labels, references and the final blocks of a kept job.
  File assemble(Job job, const std::string& instance, const std::string& mi) {
    const std::string label = labels_.label("scrape", job.name, instance + "/" + job.name);
    std::vector<Expr> sources;
    for (auto& sd : job.sds) {
      const std::string sl = labels_.label("sd", sd.readable, sd.key);
      if (discovery_.count(sl) == 0) discovery_.emplace(sl, labelled(sd.block, sl));
      sources.push_back(Expr::ref("discovery.kubernetes", sl, "targets"));
    }
    if (job.inline_targets) sources.push_back(std::move(*job.inline_targets));
    Expr targets = sources.empty()       ? Expr::list({})
                   : sources.size() == 1 ? std::move(sources[0])
                                         : Expr::call("array.concat", std::move(sources));

    File f{label + ".alloy", {}};
    Block relabel("discovery.relabel", label);
    relabel.attr("targets", std::move(targets));
    for (auto& r : job.rules) relabel.block(std::move(r));
    f.blocks.push_back(std::move(relabel));

    const Expr remote_write = Expr::ref("prometheus.remote_write", mi, "receiver");
    const bool split = !job.metric_rules.empty();
    const std::string report = label + "_report";
    Block scrape("prometheus.scrape", label);
    scrape.attr("targets", Expr::ref("discovery.relabel", label, "output"));
    scrape.attr("forward_to",
                split ? Expr::list({Expr::ref("prometheus.relabel", label, "receiver"),
                                    Expr::ref("prometheus.relabel", report, "receiver")})
                      : Expr::list({remote_write}));
    for (auto& [n, v] : job.scrape_attrs) scrape.attr(n, std::move(v));
    for (auto& b : job.scrape_blocks) scrape.block(std::move(b));
    scrape.block(Block("clustering").attr("enabled", Expr::boolean(true)));
    f.blocks.push_back(std::move(scrape));

    if (split) {
      // Prometheus applies metric relabeling to scraped samples only, never to the series
      // the scrape loop reports (up, scrape_*); Alloy's relabel component sees both, so
      // the report series go around the user's rules.
      Block user("prometheus.relabel", label);
      user.attr("forward_to", Expr::list({remote_write}));
      user.block(Block("rule")
                     .attr("source_labels", Expr::strings({"__name__"}))
                     .attr("regex", Expr::string(std::string(kReportSeries)))
                     .attr("action", Expr::string("drop")));
      for (auto& r : job.metric_rules) user.block(std::move(r));
      f.blocks.push_back(std::move(user));
      Block reported("prometheus.relabel", report);
      reported.attr("forward_to", Expr::list({remote_write}));
      reported.block(Block("rule")
                         .attr("source_labels", Expr::strings({"__name__"}))
                         .attr("regex", Expr::string(std::string(kReportSeries)))
                         .attr("action", Expr::string("keep")));
      f.blocks.push_back(std::move(reported));
    }
    return f;
  }

  const MetricsRoot& root_;
  LabelSet labels_;
  std::vector<TranslationProblem> problems_;
  object global_;
  std::uint64_t global_interval_ = kDefaultInterval;
  std::uint64_t global_timeout_ = kDefaultTimeout;
  std::map<std::string, Block> discovery_;  // by label: discovery.alloy is sorted by label
};

}  // namespace

AlloyConfig translate_metrics(const value& static_tree, const MetricsRoot& root) {
  return MetricsTranslator(root).run(static_tree);
}

}  // namespace aop::alloy
