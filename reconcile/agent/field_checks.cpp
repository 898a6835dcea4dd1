// The validate stage's checks; see field_checks.hpp. Each kind is walked field by field
// with a Checker, so every complaint carries the JSON path of its field.
#include "reconcile/agent/field_checks.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <boost/json.hpp>

#include "k8s/duration.hpp"
#include "k8s/yaml.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/sanitize.hpp"
#include "reconcile/agent/validate_integrations.hpp"
#include "reconcile/validation/durations.hpp"
#include "reconcile/validation/kubernetes.hpp"
#include "reconcile/validation/loki.hpp"
#include "reconcile/validation/prometheus.hpp"
#include "reconcile/validation/regex.hpp"
#include "reconcile/validation/text.hpp"
#include "reconcile/validation/url.hpp"

namespace aop::agent {

namespace json = boost::json;
using namespace aop::validation;

namespace {

// Prometheus' default global scrape interval (the agent keeps it).
constexpr std::chrono::milliseconds kDefaultScrapeInterval = std::chrono::minutes(1);

std::vector<Problem> to_problems(Kind kind, const ObjectMeta& m, Checker& c) {
  std::vector<Problem> out;
  for (auto& v : c.take()) {
    out.push_back(make_problem(kind, {m.ns, m.name}, std::move(v.field), std::move(v.message),
                               v.warning ? Severity::warning : Severity::error));
  }
  return out;
}

// ---- text -------------------------------------------------------------------------------

// A value written into the configuration on one line.
void line(Checker& c, std::string_view field, std::string_view v) {
  if (v.empty()) return;
  if (c.check(field, check_single_line(v))) return;
  c.check(field, check_no_reloader_reference(v));
}

// A value that may span lines (templates, expressions).
void text(Checker& c, std::string_view field, std::string_view v) {
  if (v.empty()) return;
  if (c.check(field, check_text(v))) return;
  c.check(field, check_no_reloader_reference(v));
}

// An absolute path inside the agent container.
void file_path(Checker& c, std::string_view field, std::string_view v) {
  if (v.empty()) return;
  line(c, field, v);
  if (v.front() != '/') {
    c.check(field, "the path " + describe(v) + " must be absolute (start with /)");
  }
}

// Every string inside verbatim JSON (Integration configs, additional scrape configs).
void strings_in(Checker& c, const json::value& v, int depth = 0) {
  if (depth > 64) return;  // parsed with the YAML depth limit already
  if (v.is_string()) {
    text(c, "", v.get_string());
  } else if (v.is_array()) {
    const auto& a = v.get_array();
    for (std::size_t i = 0; i < a.size(); ++i) {
      const auto s = c.index(i);
      strings_in(c, a[i], depth + 1);
    }
  } else if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      const auto s = c.key(kv.key());
      text(c, "", kv.key());
      strings_in(c, kv.value(), depth + 1);
    }
  }
}

// ---- shared value types -------------------------------------------------------------------

// Keys of Secret and ConfigMap data: [-._a-zA-Z0-9]+, at most 253 characters.
Complaint check_data_key(std::string_view key) {
  const bool ok =
      !key.empty() && key.size() <= 253 && std::all_of(key.begin(), key.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               ch == '-' || ch == '_' || ch == '.';
      });
  if (!ok) {
    return "key " + describe(key) +
           " is not a valid Secret/ConfigMap key: letters, digits, '-', '_' and '.'";
  }
  return std::nullopt;
}

// `value_held`: upstream's struct member held by value (BasicAuth username/password,
// bearerTokenSecret, clientSecret), which is unset when both name and key are empty.
void key_selector(Checker& c, std::string_view field, const SecretKeySelector& s,
                  std::string_view what, bool value_held) {
  if (value_held && s.name.empty() && s.key.empty()) return;
  const auto f = c.field(field);
  if (s.name.empty()) {
    c.check("name", "the name of the " + std::string(what) + " is required");
  } else {
    c.check("name", check_dns_subdomain(s.name));
  }
  if (s.key.empty()) {
    c.check("key", "the key in the " + std::string(what) + " is required");
  } else {
    c.check("key", check_data_key(s.key));
  }
}

void opt_key_selector(Checker& c, std::string_view field, const std::optional<SecretKeySelector>& s,
                      std::string_view what) {
  if (s) key_selector(c, field, *s, what, false);
}

void secret_or_config_map(Checker& c, std::string_view field, const SecretOrConfigMap& s) {
  if (s.secret && s.config_map) {
    c.check(field, "set either secret or configMap, not both");
    return;
  }
  const auto f = c.field(field);
  opt_key_selector(c, "secret", s.secret, "Secret");
  opt_key_selector(c, "configMap", s.config_map, "ConfigMap");
}

void tls(Checker& c, const std::optional<TLSConfig>& t) {
  if (!t) return;
  const auto f = c.field("tlsConfig");
  secret_or_config_map(c, "ca", t->ca);
  secret_or_config_map(c, "cert", t->cert);
  opt_key_selector(c, "keySecret", t->key_secret, "Secret");
  line(c, "serverName", t->server_name);
  file_path(c, "caFile", t->ca_file);
  file_path(c, "certFile", t->cert_file);
  file_path(c, "keyFile", t->key_file);
  const bool cert = t->cert.secret || t->cert.config_map || !t->cert_file.empty();
  const bool key = t->key_secret || !t->key_file.empty();
  if (cert && !key) {
    c.check("keySecret",
            "a client certificate is set without a client key; set keySecret (or "
            "keyFile) too, or remove the certificate");
  } else if (key && !cert) {
    c.check("cert",
            "a client key is set without a client certificate; set cert (or certFile) "
            "too, or remove the key");
  }
}

void basic_auth(Checker& c, const std::optional<BasicAuth>& b) {
  if (!b) return;
  const auto f = c.field("basicAuth");
  if (b->username.name.empty() && b->username.key.empty()) {
    c.check("username", "basicAuth needs a username (a Secret name and key)");
  }
  key_selector(c, "username", b->username, "Secret", true);
  key_selector(c, "password", b->password, "Secret", true);
}

void oauth2(Checker& c, const std::optional<OAuth2>& o) {
  if (!o) return;
  const auto f = c.field("oauth2");
  c.check("tokenUrl", check_url(o->token_url));
  if (!o->client_id.secret && !o->client_id.config_map) {
    c.check("clientId", "oauth2 needs a clientId from a Secret or ConfigMap");
  }
  secret_or_config_map(c, "clientId", o->client_id);
  if (o->client_secret.name.empty() && o->client_secret.key.empty()) {
    c.check("clientSecret", "oauth2 needs a clientSecret (a Secret name and key)");
  }
  key_selector(c, "clientSecret", o->client_secret, "Secret", true);
  if (o->scopes) {
    for (std::size_t i = 0; i < o->scopes->size(); ++i) {
      line(c, "scopes[" + std::to_string(i) + "]", (*o->scopes)[i]);
    }
  }
  if (o->endpoint_params) {
    const auto p = c.field("endpointParams");
    for (const auto& [k, v] : *o->endpoint_params) {
      const auto s = c.key(k);
      line(c, "", k);
      line(c, "", v);
    }
  }
}

void authorization(Checker& c, const std::optional<Authorization>& a) {
  if (!a) return;
  const auto f = c.field("authorization");
  line(c, "type", a->type);
  if (!a->type.empty() && (a->type == "Basic" || a->type == "basic")) {
    c.check("type", "authorization type Basic is not supported; use basicAuth");
  }
  opt_key_selector(c, "credentials", a->credentials, "Secret");
  file_path(c, "credentialsFile", a->credentials_file);
}

