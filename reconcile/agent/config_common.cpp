// Shared configuration blocks (secrets, TLS, relabel rules, service discovery,
// remote_write, external labels, additional scrape configs) and the final serialization.
#include <algorithm>
#include <cmath>

#include "k8s/yaml.hpp"
#include "reconcile/agent/config_common.hpp"
#include "reconcile/agent/sanitize.hpp"

namespace aop::agent {
namespace detail {

array string_array(const std::vector<std::string>& v) {
  array a;
  a.reserve(v.size());
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

object string_object(const StringMap& m) {
  object o;
  o.reserve(m.size());
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}

// ---- secrets --------------------------------------------------------------------------

value RenderContext::asset_value(std::string key) {
  const auto it = assets_.values.find(key);
  const bool found = it != assets_.values.end();
  if (reads_ != nullptr) {
    reads_->push_back(
        AssetRead{key, found ? std::optional<std::string>(it->second) : std::nullopt});
  }
  if (!found) {
    fail("key not provided: " + key);
    return nullptr;
  }
  return value(it->second);
}

value RenderContext::secret_value(std::string_view ns, const SecretKeySelector& sel) {
  return asset_value(secret_asset_key(ns, sel));
}

value RenderContext::config_map_value(std::string_view ns, const ConfigMapKeySelector& sel) {
  return asset_value(config_map_asset_key(ns, sel));
}

std::string RenderContext::secret_path(std::string_view ns, const SecretKeySelector& sel) {
  return std::string(kSecretsDir) + sanitize_label_name(secret_asset_key(ns, sel));
}

value RenderContext::secret_path(std::string_view ns, const std::optional<SecretKeySelector>& sel) {
  return sel ? value(secret_path(ns, *sel)) : value(nullptr);
}

value RenderContext::secret_path(std::string_view ns, const SecretOrConfigMap& s) {
  if (s.secret) return value(secret_path(ns, *s.secret));
  if (s.config_map) {
    return value(std::string(kSecretsDir) +
                 sanitize_label_name(config_map_asset_key(ns, *s.config_map)));
  }
  return nullptr;
}

// ---- TLS, relabel, SD -----------------------------------------------------------------

object tls_safe(RenderContext&, std::string_view ns, const SafeTLSConfig& t) {
  object o;
  o["ca_file"] = RenderContext::secret_path(ns, t.ca);
  o["cert_file"] = RenderContext::secret_path(ns, t.cert);
  o["key_file"] = RenderContext::secret_path(ns, t.key_secret);
  set_ne(o, "server_name", t.server_name);
  set_true(o, "insecure_skip_verify", t.insecure_skip_verify);
  return o;
}

object tls_full(RenderContext& ctx, std::string_view ns, const TLSConfig& t) {
  object o = tls_safe(ctx, ns, t);
  if (!t.ca_file.empty()) o["ca_file"] = t.ca_file;
  if (!t.cert_file.empty()) o["cert_file"] = t.cert_file;
  if (!t.key_file.empty()) o["key_file"] = t.key_file;
  return o;
}

object relabel(const RelabelConfig& r) {
  object o;
  set_ne_list(o, "source_labels", string_array(r.source_labels));
  set_ne(o, "separator", r.separator);
  set_ne(o, "regex", r.regex);
  set_nz(o, "modulus", static_cast<double>(r.modulus));
  set_ne(o, "target_label", r.target_label);
  set_ne(o, "replacement", r.replacement);
  set_ne(o, "action", r.action);
  return o;
}

array relabels(const std::vector<RelabelConfig>& list) {
  array a;
  a.reserve(list.size());
  for (const auto& r : list) a.emplace_back(relabel(r));
  return a;
}

std::vector<std::string> sd_namespaces(const NamespaceSelector& sel, const std::string& own_ns,
                                       bool ignore) {
  if (ignore) return {own_ns};
  if (sel.any) return {};
  if (sel.match_names.empty()) return {own_ns};
  return sel.match_names;
}

object sd_config(RenderContext& ctx, std::string_view role, const std::vector<std::string>& names) {
  object o;
  o["role"] = role;
  if (!names.empty()) o["namespaces"] = object{{"names", string_array(names)}};
  const auto& api = ctx.agent().spec.api_server;
  if (!api) return o;
  const std::string& ans = ctx.agent().metadata.ns;
  set_ne(o, "api_server", api->host);
  if (api->basic_auth) {
    o["basic_auth"] = object{{"username", ctx.secret_value(ans, api->basic_auth->username)},
                             {"password", ctx.secret_value(ans, api->basic_auth->password)}};
  }
  if (!api->bearer_token.empty() || !api->bearer_token_file.empty()) {
    object a{{"type", "Bearer"}};
    set_ne(a, "credentials", api->bearer_token);
    set_ne(a, "credentials_file", api->bearer_token_file);
    o["authorization"] = std::move(a);
  }
  if (api->tls_config) o["tls_config"] = tls_full(ctx, ans, *api->tls_config);
  return o;
}

// ---- remote_write ---------------------------------------------------------------------

void RenderContext::warn(Kind kind, const ObjectMeta& m, std::string field, std::string message) {
  if (problems_ == nullptr) return;
  Problem p =
      make_problem(kind, {m.ns, m.name}, std::move(field), std::move(message), Severity::warning);
  if (std::find(problems_->begin(), problems_->end(), p) == problems_->end()) {
    problems_->push_back(std::move(p));
  }
}

void warn_dropped_client_id(RenderContext& ctx, Kind kind, const ObjectMeta& m,
                            const std::string& field, const std::optional<OAuth2>& o) {
  if (ctx.fixed() || !o || o->client_id.secret || !o->client_id.config_map) return;
  ctx.warn(kind, m, field + ".clientId.configMap",
           "the upstream-compatible output leaves out a client ID read from a ConfigMap (an "
           "upstream bug kept on purpose), and the agent refuses an oauth2 block without "
           "client_id; take the client ID from a Secret, or run with --agent-compat=fixed, "
           "which renders it");
}

object oauth2_block(RenderContext& ctx, std::string_view ns, const OAuth2& a) {
  object o;
  if (a.client_id.secret) {
    o["client_id"] = ctx.secret_value(ns, *a.client_id.secret);
  } else if (a.client_id.config_map && ctx.fixed()) {
    o["client_id"] = ctx.config_map_value(ns, *a.client_id.config_map);
  }
  o["client_secret_file"] = RenderContext::secret_path(ns, a.client_secret);
  if (a.endpoint_params) o["endpoint_params"] = string_object(*a.endpoint_params);
  if (a.scopes) o["scopes"] = string_array(*a.scopes);
  o["token_url"] = a.token_url;
  return o;
}

object remote_write(RenderContext& ctx, std::string_view ns, const RemoteWriteSpec& rw) {
  object o;
  o["url"] = rw.url;
  set_ne(o, "name", rw.name);
  set_ne(o, "remote_timeout", rw.remote_timeout);
  set_ne(o, "proxy_url", rw.proxy_url);
  if (rw.headers) set_ne_map(o, "headers", string_object(*rw.headers));
  set_ne_list(o, "write_relabel_configs", relabels(rw.write_relabel_configs));
  if (rw.tls_config) o["tls_config"] = tls_full(ctx, ns, *rw.tls_config);
  if (rw.basic_auth) {
    o["basic_auth"] =
        object{{"username", ctx.secret_value(ns, rw.basic_auth->username)},
               {"password_file", RenderContext::secret_path(ns, rw.basic_auth->password)}};
  }
  if (rw.oauth2) o["oauth2"] = oauth2_block(ctx, ns, *rw.oauth2);
  if (!rw.bearer_token.empty() || !rw.bearer_token_file.empty()) {
    object a{{"type", "Bearer"}};
    set_ne(a, "credentials", rw.bearer_token);
    set_ne(a, "credentials_file", rw.bearer_token_file);
    o["authorization"] = std::move(a);
  }
  if (rw.sigv4) {
    object s;
    set_ne(s, "region", rw.sigv4->region);
    set_ne(s, "profile", rw.sigv4->profile);
    set_ne(s, "role_arn", rw.sigv4->role_arn);
    if (rw.sigv4->access_key) s["access_key"] = ctx.secret_value(ns, rw.sigv4->access_key);
    if (rw.sigv4->secret_key) s["secret_key"] = ctx.secret_value(ns, rw.sigv4->secret_key);
    o["sigv4"] = std::move(s);
  }
  if (rw.queue_config) {
    const auto& q = *rw.queue_config;
    object qc;
    set_nz(qc, "capacity", static_cast<double>(q.capacity));
    set_nz(qc, "max_shards", static_cast<double>(q.max_shards));
    set_nz(qc, "min_shards", static_cast<double>(q.min_shards));
    set_nz(qc, "max_samples_per_send", static_cast<double>(q.max_samples_per_send));
    set_ne(qc, "batch_send_deadline", q.batch_send_deadline);
    set_ne(qc, "min_backoff", q.min_backoff);
    set_ne(qc, "max_backoff", q.max_backoff);
    // Fixed mode writes what Prometheus' remote write reads: retryOnRateLimit is
    // `retry_on_http_429`; maxRetries has no key (Prometheus retries until the sample
    // ages out) and is left out rather than written as a key that fails the file.
    if (ctx.fixed()) set_true(qc, "retry_on_http_429", q.retry_on_rate_limit);
    o["queue_config"] = std::move(qc);
  }
  if (rw.metadata_config) {
    object m{{"send", rw.metadata_config->send}};
    set_ne(m, "send_interval", rw.metadata_config->send_interval);
    o["metadata_config"] = std::move(m);
  }
  return o;
}

// ---- external labels, server ----------------------------------------------------------

object external_labels(const GrafanaAgent& agent, const std::optional<std::string>& name_override,
                       const StringMap& extra, const std::optional<std::string>* replica_name) {
  object o;
  const std::string cluster = name_override.value_or("cluster");
  if (!cluster.empty()) o[cluster] = agent.metadata.ns + "/" + agent.metadata.name;
  for (const auto& [k, v] : extra) o[k] = v;
  if (replica_name != nullptr) {
    const std::string replica = replica_name->value_or("__replica__");
    if (!replica.empty()) o[replica] = "replica-$(STATEFULSET_ORDINAL_NUMBER)";
  }
  return o;
}

object server_block(const GrafanaAgent& agent) {
  object o;
  set_ne(o, "log_level", agent.spec.log_level);
  set_ne(o, "log_format", agent.spec.log_format);
  return o;
}

// ---- additional scrape configs --------------------------------------------------------

void append_additional_scrape_configs(RenderContext& ctx, std::string_view ns,
                                      const std::optional<SecretKeySelector>& sel,
                                      const std::string& owner, array& out) {
  if (!sel) return;
  const value text = ctx.secret_value(ns, *sel);
  if (!text.is_string()) return;  // error recorded
  auto parsed = k8s::yaml::parse(text.get_string());
  const std::string where = owner + ": spec.additionalScrapeConfigs (Secret " + std::string(ns) +
                            "/" + sel->name + " key " + sel->key + ")";
  if (!parsed) {
    ctx.fail(where + ": not valid YAML: " + parsed.error().message);
    return;
  }
  if (parsed->is_null()) return;
  if (!parsed->is_array()) {
    ctx.fail(where + ": expected a YAML list of scrape configs, got " +
             std::string(parsed->is_object() ? "a mapping" : "a scalar"));
    return;
  }
  for (auto& item : parsed->get_array()) out.push_back(std::move(item));
}

// ---- selector rules ---------------------------------------------------------------------

void selector_rules(const LabelSelectorSpec& sel, std::string_view label_prefix,
                    std::string_view present_prefix, array& out) {
  for (const auto& [k, v] : sel.match_labels) {
    out.emplace_back(
        object{{"source_labels", array{std::string(label_prefix) + sanitize_label_name(k)}},
               {"regex", v},
               {"action", "keep"}});
  }
  for (const auto& e : sel.match_expressions) {
    std::string joined;
    for (std::size_t i = 0; i < e.values.size(); ++i) {
      if (i > 0) joined += '|';
      joined += e.values[i];
    }
    const std::string label = std::string(label_prefix) + sanitize_label_name(e.key);
    const std::string present = std::string(present_prefix) + sanitize_label_name(e.key);
    if (e.op == "In" || e.op == "NotIn") {
      object r{{"source_labels", array{label}}, {"action", e.op == "In" ? "keep" : "drop"}};
      set_ne(r, "regex", joined);
      out.emplace_back(std::move(r));
    } else if (e.op == "Exists" || e.op == "DoesNotExist") {
      out.emplace_back(object{{"source_labels", array{present}},
                              {"regex", "true"},
                              {"action", e.op == "Exists" ? "keep" : "drop"}});
    }
  }
}

namespace {

// Compat::fixed: integral numbers print as integers (no `1e+06`).
void integers_as_integers(value& v) {
  if (v.is_double()) {
    const double d = v.get_double();
    if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.0e15) {
      v = static_cast<std::int64_t>(d);
    }
  } else if (v.is_object()) {
    for (auto& kv : v.get_object()) integers_as_integers(kv.value());
  } else if (v.is_array()) {
    for (auto& e : v.get_array()) integers_as_integers(e);
  }
}

}  // namespace
}  // namespace detail

void null_trim(boost::json::value& v) {
  if (v.is_object()) {
    auto& o = v.get_object();
    for (auto it = o.begin(); it != o.end();) {
      if (it->value().is_null()) {
        it = o.erase(it);
      } else {
        null_trim(it->value());
        ++it;
      }
    }
  } else if (v.is_array()) {
    auto& a = v.get_array();
    for (auto it = a.begin(); it != a.end();) {
      if (it->is_null()) {
        it = a.erase(it);
      } else {
        null_trim(*it);
        ++it;
      }
    }
  } else if (v.is_int64()) {
    v = static_cast<double>(v.get_int64());
  } else if (v.is_uint64()) {
    v = static_cast<double>(v.get_uint64());
  }
}

namespace {

k8s::yaml::EmitOptions emit_options(const Options& options) {
  k8s::yaml::EmitOptions eo;
  eo.indent = 4;
  eo.numbers = options.compat == Compat::fixed ? k8s::yaml::NumberStyle::exact
                                               : k8s::yaml::NumberStyle::go_float64;
  // The agent runs with -config.expand-env: a value the expansion would change is
  // written so that the agent reads it as given (README, What the operator validates).
  eo.escape_env_expansion = true;
  return eo;
}

void prepare(boost::json::value& tree, const Options& options) {
  null_trim(tree);
  if (options.compat == Compat::fixed) detail::integers_as_integers(tree);
}

}  // namespace

std::string emit_config(boost::json::value tree, const Options& options) {
  prepare(tree, options);
  std::string out = k8s::yaml::emit(tree, emit_options(options));
  out += '\n';
  return out;
}

ConfigText emit_config_text(boost::json::value tree, const Options& options,
                            std::vector<std::shared_ptr<const MemberText>> members) {
  prepare(tree, options);
  std::vector<int> columns;
  columns.reserve(members.size());
  for (const auto& m : members) columns.push_back(m ? m->column() : -1);
  k8s::yaml::EmitOptions eo = emit_options(options);
  eo.splice_columns = &columns;
  ConfigText out{k8s::yaml::emit_spliced(tree, eo), std::move(members)};
  out.skeleton.text += '\n';
  return out;
}

std::shared_ptr<const MemberText> emit_scrape_configs(boost::json::array configs,
                                                      const Options& options) {
  boost::json::value v(std::move(configs));
  prepare(v, options);
  return std::make_shared<MemberText>(
      k8s::yaml::emit_items(v.get_array(), kScrapeConfigColumn, emit_options(options)),
      kScrapeConfigColumn);
}

}  // namespace aop::agent
