// Shared pieces of the Alloy translations; see translator.hpp.
#include "reconcile/alloy/translator.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <tuple>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/alloy/duration.hpp"

namespace aop::alloy {

bool translation_failed(const std::vector<TranslationProblem>& problems) {
  return std::any_of(problems.begin(), problems.end(),
                     [](const TranslationProblem& p) { return p.cls == ProblemClass::b; });
}

namespace detail {

using boost::json::object;
using boost::json::value;

std::string dotted(std::string_view path, std::string_view key) {
  std::string out;
  out.reserve(path.size() + 1 + key.size());
  out.append(path).append(".").append(key);
  return out;
}

void Sink::merge(const Sink& other) {
  rejected.insert(rejected.end(), other.rejected.begin(), other.rejected.end());
  unsupported.insert(unsupported.end(), other.unsupported.begin(), other.unsupported.end());
  warnings.insert(warnings.end(), other.warnings.begin(), other.warnings.end());
  failed_elsewhere = failed_elsewhere || other.failed_elsewhere;
}

// ---- StaticReader -------------------------------------------------------------------------

// ---- Values ------------------------------------------------------------------------------

// Text of a scalar, as a YAML scalar decoded into a Go string field reads.
std::optional<std::string> StaticReader::scalar_text(const value& v) const {
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

std::optional<Expr> StaticReader::convert(const value& v, T t, const std::string& path,
                                          Sink& s) const {
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
    case T::go_duration: {
      const auto x = scalar_text(v);
      if (x && parse_go_duration(*x)) return Expr::string(*x);
      s.reject(path, "not a Go duration");
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

const object* StaticReader::as_object(const value& v, const std::string& path, Sink& s) {
  if (v.is_object()) return &v.get_object();
  s.reject(path, "expected a mapping");
  return nullptr;
}

std::optional<std::string> StaticReader::text_of(const object& o, std::string_view key) const {
  const value* v = o.if_contains(key);
  return v ? scalar_text(*v) : std::nullopt;
}

void StaticReader::put(Block& b, const object& src, const Field& f, const std::string& path,
                       Sink& s) const {
  const value* v = src.if_contains(f.from);
  if (v == nullptr) return;
  if (auto e = convert(*v, f.type, path + "." + std::string(f.from), s)) {
    b.attr(std::string(f.to), std::move(*e));
  }
}

// Every key of `src` must be a field or one of `nested` (handled by the caller).
void StaticReader::unknown_keys(const object& src, const std::vector<Field>& fields,
                                std::initializer_list<std::string_view> nested,
                                const std::string& path, Sink& s) {
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

Block StaticReader::mapped(std::string name, const object& src, const std::vector<Field>& fields,
                           const std::string& path, Sink& s,
                           std::initializer_list<std::string_view> nested) const {
  Block b(std::move(name));
  for (const auto& f : fields) put(b, src, f, path, s);
  unknown_keys(src, fields, nested, path, s);
  return b;
}

// A copy of `b` carrying `label`.
Block StaticReader::labelled(const Block& b, const std::string& label) {
  Block out(b.name(), label);
  for (const auto& [n, v] : b.attributes()) out.attr(n, v);
  for (const auto& c : b.blocks()) out.block(c);
  return out;
}

// ---- Client blocks -------------------------------------------------------------------------

std::optional<Block> StaticReader::tls_block(const value& v, const std::string& path,
                                             Sink& s) const {
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

std::optional<Block> StaticReader::basic_auth_block(const value& v, const std::string& path,
                                                    Sink& s) const {
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

std::optional<Block> StaticReader::authorization_block(const value& v, const std::string& path,
                                                       Sink& s) const {
  const object* o = as_object(v, path, s);
  if (o == nullptr) return std::nullopt;
  if (o->contains("credentials") && o->contains("credentials_file")) {
    s.reject(path, "both credentials and credentials_file are set");
  }
  std::string type = text_of(*o, "type").value_or("");
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (type == "basic") s.reject(path + ".type", "type Basic is not allowed (use basic_auth)");
  return mapped(
      "authorization", *o,
      {{"type", "type"}, {"credentials", "credentials"}, {"credentials_file", "credentials_file"}},
      path, s);
}

std::optional<Block> StaticReader::oauth2_block(const value& v, const std::string& path,
                                                Sink& s) const {
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

std::optional<Block> StaticReader::sigv4_block(const value& v, const std::string& path,
                                               Sink& s) const {
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
void StaticReader::auth_exclusive(const object& o, const std::string& path, Sink& s) {
  int n = 0;
  for (const char* k :
       {"basic_auth", "authorization", "oauth2", "sigv4", "bearer_token", "bearer_token_file"}) {
    n += o.contains(k) ? 1 : 0;
  }
  if (n > 1) s.reject(path, "more than one authentication method is set");
}

// The nested client blocks of `o` present in `names`, in that order.
void StaticReader::client_blocks(const object& o, std::initializer_list<std::string_view> names,
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

bool StaticReader::label_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

// Prometheus's pattern for a `replace` target with `$` references and for `labelmap`
// replacements: letters, digits and `_` (not leading with a digit), and `$name` or
// `${name}` references.
bool StaticReader::relabel_target(std::string_view s) {
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
std::optional<Block> StaticReader::rule_block(const value& v, const std::string& name,
                                              const std::string& path, Sink& s) const {
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

std::vector<Block> StaticReader::rule_blocks(const value* list, const std::string& name,
                                             const std::string& path, Sink& s) const {
  return list_blocks(list, path, s, [&](const value& v, const std::string& p, Sink& sink) {
    return rule_block(v, name, p, sink);
  });
}

StaticReader::Timing StaticReader::scrape_timing(const object& o, const std::string& path,
                                                 std::uint64_t global_interval,
                                                 std::uint64_t global_timeout, Sink& s) const {
  Timing t{global_interval, 0};
  if (const auto text = text_of(o, "scrape_interval")) {
    if (const auto ms = parse_prometheus_duration(*text)) {
      t.interval = *ms;
    } else {
      s.reject(path + ".scrape_interval", "not a Prometheus duration");
    }
  }
  if (const auto text = text_of(o, "scrape_timeout")) {
    if (const auto ms = parse_prometheus_duration(*text)) {
      t.timeout = *ms;
    } else {
      s.reject(path + ".scrape_timeout", "not a Prometheus duration");
    }
    if (t.timeout > t.interval)
      s.reject(path + ".scrape_timeout", "is greater than scrape_interval");
  } else {
    t.timeout = std::min(global_timeout, t.interval);
  }
  return t;
}

// In a constant relabel replacement, `$` is written `$$` (Go's regexp expansion turns `$$`
// back into `$`), so that the value reaches the label literally.
std::string StaticReader::literal_replacement(std::string_view v) {
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
bool StaticReader::env_reference(std::string_view s) {
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

namespace {

void env_paths(const value& v, const std::string& path, std::vector<std::string>& out) {
  if (v.is_string()) {
    if (StaticReader::env_reference(v.get_string())) out.push_back(path);
  } else if (v.is_array()) {
    const auto& a = v.get_array();
    for (std::size_t i = 0; i < a.size(); ++i) {
      env_paths(a[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else if (v.is_object()) {
    for (const auto& [k, e] : v.get_object()) env_paths(e, path + "." + std::string(k), out);
  }
}

}  // namespace

void StaticReader::env_warnings(const value& v, const std::string& path, Sink& s) {
  std::vector<std::string> paths;
  env_paths(v, path, paths);
  for (const auto& p : paths) {
    s.warnings.push_back(p +
                         ": contains an environment reference that static mode expanded (Alloy "
                         "keeps the text literally)");
  }
}

Block StaticReader::constant_rule(const std::string& label, Expr value) {
  Block b("rule");
  b.attr("target_label", Expr::string(label));
  b.attr("replacement", std::move(value));
  return b;
}

// ---- Translator ---------------------------------------------------------------------------

std::vector<const object*> Translator::instances_of(const object& section) {
  std::vector<const object*> out;
  const value* list = section.if_contains("configs");
  if (list == nullptr || !list->is_array()) return out;
  for (const auto& c : list->get_array()) {
    if (c.is_object()) out.push_back(&c.get_object());
  }
  return out;
}

void Translator::add(ProblemClass cls, const Owner& o, const std::string& message) {
  TranslationProblem p{cls, o.kind, o.ns, o.name, o.field, message};
  if (std::find(problems_.begin(), problems_.end(), p) == problems_.end()) {
    problems_.push_back(std::move(p));
  }
}

void Translator::root_problem(const std::string& field, const std::string& what) {
  add(ProblemClass::b, {"GrafanaAgent", ns_, name_, field},
      field + ": " + what + " (" + std::string(kNotApplied) + ")");
}

void Translator::root_findings(const Owner& o, const Sink& s) {
  const std::string consequence = " (" + std::string(kNotApplied) + ")";
  for (const auto& m : s.rejected) add(ProblemClass::b, o, m + consequence);
  for (const auto& m : s.unsupported) add(ProblemClass::b, o, m + consequence);
  for (const auto& m : s.warnings) add(ProblemClass::c, o, m);
}

void Translator::member_findings(const Owner& o, const Sink& s) {
  const std::string not_applied = " (" + std::string(kNotApplied) + ")";
  const std::string skipped = " (" + std::string(kSkipped) + ")";
  for (const auto& m : s.unsupported) add(ProblemClass::b, o, m + not_applied);
  for (const auto& m : s.rejected) add(ProblemClass::a, o, m + skipped);
  for (const auto& m : s.warnings) add(ProblemClass::c, o, m);
}

std::uint64_t Translator::global_duration(const object& global, std::string_view key,
                                          std::uint64_t fallback) {
  const auto t = text_of(global, key);
  if (!t) return fallback;
  if (const auto ms = parse_prometheus_duration(*t)) return *ms;
  root_problem(std::string(key == "scrape_interval" ? "spec.metrics.scrapeInterval"
                                                    : "spec.metrics.scrapeTimeout"),
               "not a Prometheus duration");
  return fallback;
}

Block Translator::logging(const object* server) {
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

std::pair<std::string, std::string> Translator::instance_name(const object& c) const {
  const std::string full = text_of(c, "name").value_or("");
  const auto slash = full.find('/');
  if (slash == std::string::npos) return {std::string(), full};
  return {full.substr(0, slash), full.substr(slash + 1)};
}

// ---- Targets ------------------------------------------------------------------------------

void Translator::read_targets(const object& o, TargetSources& out, const std::string& path,
                              bool generated, bool node_local, Sink& s) {
  for (const auto& kv : o) {
    const std::string_view k = kv.key();
    if (k.size() > 11 && k.substr(k.size() - 11) == "_sd_configs" && k != "kubernetes_sd_configs") {
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
                           node_local, ds);
        if (generated) {
          // Skipping the member would not help: every generated job shares the setting.
          root_findings({"GrafanaAgent", ns_, name_, "spec.apiServer"}, ds);
          s.failed_elsewhere = s.failed_elsewhere || !ds.clean();
        } else {
          s.merge(ds);
        }
        if (d) out.sds.push_back(std::move(*d));
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
      unknown_keys(*group, {}, {"targets", "labels"}, gp, s);
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
    out.inline_targets = Expr::list(std::move(list));
  }
}

std::optional<SdEntry> Translator::discovery(const value& v, const std::string& path,
                                             bool node_local, Sink& s) {
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
  bool pod_selector = false;
  if (const value* sel = o->if_contains("selectors")) {
    if (!sel->is_array()) {
      s.reject(path + ".selectors", "expected a list");
    } else {
      const auto& a = sel->get_array();
      for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string sp = path + ".selectors[" + std::to_string(i) + "]";
        if (const object* so = as_object(a[i], sp, s)) {
          pod_selector = pod_selector || text_of(*so, "role") == "pod";
          b.block(mapped("selectors", *so,
                         {{"role", "role"}, {"label", "label"}, {"field", "field"}}, sp, s));
        }
      }
    }
  }
  std::string key = canonical_json(v);
  // Promtail discovered every pod of the cluster on every node and found no files for the
  // remote ones; a field selector on this node's name gives the same targets with one
  // node's worth of watch traffic.
  if (node_local && role == "pod" && !pod_selector) {
    b.block(
        Block("selectors")
            .attr("role", Expr::string("pod"))
            .attr("field", Expr::concat({Expr::string("spec.nodeName="), Expr::env("NODE_NAME")})));
    key += "\nnode-local";
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
  return SdEntry{std::move(key), readable, std::move(b)};
}

Expr Translator::target_expr(TargetSources& sources) {
  std::vector<Expr> list;
  for (auto& sd : sources.sds) {
    const std::string sl = labels_.label("sd", sd.readable, sd.key);
    if (discovery_.count(sl) == 0) discovery_.emplace(sl, labelled(sd.block, sl));
    list.push_back(Expr::ref("discovery.kubernetes", sl, "targets"));
  }
  if (sources.inline_targets) list.push_back(std::move(*sources.inline_targets));
  if (list.empty()) return Expr::list({});
  if (list.size() == 1) return std::move(list[0]);
  return Expr::call("array.concat", std::move(list));
}

std::optional<File> Translator::discovery_file() {
  if (discovery_.empty()) return std::nullopt;
  File d{"discovery.alloy", {}};
  for (auto& [label, block] : discovery_) d.blocks.push_back(std::move(block));
  discovery_.clear();
  return d;
}

// ---- Remote write -------------------------------------------------------------------------

Block Translator::remote_write(const object& c, const object& global, const std::string& label,
                               const Owner& owner, const std::string& replica_label) {
  Block b("prometheus.remote_write", label);
  Sink s;
  if (const value* el = global.if_contains("external_labels");
      el && el->is_object() && !el->get_object().empty()) {
    std::vector<std::pair<std::string, Expr>> entries;
    for (const auto& [k, v] : el->get_object()) {
      if (!replica_label.empty() && k == replica_label) {
        entries.emplace_back(std::string(k),
                             Expr::concat({Expr::string("replica-"), Expr::env("REPLICA_GROUP")}));
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
  root_findings({"GrafanaAgent", ns_, name_, "spec.metrics.externalLabels"}, s);

  const value* own = c.if_contains("remote_write");
  const bool use_own = own && own->is_array() && !own->get_array().empty();
  const value* rws = use_own ? own : global.if_contains("remote_write");
  const Owner rw_owner = use_own ? Owner{owner.kind, owner.ns, owner.name, "spec.remoteWrite"}
                                 : Owner{"GrafanaAgent", ns_, name_, "spec.metrics.remoteWrite"};
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

std::optional<Block> Translator::endpoint(const value& v, const std::string& path, Sink& s) {
  const object* o = as_object(v, path, s);
  if (o == nullptr) return std::nullopt;
  Block b = mapped("endpoint", *o,
                   {{"url", "url"},
                    {"name", "name"},
                    {"remote_timeout", "remote_timeout", T::prom_duration},
                    {"headers", "headers", T::string_map},
                    {"proxy_url", "proxy_url"}},
                   path, s,
                   {"basic_auth", "authorization", "oauth2", "sigv4", "tls_config", "queue_config",
                    "metadata_config", "write_relabel_configs"});
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
      // Both spellings mean the same: retry_on_http_429 is Prometheus' key (what the
      // fixed compat mode writes); retry_on_rate_limit is the CRD's name for it.
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
  env_warnings(v, path, s);
  return b;
}

Block Translator::wal(const object& c, const Owner& owner) {
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

// ---- Metric relabeling -------------------------------------------------------------------

namespace {

constexpr std::string_view kReportSeries =
    "up|scrape_duration_seconds|scrape_samples_scraped|scrape_samples_post_metric_relabeling|"
    "scrape_series_added";

Block report_rule(const char* action) {
  return Block("rule")
      .attr("source_labels", Expr::strings({"__name__"}))
      .attr("regex", Expr::string(std::string(kReportSeries)))
      .attr("action", Expr::string(action));
}

}  // namespace

Expr Translator::scrape_forward_to(const std::string& label, const std::string& mi, bool split) {
  if (!split) return Expr::list({Expr::ref("prometheus.remote_write", mi, "receiver")});
  return Expr::list({Expr::ref("prometheus.relabel", label, "receiver"),
                     Expr::ref("prometheus.relabel", label + "_report", "receiver")});
}

std::vector<Block> Translator::relabel_split(const std::string& label, const std::string& mi,
                                             std::vector<Block> rules) {
  // Prometheus applies metric relabeling to scraped samples only, never to the series the
  // scrape loop reports (up, scrape_*); Alloy's relabel component sees both, so the report
  // series go around the user's rules.
  const Expr remote_write = Expr::ref("prometheus.remote_write", mi, "receiver");
  Block user("prometheus.relabel", label);
  user.attr("forward_to", Expr::list({remote_write}));
  user.block(report_rule("drop"));
  for (auto& r : rules) user.block(std::move(r));
  Block reported("prometheus.relabel", label + "_report");
  reported.attr("forward_to", Expr::list({remote_write}));
  reported.block(report_rule("keep"));
  return {std::move(user), std::move(reported)};
}

// ---- Loki clients -------------------------------------------------------------------------

std::vector<Block> Translator::loki_writes(const object& c, bool agent_clients,
                                           std::vector<Expr>& receivers) {
  const auto [ins, iname] = instance_name(c);
  const std::string full = ins + "/" + iname;
  const Owner owner = agent_clients ? Owner{"GrafanaAgent", ns_, name_, "spec.logs.clients"}
                                    : Owner{"LogsInstance", ins, iname, "spec.clients"};
  std::vector<Block> out;
  const value* clients = c.if_contains("clients");
  if (clients == nullptr || !clients->is_array()) return out;
  const auto& a = clients->get_array();
  for (std::size_t i = 0; i < a.size(); ++i) {
    Sink s;
    const std::string path = owner.field + "[" + std::to_string(i) + "]";
    const object* client = as_object(a[i], path, s);
    // One component per client: external labels are per client in static mode and per
    // component in Alloy.
    const std::string index = std::to_string(i);
    std::string readable = ins;
    readable.append("_").append(iname).append("_").append(index);
    std::string key = "LogsInstance/";
    key.append(full).append("/").append(index);
    const std::string label = labels_.label("loki", readable, key);
    Block b("loki.write", label);
    if (client != nullptr) {
      if (const value* el = client->if_contains("external_labels")) {
        if (auto x = convert(*el, T::string_map, path + ".external_labels", s);
            x && !x->keys().empty()) {
          b.attr("external_labels", std::move(*x));
        }
      }
      if (auto e = loki_endpoint(*client, path, s)) b.block(std::move(*e));
      env_warnings(a[i], path, s);
    }
    root_findings(owner, s);
    receivers.push_back(Expr::ref("loki.write", label, "receiver"));
    out.push_back(std::move(b));
  }
  return out;
}

std::optional<Block> Translator::loki_endpoint(const object& o, const std::string& path, Sink& s) {
  Block b = mapped(
      "endpoint", o,
      {{"url", "url"}, {"tenant_id", "tenant_id"}, {"batchwait", "batch_wait", T::go_duration}},
      path, s,
      {"batchsize", "timeout", "backoff_config", "proxy_url", "bearer_token", "bearer_token_file",
       "basic_auth", "oauth2", "tls_config", "external_labels"});
  if (!o.contains("url")) s.reject(path, "url is missing");
  if (const value* n = o.if_contains("batchsize")) {
    const double d = n->is_number() ? n->to_number<double>() : -1;
    if (d >= 0 && std::trunc(d) == d && d < 9007199254740992.0) {
      b.attr("batch_size", Expr::string(format_number(d) + "B"));
    } else {
      s.reject(path + ".batchsize", "expected a non-negative integer");
    }
  }
  put(b, o, {"timeout", "remote_timeout", T::go_duration}, path, s);
  if (const value* bo = o.if_contains("backoff_config")) {
    if (const object* backoff = as_object(*bo, path + ".backoff_config", s)) {
      const std::string bp = path + ".backoff_config";
      for (const Field& f : {Field{"min_period", "min_backoff_period", T::go_duration},
                             Field{"max_period", "max_backoff_period", T::go_duration},
                             Field{"max_retries", "max_backoff_retries", T::integer}}) {
        put(b, *backoff, f, bp, s);
      }
      unknown_keys(*backoff, {{"min_period"}, {"max_period"}, {"max_retries"}}, {}, bp, s);
    }
  }
  for (const Field& f : {Field{"proxy_url", "proxy_url"}, Field{"bearer_token", "bearer_token"},
                         Field{"bearer_token_file", "bearer_token_file"}}) {
    put(b, o, f, path, s);
  }
  auth_exclusive(o, path, s);
  client_blocks(o, {"basic_auth", "oauth2", "tls_config"}, path, b, s);
  return b;
}

}  // namespace detail
}  // namespace aop::alloy