// Checks of a block the upstream-compatible output does not render (endpoint and Probe
// `oauth2` and `authorization`): what they find is reported as a warning, because the
// agent never sees the block unless --agent-compat=fixed.
template <class Fn>
void unrendered(Checker& c, Fn&& fn) {
  Checker sub(c.path());
  fn(sub);
  for (auto& v : sub.take()) {
    c.add(std::move(v.field), v.message + " (not rendered unless --agent-compat=fixed)", true);
  }
}

RelabelRule rule_of(const RelabelConfig& r) {
  return RelabelRule{r.source_labels, r.separator,   r.target_label, r.regex,
                     r.modulus,       r.replacement, r.action};
}

void relabels(Checker& c, std::string_view field, const std::vector<RelabelConfig>& list) {
  const auto f = c.field(field);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto s = c.index(i);
    const auto& r = list[i];
    check_relabel_rule(c, rule_of(r));
    for (const auto& [name, v] :
         {std::pair<const char*, const std::string*>{"separator", &r.separator},
          {"targetLabel", &r.target_label},
          {"regex", &r.regex},
          {"replacement", &r.replacement}}) {
      if (!v->empty()) c.check(name, check_no_reloader_reference(*v));
    }
    if (r.modulus > kMaxScrapeLimit) {
      c.check("modulus", "the modulus " + std::to_string(r.modulus) + " is above 2^53");
    }
  }
}

void label_selector(Checker& c, std::string_view field, const LabelSelectorSpec& s) {
  const auto f = c.field(field);
  check_label_selector(c, s.raw);
}

void namespace_selector(Checker& c, const NamespaceSelector& s) {
  const auto f = c.field("namespaceSelector");
  for (std::size_t i = 0; i < s.match_names.size(); ++i) {
    c.check("matchNames[" + std::to_string(i) + "]", check_dns_label(s.match_names[i]));
  }
}

// A Kubernetes label key that becomes a Prometheus label name after sanitization.
void label_key_for_prometheus(Checker& c, std::string_view field, std::string_view key) {
  if (key.empty()) return;
  if (c.check(field, check_qualified_name(key))) return;
  const std::string sanitized = sanitize_label_name(key);
  if (!is_label_name(sanitized)) {
    c.check(field, "the label " + describe(key) + " becomes the Prometheus label " +
                       describe(sanitized) +
                       ", which is not a valid label name (it must not start with a digit)");
  }
}

std::optional<std::chrono::milliseconds> duration_of(std::string_view text) {
  if (text.empty()) return std::nullopt;
  auto d = parse_prometheus_duration(text);
  if (!d || d->count() == 0) return std::nullopt;
  return *d;
}

// The global scrape interval the agent uses when a scrape config has none.
std::chrono::milliseconds global_interval(const GrafanaAgent& agent) {
  return duration_of(agent.spec.metrics.scrape_interval).value_or(kDefaultScrapeInterval);
}

// interval and scrapeTimeout of a scrape config: Prometheus durations, and the timeout
// (when set) not above the interval in effect, as Prometheus refuses otherwise.
void interval_and_timeout(Checker& c, const std::string& interval, const std::string& timeout,
                          const GrafanaAgent& agent) {
  const bool interval_ok = !c.check("interval", check_prometheus_duration(interval));
  const bool timeout_ok = !c.check("scrapeTimeout", check_prometheus_duration(timeout));
  if (!interval_ok || !timeout_ok) return;
  const auto t = duration_of(timeout);
  if (!t) return;
  const auto own = duration_of(interval);
  const auto effective = own.value_or(global_interval(agent));
  if (*t > effective) {
    c.check("scrapeTimeout",
            "scrapeTimeout " + describe(timeout) + " is longer than the scrape interval " +
                (own ? describe(interval)
                     : "(" + std::to_string(effective.count() / 1000) +
                           "s, the GrafanaAgent's spec.metrics.scrapeInterval or Prometheus' "
                           "default)") +
                "; Prometheus refuses a timeout above the interval");
  }
}

void bounded(Checker& c, std::string_view field, std::int64_t v, std::int64_t lo, std::int64_t hi,
             std::string_view why = {}) {
  if (v >= lo && v <= hi) return;
  std::string m = std::to_string(v) + " is out of range: it must be between " + std::to_string(lo) +
                  " and " + std::to_string(hi);
  if (!why.empty()) m += " (" + std::string(why) + ")";
  c.check(field, m);
}

void scrape_limit(Checker& c, std::string_view field, std::uint64_t v) {
  if (v > kMaxScrapeLimit) {
    c.check(field, std::to_string(v) +
                       " is too large: the configuration holds it as a float64, exact up to "
                       "9007199254740992");
  }
}

// ---- remote write and Loki clients ------------------------------------------------------

// Prometheus' HTTP client configuration: at most one authentication method.
void one_auth(Checker& c, bool basic, bool oauth, bool bearer, bool sigv4) {
  const int n = static_cast<int>(basic) + static_cast<int>(oauth) + static_cast<int>(bearer) +
                static_cast<int>(sigv4);
  if (n > 1) {
    c.check(std::string_view(), "at most one of basicAuth, oauth2, bearerToken/bearerTokenFile" +
                                    std::string(sigv4 ? " and sigv4" : "") +
                                    " may be set; Prometheus refuses several");
  }
}

void remote_writes(Checker& c, std::string_view field, const std::vector<RemoteWriteSpec>& list) {
  const auto f = c.field(field);
  std::set<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto s = c.index(i);
    const auto& rw = list[i];
    c.check("url", check_url(rw.url));
    line(c, "name", rw.name);
    if (!rw.name.empty() && !names.insert(rw.name).second) {
      c.check("name", "remote write name " + describe(rw.name) +
                          " is used twice in this list; names must be unique");
    }
    c.check("remoteTimeout", check_prometheus_duration(rw.remote_timeout));
    if (rw.headers) {
      const auto h = c.field("headers");
      for (const auto& [k, v] : *rw.headers) {
        const auto ks = c.key(k);
        if (!c.check(check_remote_write_header(k, v))) c.check(check_no_reloader_reference(v));
      }
    }
    relabels(c, "writeRelabelConfigs", rw.write_relabel_configs);
    basic_auth(c, rw.basic_auth);
    oauth2(c, rw.oauth2);
    if (!rw.bearer_token.empty()) {
      if (!c.check("bearerToken", check_header_value(rw.bearer_token))) {
        c.check("bearerToken", check_no_reloader_reference(rw.bearer_token));
      }
    }
    file_path(c, "bearerTokenFile", rw.bearer_token_file);
    if (!rw.bearer_token.empty() && !rw.bearer_token_file.empty()) {
      c.check("bearerTokenFile",
              "set bearerToken or bearerTokenFile, not both; Prometheus "
              "refuses credentials together with credentials_file");
    }
    if (rw.sigv4) {
      const auto sv = c.field("sigv4");
      line(c, "region", rw.sigv4->region);
      line(c, "profile", rw.sigv4->profile);
      line(c, "roleARN", rw.sigv4->role_arn);
      opt_key_selector(c, "accessKey", rw.sigv4->access_key, "Secret");
      opt_key_selector(c, "secretKey", rw.sigv4->secret_key, "Secret");
      if (rw.sigv4->access_key.has_value() != rw.sigv4->secret_key.has_value()) {
        c.check(rw.sigv4->access_key ? "secretKey" : "accessKey",
                "sigv4 needs both accessKey and secretKey, or neither");
      }
    }
    tls(c, rw.tls_config);
    if (!rw.proxy_url.empty())
      c.check("proxyUrl", check_url(rw.proxy_url, {.schemes = kProxySchemes}));
    one_auth(c, rw.basic_auth.has_value(), rw.oauth2.has_value(),
             !rw.bearer_token.empty() || !rw.bearer_token_file.empty(), rw.sigv4.has_value());
    if (rw.queue_config) {
      const auto q = c.field("queueConfig");
      const auto& qc = *rw.queue_config;
      bounded(c, "capacity", qc.capacity, 0, kMaxQueueCapacity);
      bounded(c, "minShards", qc.min_shards, 0, kMaxQueueShards);
      bounded(c, "maxShards", qc.max_shards, 0, kMaxQueueShards);
      bounded(c, "maxSamplesPerSend", qc.max_samples_per_send, 0, kMaxSamplesPerSend);
      bounded(c, "maxRetries", qc.max_retries, 0, 1'000'000);
      if (qc.min_shards > 0 && qc.max_shards > 0 && qc.min_shards > qc.max_shards) {
        c.check("minShards", "minShards (" + std::to_string(qc.min_shards) +
                                 ") is above maxShards (" + std::to_string(qc.max_shards) + ")");
      }
      c.check("batchSendDeadline", check_prometheus_duration(qc.batch_send_deadline));
      c.check("minBackoff", check_prometheus_duration(qc.min_backoff));
      c.check("maxBackoff", check_prometheus_duration(qc.max_backoff));
    }
    if (rw.metadata_config) {
      const auto m = c.field("metadataConfig");
      c.check("sendInterval", check_prometheus_duration(rw.metadata_config->send_interval));
    }
  }
}

void external_labels(Checker& c, std::string_view field, const StringMap& labels) {
  const auto f = c.field(field);
  for (const auto& [k, v] : labels) {
    const auto s = c.key(k);
    if (c.check(check_label_name(k))) continue;
    if (!c.check(check_label_value(v))) c.check(check_no_reloader_reference(v));
  }
}

void logs_clients(Checker& c, std::string_view field, const std::vector<LogsClientSpec>& list) {
  const auto f = c.field(field);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto s = c.index(i);
    const auto& cl = list[i];
    c.check("url", check_url(cl.url));
    if (!cl.tenant_id.empty() && !c.check("tenantId", check_header_value(cl.tenant_id))) {
      line(c, "tenantId", cl.tenant_id);
    }
    c.check("batchWait", check_go_duration(cl.batch_wait));
    bounded(c, "batchSize", cl.batch_size, 0, kMaxLogsBatchSize);
    basic_auth(c, cl.basic_auth);
    oauth2(c, cl.oauth2);
    if (!cl.bearer_token.empty() && !c.check("bearerToken", check_header_value(cl.bearer_token))) {
      c.check("bearerToken", check_no_reloader_reference(cl.bearer_token));
    }
    file_path(c, "bearerTokenFile", cl.bearer_token_file);
    if (!cl.bearer_token.empty() && !cl.bearer_token_file.empty()) {
      c.check("bearerTokenFile", "set bearerToken or bearerTokenFile, not both");
    }
    if (!cl.proxy_url.empty())
      c.check("proxyUrl", check_url(cl.proxy_url, {.schemes = kProxySchemes}));
    tls(c, cl.tls_config);
    one_auth(c, cl.basic_auth.has_value(), cl.oauth2.has_value(),
             !cl.bearer_token.empty() || !cl.bearer_token_file.empty(), false);
    if (cl.backoff_config) {
      const auto b = c.field("backoffConfig");
      c.check("minPeriod", check_go_duration(cl.backoff_config->min_period));
      c.check("maxPeriod", check_go_duration(cl.backoff_config->max_period));
      bounded(c, "maxRetries", cl.backoff_config->max_retries, 0, 1'000'000);
    }
    external_labels(c, "externalLabels", cl.external_labels);
    c.check("timeout", check_go_duration(cl.timeout));
  }
}

// ---- the GrafanaAgent's pod template ----------------------------------------------------

// Volume names and mount paths the operator generates in every agent pod.
const std::set<std::string, std::less<>>& generated_mount_paths() {
  static const std::set<std::string, std::less<>> paths = {"/var/lib/grafana-agent/config-in",
                                                           "/var/lib/grafana-agent/config",
                                                           "/var/lib/grafana-agent/secrets",
                                                           "/var/lib/grafana-agent/data",
                                                           "/var/log",
                                                           "/var/lib/docker/containers",
                                                           "/etc/grafana-agent/integrations"};
  return paths;
}

void pod_template(Checker& c, const GrafanaAgent& a) {
  const auto& s = a.spec;
  const std::string& name = a.metadata.name;
  // Volumes of the pod: generated ones first, then the user's.
  std::set<std::string, std::less<>> volumes = {
      "config", "config-out", "secrets", name + "-wal",
      "varlog", "dockerlogs", "data",    name + "-integrations-secrets"};
  if (s.storage && !s.storage->volume_claim_template_name.empty()) {
    volumes.insert(s.storage->volume_claim_template_name);
  }
  // A Secret or ConfigMap can only have a subdomain name; the API server accepts the pod,
  // but it would never start.
  for (std::size_t i = 0; i < s.secrets.size(); ++i) {
    if (c.warn("secrets[" + std::to_string(i) + "]", check_dns_subdomain(s.secrets[i]))) continue;
    if (!volumes.insert(sanitize_volume_name("secret-" + s.secrets[i])).second) {
      c.check("secrets[" + std::to_string(i) + "]",
              "the volume name for Secret " + describe(s.secrets[i]) + " (" +
                  sanitize_volume_name("secret-" + s.secrets[i]) +
                  ") is already used by another volume of the pod");
    }
  }
  for (std::size_t i = 0; i < s.config_maps.size(); ++i) {
    if (c.warn("configMaps[" + std::to_string(i) + "]", check_dns_subdomain(s.config_maps[i]))) {
      continue;
    }
    if (!volumes.insert(sanitize_volume_name("configmap-" + s.config_maps[i])).second) {
      c.check("configMaps[" + std::to_string(i) + "]",
              "the volume name for ConfigMap " + describe(s.config_maps[i]) +
                  " is already used by another volume of the pod");
    }
  }
  {
    const auto f = c.field("volumes");
    for (std::size_t i = 0; i < s.volumes.size(); ++i) {
      const auto is = c.index(i);
      check_volume(c, s.volumes[i]);
      const auto* v =
          s.volumes[i].is_object() ? s.volumes[i].get_object().if_contains("name") : nullptr;
      if (v != nullptr && v->is_string() && !v->get_string().empty() &&
          !volumes.insert(std::string(v->get_string())).second) {
        c.check("name", "Duplicate value: " + describe(v->get_string()) +
                            " (the operator's own volumes are config, config-out, secrets, "
                            "the WAL and secret-/configmap- volumes)");
      }
    }
  }
  std::set<std::string, std::less<>> paths = generated_mount_paths();
  for (const auto& sec : s.secrets) paths.insert("/var/lib/grafana-agent/extra-secrets/" + sec);
  for (const auto& cm : s.config_maps) {
    paths.insert("/var/lib/grafana-agent/extra-configmaps/" + cm);
  }
  {
    const auto f = c.field("volumeMounts");
    std::set<std::string, std::less<>> taken = paths;
    for (std::size_t i = 0; i < s.volume_mounts.size(); ++i) {
      const auto is = c.index(i);
      check_volume_mount(c, s.volume_mounts[i], volumes, taken);
    }
    paths = taken;
  }
  std::set<std::string> container_names = {"config-reloader", "grafana-agent"};
  for (const char* list_name : {"containers", "initContainers"}) {
    const bool init = std::string_view(list_name) == "initContainers";
    const auto& list = init ? s.init_containers : s.containers;
    const auto f = c.field(list_name);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto is = c.index(i);
      std::string cname;
      if (list[i].is_object()) {
        if (const auto* n = list[i].get_object().if_contains("name");
            n != nullptr && n->is_string()) {
          cname = std::string(n->get_string());
        }
      }
      // A container named like a generated one is merged into it (it has an image, and
      // a mount with a generated mount's path replaces that mount: strategic merge by
      // mountPath); any other needs its own image.
      const bool merged = !init && (cname == "config-reloader" || cname == "grafana-agent");
      check_container(c, list[i], !merged, volumes, {});
      if (!merged && !cname.empty() && !container_names.insert(cname).second) {
        c.check("name", "Duplicate value: " + describe(cname) +
                            " (container names are unique "
                            "across containers and init "
                            "containers)");
      }
    }
  }
  {
    const auto f = c.field("imagePullSecrets");
    for (std::size_t i = 0; i < s.image_pull_secrets.size(); ++i) {
      const auto& v = s.image_pull_secrets[i];
      const auto* n = v.is_object() ? v.get_object().if_contains("name") : nullptr;
      if (n == nullptr || !n->is_string() || n->get_string().empty()) {
        c.check("[" + std::to_string(i) + "].name", "Required value");
      } else {
        c.check("[" + std::to_string(i) + "].name", check_dns_subdomain(n->get_string()));
      }
    }
  }
  if (s.resources) {
    const auto f = c.field("resources");
    check_resources(c, json::value(*s.resources));
  }
  if (s.node_selector) {
    const auto f = c.field("nodeSelector");
    check_node_selector(c, json::value(*s.node_selector));
  }
  if (!s.service_account_name.empty()) {
    c.check("serviceAccountName", check_dns_subdomain(s.service_account_name));
  }
  if (s.affinity) {
    const auto f = c.field("affinity");
    check_affinity(c, json::value(*s.affinity));
  }
  {
    const auto f = c.field("tolerations");
    for (std::size_t i = 0; i < s.tolerations.size(); ++i) {
      const auto is = c.index(i);
      check_toleration(c, s.tolerations[i]);
    }
  }
  {
    const auto f = c.field("topologySpreadConstraints");
    for (std::size_t i = 0; i < s.topology_spread_constraints.size(); ++i) {
      const auto is = c.index(i);
      check_topology_spread_constraint(c, s.topology_spread_constraints[i]);
    }
  }
  if (s.security_context) {
    const auto f = c.field("securityContext");
    check_pod_security_context(c, json::value(*s.security_context));
  }
  if (!s.priority_class_name.empty()) {
    c.check("priorityClassName", check_dns_subdomain(s.priority_class_name));
  }
  if (s.runtime_class_name && !s.runtime_class_name->empty()) {
    c.check("runtimeClassName", check_dns_subdomain(*s.runtime_class_name));
  }
  if (s.pod_metadata) {
    const auto f = c.field("podMetadata");
    json::object labels;
    for (const auto& [k, v] : s.pod_metadata->labels) labels[k] = v;
    json::object annotations;
    for (const auto& [k, v] : s.pod_metadata->annotations) annotations[k] = v;
    {
      const auto l = c.field("labels");
      check_labels(c, labels);
    }
    const auto an = c.field("annotations");
    check_annotations(c, annotations);
  }
  if (s.storage) {
    const auto f = c.field("storage");
    if (s.storage->empty_dir) {
      const auto e = c.field("emptyDir");
      if (const auto* size = s.storage->empty_dir->if_contains("sizeLimit");
          size != nullptr && size->is_string()) {
        c.check("sizeLimit", check_quantity(size->get_string()));
      }
    } else if (s.storage->volume_claim_template) {
      const auto v = c.field("volumeClaimTemplate");
      check_pvc_template(c, json::value(*s.storage->volume_claim_template));
    }
  }
  if (!s.port_name.empty()) c.check("portName", check_port_name(s.port_name));
  if (!s.version.empty()) c.check("version", check_image_tag(s.version));
  if (!s.config_reloader_version.empty()) {
    c.check("configReloaderVersion", check_image_tag(s.config_reloader_version));
  }
  if (s.image && !s.image->empty()) c.check("image", check_image(*s.image));
  if (s.config_reloader_image && !s.config_reloader_image->empty()) {
    c.check("configReloaderImage", check_image(*s.config_reloader_image));
  }
}

// ---- pipeline stages ----------------------------------------------------------------------

void stages(Checker& c, const std::vector<PipelineStageSpec>& list, int depth);

// The stage kinds a PipelineStageSpec may hold, by their CRD names.
constexpr std::array<std::string_view, 18> kStageKinds = {
    "cri",    "docker", "drop",    "json",     "labelAllow", "labelDrop",
    "labels", "limit",  "match",   "metrics",  "multiline",  "output",
    "pack",   "regex",  "replace", "template", "tenant",     "timestamp"};

std::size_t members_set(const PipelineStageSpec& s) {
  return static_cast<std::size_t>(s.cri) + static_cast<std::size_t>(s.docker) +
         static_cast<std::size_t>(s.drop.has_value()) +
         static_cast<std::size_t>(s.json.has_value()) +
         static_cast<std::size_t>(!s.label_allow.empty()) +
         static_cast<std::size_t>(!s.label_drop.empty()) +
         static_cast<std::size_t>(!s.labels.empty()) +
         static_cast<std::size_t>(s.limit.has_value()) +
         static_cast<std::size_t>(s.match.has_value()) +
         static_cast<std::size_t>(!s.metrics.empty()) +
         static_cast<std::size_t>(s.multiline.has_value()) +
         static_cast<std::size_t>(s.output_source.has_value()) +
         static_cast<std::size_t>(s.pack.has_value()) +
         static_cast<std::size_t>(s.regex.has_value()) +
         static_cast<std::size_t>(s.replace.has_value()) +
         static_cast<std::size_t>(s.templ.has_value()) +
         static_cast<std::size_t>(s.tenant.has_value()) +
         static_cast<std::size_t>(s.timestamp.has_value());
}

void stage(Checker& c, const PipelineStageSpec& s, int depth) {
  const std::size_t n = members_set(s);
  if (n > 1) {
    c.check(std::string_view(), "a pipeline stage sets " + std::to_string(n) +
                                    " stage kinds; the agent accepts exactly one per list item "
                                    "(split them into separate items)");
  } else if (n == 0) {
    c.warn(std::string_view(), "an empty pipeline stage does nothing");
  }
  if (s.drop) {
    const auto f = c.field("drop");
    const auto& d = *s.drop;
    line(c, "source", d.source);
    if (!d.expression.empty()) {
      c.check("expression", check_regex(d.expression, RegexUse::as_written));
    }
    line(c, "value", d.value);
    c.check("olderThan", check_go_duration(d.older_than));
    c.check("longerThan", check_byte_size(d.longer_than));
    line(c, "dropCounterReason", d.drop_counter_reason);
    if (d.source.empty() && d.expression.empty() && d.older_than.empty() && d.longer_than.empty()) {
      c.check(std::string_view(),
              "the drop stage needs at least one of source, expression, "
              "olderThan or longerThan");
    }
    if (!d.value.empty() && !d.expression.empty()) {
      c.check("value", "the drop stage takes value or expression, not both");
    }
    if (!d.value.empty() && d.source.empty()) {
      c.check("value", "the drop stage's value needs a source");
    }
  }
  if (s.json) {
    const auto f = c.field("json");
    line(c, "source", s.json->source);
    if (s.json->expressions) {
      const auto e = c.field("expressions");
      for (const auto& [k, v] : *s.json->expressions) {
        const auto ks = c.key(k);
        line(c, "", k);
        line(c, "", v);
      }
    }
  }
  for (const auto& [member, list] :
       {std::pair<const char*, const std::vector<std::string>*>{"labelAllow", &s.label_allow},
        {"labelDrop", &s.label_drop}}) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      c.check(std::string(member) + "[" + std::to_string(i) + "]", check_label_name((*list)[i]));
    }
  }
  {
    const auto f = c.field("labels");
    for (const auto& [k, v] : s.labels) {
      const auto ks = c.key(k);
      if (!c.check(check_label_name(k))) line(c, "", v);
    }
  }
  if (s.limit) {
    const auto f = c.field("limit");
    if (s.limit->rate <= 0)
      c.check("rate", "the limit stage needs a rate above 0 (lines per second)");
    if (s.limit->burst <= 0) c.check("burst", "the limit stage needs a burst above 0");
  }
  if (s.match) {
    const auto f = c.field("match");
    const auto& m = *s.match;
    if (m.selector.empty()) {
      c.check("selector", "the match stage needs a selector");
    } else if (!c.check("selector", check_logql_selector(m.selector))) {
      c.check("selector", check_no_reloader_reference(m.selector));
    }
    line(c, "pipelineName", m.pipeline_name);
    line(c, "dropCounterReason", m.drop_counter_reason);
    if (!is_one_of(m.action, {"", "keep", "drop"})) {
      c.check("action", "the match stage's action " + describe(m.action) + " is not keep or drop");
    }
    if (!m.stages.empty()) {
      // The nested stages are YAML text, parsed with the YAML limits.
      auto parsed = k8s::yaml::parse(m.stages);
      if (!parsed) {
        c.check("stages", parsed.error().message);
      } else if ((parsed->is_null() || (parsed->is_array() && parsed->get_array().empty())) &&
                 m.action != "drop") {
        c.check("stages", "a match stage that keeps lines needs stages (or set action: drop)");
      } else if (!parsed->is_null() && !parsed->is_array()) {
        c.check("stages", "expected a YAML list of pipeline stages, got a " +
                              std::string(parsed->is_object() ? "mapping" : "scalar"));
      } else if (parsed->is_array()) {
        const auto& arr = parsed->get_array();
        {
          const auto st = c.field("stages");
          for (std::size_t i = 0; i < arr.size(); ++i) {
            if (!arr[i].is_object()) continue;
            for (const auto& kv : arr[i].get_object()) {
              if (!is_one_of(kv.key(), kStageKinds)) {
                c.warn("[" + std::to_string(i) + "]",
                       "unknown stage kind " + describe(kv.key()) + " is ignored; use one of " +
                           list_of(kStageKinds) + " (the CRD's camelCase names)");
              }
            }
          }
        }
        auto nested = decode_pipeline_stages(*parsed, "");
        if (!nested) {
          // "[1].regex.expression: expected string, got array; ..." → field and message.
          std::string msg = nested.error().message;
          std::string sub;
          if (const auto colon = msg.find(": ");
              colon != std::string::npos && (msg.front() == '[' || msg.front() == '.')) {
            sub = msg.substr(0, colon);
            msg = msg.substr(colon + 2);
          }
          c.check("stages" + sub, msg);
        } else {
          if (m.action == "drop" && !nested->empty()) {
            c.check("stages", "a match stage that drops lines takes no stages");
          }
          const auto st = c.field("stages");
          if (depth > 8) {
            c.check("match stages are nested more than 8 levels deep");
          } else {
            stages(c, *nested, depth + 1);
          }
        }
      }
    } else if (m.action != "drop") {
      c.check("stages", "a match stage that keeps lines needs stages (or set action: drop)");
    }
  }
  if (!s.metrics.empty()) {
    const auto f = c.field("metrics");
    for (const auto& [name, m] : s.metrics) {
      const auto ks = c.key(name);
      c.check(check_metric_name(m.prefix + name));
      // promtail lower-cases both the type and the action before comparing them.
      const std::string type = ascii_lower(m.type);
      const std::string action = ascii_lower(m.action);
      if (!is_one_of(type, {"counter", "gauge", "histogram"})) {
        c.check("type", "metric type " + describe(m.type) + " is not Counter, Gauge or Histogram");
      } else if (type == "counter" && !is_one_of(action, {"inc", "add"})) {
        c.check("action", "a counter's action is inc or add, not " + describe(m.action));
      } else if (type == "gauge" && !is_one_of(action, {"set", "inc", "dec", "add", "sub"})) {
        c.check("action",
                "a gauge's action is set, inc, dec, add or sub, not " + describe(m.action));
      }
      line(c, "description", m.description);
      line(c, "source", m.source);
      line(c, "value", m.value);
      c.check("maxIdleDuration",
              check_go_duration(m.max_idle_duration, {.minimum = std::chrono::seconds(1)}));
      if (m.match_all.value_or(false) && !m.value.empty()) {
        c.check("matchAll", "matchAll and value cannot both be set");
      }
      if (m.count_entry_bytes.value_or(false) &&
          (!m.match_all.value_or(false) || action != "add")) {
        c.check("countEntryBytes", "countEntryBytes needs matchAll: true and action add");
      }
      double previous = -std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < m.buckets.size(); ++i) {
        boost::system::error_code ec;
        const json::value b = json::parse(m.buckets[i], ec);
        const std::string at = "buckets[" + std::to_string(i) + "]";
        if (ec || !b.is_number()) {
          c.check(at, "bucket " + describe(m.buckets[i]) + " is not a number");
          continue;
        }
        const double d = b.to_number<double>();
        if (d <= previous) {
          c.check(at, "buckets must be in increasing order");
        }
        previous = d;
      }
    }
  }
  if (s.multiline) {
    const auto f = c.field("multiline");
    if (s.multiline->first_line.empty()) {
      c.check("firstLine", "the multiline stage needs a firstLine expression");
    } else {
      c.check("firstLine", check_regex(s.multiline->first_line, RegexUse::as_written));
    }
    c.check("maxWaitTime", check_go_duration(s.multiline->max_wait_time));
    bounded(c, "maxLines", s.multiline->max_lines, 0, 1'000'000);
  }
  if (s.output_source) {
    if (s.output_source->empty()) {
      c.check("output.source", "the output stage needs a source");
    } else {
      line(c, "output.source", *s.output_source);
    }
  }
  if (s.pack) {
    const auto f = c.field("pack");
    if (s.pack->labels.empty())
      c.warn("labels",
             "the pack stage has no labels to pack (it only wraps "
             "the line in a JSON object)");
    for (std::size_t i = 0; i < s.pack->labels.size(); ++i) {
      c.check("labels[" + std::to_string(i) + "]", check_label_name(s.pack->labels[i]));
    }
  }
  if (s.regex) {
    const auto f = c.field("regex");
    line(c, "source", s.regex->source);
    if (s.regex->expression.empty()) {
      c.check("expression", "the regex stage needs an expression");
    } else if (!c.check("expression", check_regex(s.regex->expression, RegexUse::as_written))) {
      c.check("expression", check_no_reloader_reference(s.regex->expression));
    }
  }
  if (s.replace) {
    const auto f = c.field("replace");
    line(c, "source", s.replace->source);
    if (s.replace->expression.empty()) {
      c.check("expression", "the replace stage needs an expression");
    } else if (!c.check("expression", check_regex(s.replace->expression, RegexUse::as_written))) {
      c.check("expression", check_no_reloader_reference(s.replace->expression));
    }
    text(c, "replace", s.replace->replace);
  }
  if (s.templ) {
    const auto f = c.field("template");
    if (s.templ->source.empty()) c.check("source", "the template stage needs a source");
    line(c, "source", s.templ->source);
    if (s.templ->templ.empty()) {
      c.warn("template", "the template stage has an empty template (it sets the source to \"\")");
    } else if (!c.check("template", check_template_text(s.templ->templ))) {
      c.check("template", check_no_reloader_reference(s.templ->templ));
    }
  }
  if (s.tenant) {
    const auto f = c.field("tenant");
    const int set = static_cast<int>(!s.tenant->label.empty()) +
                    static_cast<int>(!s.tenant->source.empty()) +
                    static_cast<int>(!s.tenant->value.empty());
    if (set != 1) {
      c.check(std::string_view(), "the tenant stage needs exactly one of label, source or value");
    }
    line(c, "label", s.tenant->label);
    line(c, "source", s.tenant->source);
    line(c, "value", s.tenant->value);
  }
  if (s.timestamp) {
    const auto f = c.field("timestamp");
    const auto& t = *s.timestamp;
    if (t.source.empty()) c.check("source", "the timestamp stage needs a source");
    if (t.format.empty()) c.check("format", "the timestamp stage needs a format");
    line(c, "source", t.source);
    line(c, "format", t.format);
    for (std::size_t i = 0; i < t.fallback_formats.size(); ++i) {
      line(c, "fallbackFormats[" + std::to_string(i) + "]", t.fallback_formats[i]);
    }
    line(c, "location", t.location);
    if (!is_one_of(t.action_on_failure, {"", "fudge", "skip"})) {
      c.check("actionOnFailure",
              "actionOnFailure " + describe(t.action_on_failure) + " is not fudge or skip");
    }
  }
}

void stages(Checker& c, const std::vector<PipelineStageSpec>& list, int depth) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto s = c.index(i);
    stage(c, list[i], depth);
  }
}

// ---- monitors -----------------------------------------------------------------------------

void endpoint(Checker& c, const Endpoint& e, bool service_monitor, const GrafanaAgent& agent) {
  if (!e.port.empty()) {
    c.check("port", service_monitor ? check_dns_label(e.port) : check_port_name(e.port));
  }
  if (e.target_port) {
    if (e.target_port->is_string) {
      if (!e.target_port->string_value.empty()) {
        c.check("targetPort", check_port_name(e.target_port->string_value));
      }
    } else if (e.target_port->int_value != 0) {
      bounded(c, "targetPort", e.target_port->int_value, 1, 65535, "a port number");
    }
  }
  c.check("path", check_metrics_path(e.path));
  c.check("scheme", check_scheme(e.scheme));
  if (e.params) {
    const auto f = c.field("params");
    for (const auto& [k, vs] : *e.params) {
      const auto ks = c.key(k);
      line(c, "", k);
      for (std::size_t i = 0; i < vs.size(); ++i) line(c, "[" + std::to_string(i) + "]", vs[i]);
    }
  }
  interval_and_timeout(c, e.interval, e.scrape_timeout, agent);
  tls(c, e.tls_config);
  file_path(c, "bearerTokenFile", e.bearer_token_file);
  key_selector(c, "bearerTokenSecret", e.bearer_token_secret, "Secret", true);
  basic_auth(c, e.basic_auth);
  unrendered(c, [&](Checker& u) {
    oauth2(u, e.oauth2);
    authorization(u, e.authorization);
  });
  if (e.metric_relabelings) relabels(c, "metricRelabelings", *e.metric_relabelings);
  relabels(c, "relabelings", e.relabelings);
  if (e.proxy_url && !e.proxy_url->empty()) {
    c.check("proxyUrl", check_url(*e.proxy_url, {.schemes = kProxySchemes}));
  }
  one_auth(c, e.basic_auth.has_value(), false,
           !e.bearer_token_file.empty() || !e.bearer_token_secret.name.empty(), false);
  if (!e.bearer_token_file.empty() && !e.bearer_token_secret.name.empty()) {
    c.check("bearerTokenFile",
            "set bearerTokenFile or bearerTokenSecret, not both; Prometheus "
            "refuses bearer_token together with bearer_token_file");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::vector<Problem> check_grafana_agent(const GrafanaAgent& a) {
  Checker c;
  const auto spec = c.field("spec");
  const auto& s = a.spec;
  c.check("logLevel", check_log_level(s.log_level));
  c.check("logFormat", check_log_format(s.log_format));
  if (s.api_server) {
    const auto f = c.field("apiServer");
    c.check("host", check_url_or_host_port(s.api_server->host));
    basic_auth(c, s.api_server->basic_auth);
    if (!s.api_server->bearer_token.empty()) {
      c.check("bearerToken", check_header_value(s.api_server->bearer_token));
    }
    file_path(c, "bearerTokenFile", s.api_server->bearer_token_file);
    tls(c, s.api_server->tls_config);
    authorization(c, s.api_server->authorization);
    one_auth(c, s.api_server->basic_auth.has_value(), false,
             !s.api_server->bearer_token.empty() || !s.api_server->bearer_token_file.empty(),
             false);
  }
  pod_template(c, a);
  {
    const auto f = c.field("metrics");
    const auto& m = s.metrics;
    remote_writes(c, "remoteWrite", m.remote_write);
    const std::int64_t replicas = m.replicas.value_or(1);
    const std::int64_t shards = m.shards.value_or(1);
    // Negative values work upstream (replicas become 0, shards 1): reported, not refused.
    if (replicas < 0) {
      c.warn("replicas", std::to_string(replicas) + " is negative and treated as 0");
    } else {
      bounded(c, "replicas", replicas, 0, kMaxReplicas, "replicas of every metrics shard");
    }
    if (shards < 0) {
      c.warn("shards", std::to_string(shards) + " is negative and treated as 1");
    } else {
      bounded(c, "shards", shards, 0, kMaxShards, "0 and 1 both mean one shard");
    }
    if (replicas >= 0 && replicas <= kMaxReplicas && shards >= 0 && shards <= kMaxShards &&
        std::max<std::int64_t>(shards, 1) * replicas > kMaxMetricsPods) {
      c.check("shards", "shards × replicas is " +
                            std::to_string(std::max<std::int64_t>(shards, 1) * replicas) +
                            " metrics pods; at most " + std::to_string(kMaxMetricsPods) +
                            " per GrafanaAgent are allowed");
    }
    if (m.replica_external_label_name && !m.replica_external_label_name->empty()) {
      c.check("replicaExternalLabelName", check_label_name(*m.replica_external_label_name));
    }
    if (m.metrics_external_label_name && !m.metrics_external_label_name->empty()) {
      c.check("metricsExternalLabelName", check_label_name(*m.metrics_external_label_name));
    }
    const bool interval_ok =
        !c.check("scrapeInterval", check_prometheus_duration(m.scrape_interval));
    const bool timeout_ok = !c.check("scrapeTimeout", check_prometheus_duration(m.scrape_timeout));
    if (interval_ok && timeout_ok) {
      const auto t = duration_of(m.scrape_timeout);
      const auto i = duration_of(m.scrape_interval).value_or(kDefaultScrapeInterval);
      if (t && *t > i) {
        c.check("scrapeTimeout", "scrapeTimeout " + describe(m.scrape_timeout) +
                                     " is longer than the scrape interval (" +
                                     (m.scrape_interval.empty() ? std::string("1m, the default")
                                                                : describe(m.scrape_interval)) +
                                     "); Prometheus refuses a timeout above the interval");
      }
    }
    external_labels(c, "externalLabels", m.external_labels);
    if (!m.enforced_namespace_label.empty()) {
      c.check("enforcedNamespaceLabel", check_label_name(m.enforced_namespace_label));
    }
    if (m.enforced_sample_limit) scrape_limit(c, "enforcedSampleLimit", *m.enforced_sample_limit);
    if (m.enforced_target_limit) scrape_limit(c, "enforcedTargetLimit", *m.enforced_target_limit);
    if (m.instance_selector) label_selector(c, "instanceSelector", *m.instance_selector);
    if (m.instance_namespace_selector) {
      label_selector(c, "instanceNamespaceSelector", *m.instance_namespace_selector);
    }
  }
  {
    const auto f = c.field("logs");
    const auto& l = s.logs;
    logs_clients(c, "clients", l.clients);
    if (l.logs_external_label_name && !l.logs_external_label_name->empty()) {
      c.check("logsExternalLabelName", check_label_name(*l.logs_external_label_name));
    }
    if (!l.enforced_namespace_label.empty()) {
      c.check("enforcedNamespaceLabel", check_label_name(l.enforced_namespace_label));
    }
    if (l.instance_selector) label_selector(c, "instanceSelector", *l.instance_selector);
    if (l.instance_namespace_selector) {
      label_selector(c, "instanceNamespaceSelector", *l.instance_namespace_selector);
    }
  }
  {
    const auto f = c.field("integrations");
    if (s.integrations.selector) label_selector(c, "selector", *s.integrations.selector);
    if (s.integrations.namespace_selector) {
      label_selector(c, "namespaceSelector", *s.integrations.namespace_selector);
    }
  }
  return to_problems(Kind::grafana_agent, a.metadata, c);
}

std::vector<Problem> check_metrics_instance(const MetricsInstance& mi) {
  Checker c;
  const auto spec = c.field("spec");
  const auto& s = mi.spec;
  const GoDurationRule positive{.allow_zero = false};
  c.check("walTruncateFrequency", check_go_duration(s.wal_truncate_frequency, positive));
  c.check("remoteFlushDeadline", check_go_duration(s.remote_flush_deadline, positive));
  const bool min_ok = !c.check("minWALTime", check_go_duration(s.min_wal_time));
  const bool max_ok = !c.check("maxWALTime", check_go_duration(s.max_wal_time));
  if (min_ok && max_ok) {
    // The agent's defaults: min 5m, max 4h.
    const auto min = s.min_wal_time.empty() ? std::chrono::nanoseconds(std::chrono::minutes(5))
                                            : k8s::parse_go_duration(s.min_wal_time).value();
    const auto max = s.max_wal_time.empty() ? std::chrono::nanoseconds(std::chrono::hours(4))
                                            : k8s::parse_go_duration(s.max_wal_time).value();
    if (min > max) {
      c.check(s.min_wal_time.empty() ? "maxWALTime" : "minWALTime",
              "minWALTime (" +
                  (s.min_wal_time.empty() ? std::string("5m, the default") : s.min_wal_time) +
                  ") is above maxWALTime (" +
                  (s.max_wal_time.empty() ? std::string("4h, the default") : s.max_wal_time) +
                  "); the agent refuses that");
    }
  }
  for (const auto& [field, sel] :
       {std::pair<const char*, const std::optional<LabelSelectorSpec>*>{
            "serviceMonitorSelector", &s.service_monitor_selector},
        {"serviceMonitorNamespaceSelector", &s.service_monitor_namespace_selector},
        {"podMonitorSelector", &s.pod_monitor_selector},
        {"podMonitorNamespaceSelector", &s.pod_monitor_namespace_selector},
        {"probeSelector", &s.probe_selector},
        {"probeNamespaceSelector", &s.probe_namespace_selector}}) {
    if (*sel) label_selector(c, field, **sel);
  }
  remote_writes(c, "remoteWrite", s.remote_write);
  opt_key_selector(c, "additionalScrapeConfigs", s.additional_scrape_configs, "Secret");
  return to_problems(Kind::metrics_instance, mi.metadata, c);
}

std::vector<Problem> check_logs_instance(const LogsInstance& li) {
  Checker c;
  const auto spec = c.field("spec");
  const auto& s = li.spec;
  logs_clients(c, "clients", s.clients);
  if (s.pod_logs_selector) label_selector(c, "podLogsSelector", *s.pod_logs_selector);
  if (s.pod_logs_namespace_selector) {
    label_selector(c, "podLogsNamespaceSelector", *s.pod_logs_namespace_selector);
  }
  opt_key_selector(c, "additionalScrapeConfigs", s.additional_scrape_configs, "Secret");
  if (s.target_sync_period) {
    c.check("targetConfig.syncPeriod",
            check_go_duration(*s.target_sync_period, {.allow_zero = false}));
  }
  return to_problems(Kind::logs_instance, li.metadata, c);
}

std::vector<Problem> check_service_monitor(const ServiceMonitor& sm, const GrafanaAgent& agent) {
  Checker c;
  const auto spec = c.field("spec");
  const auto& s = sm.spec;
  label_key_for_prometheus(c, "jobLabel", s.job_label);
  for (std::size_t i = 0; i < s.target_labels.size(); ++i) {
    label_key_for_prometheus(c, "targetLabels[" + std::to_string(i) + "]", s.target_labels[i]);
  }
  for (std::size_t i = 0; i < s.pod_target_labels.size(); ++i) {
    label_key_for_prometheus(c, "podTargetLabels[" + std::to_string(i) + "]",
                             s.pod_target_labels[i]);
  }
  {
    const auto f = c.field("endpoints");
    for (std::size_t i = 0; i < s.endpoints.size(); ++i) {
      const auto is = c.index(i);
      endpoint(c, s.endpoints[i], true, agent);
    }
  }
  label_selector(c, "selector", s.selector);
  namespace_selector(c, s.namespace_selector);
  scrape_limit(c, "sampleLimit", s.sample_limit);
  scrape_limit(c, "targetLimit", s.target_limit);
  return to_problems(Kind::service_monitor, sm.metadata, c);
}

std::vector<Problem> check_pod_monitor(const PodMonitor& pm, const GrafanaAgent& agent) {
  Checker c;
  const auto spec = c.field("spec");
  const auto& s = pm.spec;
  label_key_for_prometheus(c, "jobLabel", s.job_label);
  for (std::size_t i = 0; i < s.pod_target_labels.size(); ++i) {
    label_key_for_prometheus(c, "podTargetLabels[" + std::to_string(i) + "]",
                             s.pod_target_labels[i]);
  }
  {
    const auto f = c.field("podMetricsEndpoints");
    for (std::size_t i = 0; i < s.pod_metrics_endpoints.size(); ++i) {
      const auto is = c.index(i);
      endpoint(c, s.pod_metrics_endpoints[i], false, agent);
    }
  }
  label_selector(c, "selector", s.selector);
  namespace_selector(c, s.namespace_selector);
  scrape_limit(c, "sampleLimit", s.sample_limit);
  scrape_limit(c, "targetLimit", s.target_limit);
  return to_problems(Kind::pod_monitor, pm.metadata, c);
}

std::vector<Problem> check_probe(const Probe& p, const GrafanaAgent& agent) {
  Checker c;
  const auto spec = c.field("spec");
  const auto& s = p.spec;
  line(c, "jobName", s.job_name);
  {
    const auto f = c.field("prober");
    c.check("url", check_host_port(s.prober_url));
    c.check("scheme", check_scheme(s.prober_scheme));
    c.check("path", check_metrics_path(s.prober_path));
  }
  line(c, "module", s.module);
  if (!s.static_config && !s.ingress) {
    c.check("targets", "a Probe needs targets.staticConfig or targets.ingress");
  }
  if (s.static_config) {
    const auto f = c.field("targets");
    const auto sc = c.field("staticConfig");
    if (s.static_config->targets) {
      for (std::size_t i = 0; i < s.static_config->targets->size(); ++i) {
        const std::string& t = (*s.static_config->targets)[i];
        if (t.empty()) {
          c.warn("static[" + std::to_string(i) + "]", "an empty target probes nothing");
        } else {
          line(c, "static[" + std::to_string(i) + "]", t);
        }
      }
    }
    {
      const auto l = c.field("labels");
      for (const auto& [k, v] : s.static_config->labels) {
        const auto ks = c.key(k);
        if (!c.check(check_label_name(k))) line(c, "", v);
      }
    }
    relabels(c, "relabelingConfigs", s.static_config->relabeling_configs);
  } else if (s.ingress) {
    const auto f = c.field("targets");
    const auto in = c.field("ingress");
    label_selector(c, "selector", s.ingress->selector);
    namespace_selector(c, s.ingress->namespace_selector);
    relabels(c, "relabelingConfigs", s.ingress->relabeling_configs);
  }
  interval_and_timeout(c, s.interval, s.scrape_timeout, agent);
  tls(c, s.tls_config);
  key_selector(c, "bearerTokenSecret", s.bearer_token_secret, "Secret", true);
  basic_auth(c, s.basic_auth);
  unrendered(c, [&](Checker& u) {
    oauth2(u, s.oauth2);
    authorization(u, s.authorization);
  });
  relabels(c, "metricRelabelings", s.metric_relabelings);
  scrape_limit(c, "sampleLimit", s.sample_limit);
  scrape_limit(c, "targetLimit", s.target_limit);
  one_auth(c, s.basic_auth.has_value(), false, !s.bearer_token_secret.name.empty(), false);
  return to_problems(Kind::probe, p.metadata, c);
}

std::vector<Problem> check_pod_logs(const PodLogs& pl) {
  Checker c;
  const auto spec = c.field("spec");
  const auto& s = pl.spec;
  label_key_for_prometheus(c, "jobLabel", s.job_label);
  for (std::size_t i = 0; i < s.pod_target_labels.size(); ++i) {
    label_key_for_prometheus(c, "podTargetLabels[" + std::to_string(i) + "]",
                             s.pod_target_labels[i]);
  }
  label_selector(c, "selector", s.selector);
  namespace_selector(c, s.namespace_selector);
  {
    const auto f = c.field("pipelineStages");
    stages(c, s.pipeline_stages, 0);
  }
  relabels(c, "relabelings", s.relabelings);
  return to_problems(Kind::pod_logs, pl.metadata, c);
}

std::vector<Problem> check_integration(const Integration& in) {
  Checker c;
  const auto spec = c.field("spec");
  const auto& s = in.spec;
  {
    const bool ok = !s.name.empty() && (s.name.front() >= 'a' && s.name.front() <= 'z') &&
                    std::all_of(s.name.begin(), s.name.end(), [](char ch) {
                      return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
                    });
    if (!ok) {
      c.check("name", "integration name " + describe(s.name) +
                          " must be lower-case letters, digits and _ (e.g. node_exporter): it "
                          "becomes the configuration key <name>_configs");
    }
  }
  if (s.config && s.config->is_object()) {
    const auto f = c.field("config");
    strings_in(c, *s.config);
  }
  std::set<std::string, std::less<>> volumes;
  {
    const auto f = c.field("volumes");
    for (std::size_t i = 0; i < s.volumes.size(); ++i) {
      const auto is = c.index(i);
      json::value v(s.volumes[i]);
      check_volume(c, v);
      const auto* n = s.volumes[i].if_contains("name");
      if (n == nullptr || !n->is_string()) continue;
      // Over 63 characters is reported by validate_integrations() (the Integration is
      // left out before its fields are checked); the characters are checked here.
      const std::string prefixed = integration_volume_name(in.metadata, n->get_string());
      if (prefixed.size() <= 63 && !is_dns_label(prefixed)) {
        c.check("name", "the volume is named " + describe(prefixed) +
                            " in the agent's pods (<namespace>-<integration>-<volume>), which is "
                            "not a lowercase RFC 1123 label; rename the volume");
      }
      if (!volumes.insert(std::string(n->get_string())).second) {
        c.check("name", "Duplicate value: " + describe(n->get_string()));
      }
    }
  }
  {
    const auto f = c.field("volumeMounts");
    std::set<std::string, std::less<>> taken;
    for (std::size_t i = 0; i < s.volume_mounts.size(); ++i) {
      const auto is = c.index(i);
      check_volume_mount(c, json::value(s.volume_mounts[i]), volumes, taken);
    }
  }
  for (std::size_t i = 0; i < s.secrets.size(); ++i) {
    key_selector(c, "secrets[" + std::to_string(i) + "]", s.secrets[i], "Secret", false);
  }
  for (std::size_t i = 0; i < s.config_maps.size(); ++i) {
    key_selector(c, "configMaps[" + std::to_string(i) + "]", s.config_maps[i], "ConfigMap", false);
  }
  return to_problems(Kind::integration, in.metadata, c);
}

std::vector<Problem> check_additional_scrape_configs(
    std::string_view content, Kind owner_kind, const ObjectMeta& owner, const std::string& field,
    bool metrics, const std::vector<std::string>& generated_jobs) {
  Checker c(field);
  auto parsed = k8s::yaml::parse(content);
  if (!parsed) {
    c.check(std::string_view(), "the Secret's value is not valid YAML: " + parsed.error().message);
    return to_problems(owner_kind, owner, c);
  }
  if (parsed->is_null()) return {};
  if (!parsed->is_array()) {
    c.check(std::string_view(), "the Secret's value must be a YAML list of scrape configs, not a " +
                                    std::string(parsed->is_object() ? "mapping" : "scalar"));
    return to_problems(owner_kind, owner, c);
  }
  std::set<std::string> jobs(generated_jobs.begin(), generated_jobs.end());
  const auto& list = parsed->get_array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto is = c.index(i);
    if (list[i].is_null()) continue;  // null-trimmed away
    if (!list[i].is_object()) {
      c.check("each scrape config must be a mapping");
      continue;
    }
    const auto& sc = list[i].get_object();
    const auto* job = sc.if_contains("job_name");
    if (job == nullptr || !job->is_string() || job->get_string().empty()) {
      c.check("job_name", "each scrape config needs a job_name");
    } else if (!jobs.insert(std::string(job->get_string())).second) {
      c.check("job_name", "job_name " + describe(job->get_string()) +
                              " is used twice in this instance; the agent refuses duplicates");
    }
    strings_in(c, list[i]);
    const auto str = [&](const char* k) -> std::string {
      const auto* v = sc.if_contains(k);
      return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    if (metrics) {
      const std::string interval = str("scrape_interval");
      const std::string timeout = str("scrape_timeout");
      const bool ok = !c.check("scrape_interval", check_prometheus_duration(interval)) &
                      !c.check("scrape_timeout", check_prometheus_duration(timeout));
      if (ok) {
        const auto t = duration_of(timeout);
        const auto iv = duration_of(interval);
        if (t && iv && *t > *iv) {
          c.check("scrape_timeout", "scrape_timeout is longer than scrape_interval");
        }
      }
      c.check("scheme", check_scheme(str("scheme")));
      c.check("metrics_path", check_metrics_path(str("metrics_path")));
    }
    for (const char* list_name : {"relabel_configs", "metric_relabel_configs"}) {
      const auto* rl = sc.if_contains(list_name);
      if (rl == nullptr || !rl->is_array()) continue;
      const auto f = c.field(list_name);
      for (std::size_t k = 0; k < rl->get_array().size(); ++k) {
        const auto ks = c.index(k);
        const auto& r = rl->get_array()[k];
        if (!r.is_object()) {
          c.check("each relabel rule must be a mapping");
          continue;
        }
        const auto& ro = r.get_object();
        const auto s = [&](const char* key) -> std::string {
          const auto* v = ro.if_contains(key);
          return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
        };
        RelabelRule rule;
        if (const auto* src = ro.if_contains("source_labels"); src != nullptr && src->is_array()) {
          for (const auto& l : src->get_array()) {
            rule.source_labels.push_back(l.is_string() ? std::string(l.get_string())
                                                       : std::string());
          }
        }
        rule.separator = s("separator");
        rule.target_label = s("target_label");
        rule.regex = s("regex");
        if (const auto* m = ro.if_contains("modulus"); m != nullptr && m->is_number()) {
          rule.modulus = static_cast<std::uint64_t>(std::max(0.0, m->to_number<double>()));
        }
        rule.replacement = s("replacement");
        rule.action = s("action");
        check_relabel_rule(c, rule);
      }
    }
  }
  // Field names in this YAML are Prometheus' (snake_case); rename the CRD-style names the
  // relabel check reports.
  std::vector<Problem> out = to_problems(owner_kind, owner, c);
  for (auto& p : out) {
    for (const auto& [from, to] :
         {std::pair<std::string_view, std::string_view>{".sourceLabels", ".source_labels"},
          {".targetLabel", ".target_label"}}) {
      if (const auto pos = p.field.find(from); pos != std::string::npos) {
        p.field.replace(pos, from.size(), to);
      }
    }
  }
  return out;
}

}  // namespace aop::agent
