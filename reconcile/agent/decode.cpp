// Field-by-field decoding of the custom resources . Absent and null fields give
// the Go zero value; pointer-typed Go fields become std::optional so that nil and empty
// stay distinguishable. Unknown fields are ignored, as the API types do.
#include "reconcile/agent/decode.hpp"

#include <utility>

#include "k8s/decode.hpp"

namespace aop::agent {
namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;
using k8s::Decoder;

Labels to_labels(const std::map<std::string, std::string>& m) {
  return {m.begin(), m.end()};
}

// ---- shared value types ---------------------------------------------------------------

SecretKeySelector key_selector(Decoder& d, const object& o) {
  SecretKeySelector s;
  s.name = d.string(o, "name");
  s.key = d.string(o, "key");
  return s;
}

std::optional<SecretKeySelector> opt_key_selector(Decoder& d, const object& o,
                                                  std::string_view key) {
  return d.opt(o, key, [&](const object& s) { return key_selector(d, s); });
}

// A selector held by value in the Go struct: absent decodes to the empty selector.
SecretKeySelector value_key_selector(Decoder& d, const object& o, std::string_view key) {
  return opt_key_selector(d, o, key).value_or(SecretKeySelector{});
}

SecretOrConfigMap secret_or_config_map(Decoder& d, const object& o) {
  SecretOrConfigMap s;
  s.secret = opt_key_selector(d, o, "secret");
  s.config_map = opt_key_selector(d, o, "configMap");
  return s;
}

SecretOrConfigMap value_secret_or_config_map(Decoder& d, const object& o, std::string_view key) {
  return d.opt(o, key, [&](const object& s) { return secret_or_config_map(d, s); })
      .value_or(SecretOrConfigMap{});
}

TLSConfig tls_config(Decoder& d, const object& o, bool with_files) {
  TLSConfig t;
  t.ca = value_secret_or_config_map(d, o, "ca");
  t.cert = value_secret_or_config_map(d, o, "cert");
  t.key_secret = opt_key_selector(d, o, "keySecret");
  t.server_name = d.string(o, "serverName");
  t.insecure_skip_verify = d.boolean(o, "insecureSkipVerify");
  if (with_files) {
    t.ca_file = d.string(o, "caFile");
    t.cert_file = d.string(o, "certFile");
    t.key_file = d.string(o, "keyFile");
  }
  return t;
}

std::optional<TLSConfig> opt_tls(Decoder& d, const object& o, bool with_files) {
  return d.opt(o, "tlsConfig", [&](const object& s) { return tls_config(d, s, with_files); });
}

std::optional<BasicAuth> opt_basic_auth(Decoder& d, const object& o) {
  return d.opt(o, "basicAuth", [&](const object& s) {
    BasicAuth b;
    b.username = value_key_selector(d, s, "username");
    b.password = value_key_selector(d, s, "password");
    return b;
  });
}

std::optional<OAuth2> opt_oauth2(Decoder& d, const object& o) {
  return d.opt(o, "oauth2", [&](const object& s) {
    OAuth2 a;
    a.client_id = value_secret_or_config_map(d, s, "clientId");
    a.client_secret = value_key_selector(d, s, "clientSecret");
    a.token_url = d.string(s, "tokenUrl");
    a.scopes = d.opt_string_list(s, "scopes");
    a.endpoint_params = d.opt_string_map(s, "endpointParams");
    return a;
  });
}

std::optional<Authorization> opt_authorization(Decoder& d, const object& o) {
  return d.opt(o, "authorization", [&](const object& s) {
    Authorization a;
    a.type = d.string(s, "type");
    a.credentials = opt_key_selector(d, s, "credentials");
    a.credentials_file = d.string(s, "credentialsFile");
    return a;
  });
}

RelabelConfig relabel_config(Decoder& d, const object& o) {
  RelabelConfig r;
  r.source_labels = d.string_list(o, "sourceLabels");
  r.separator = d.string(o, "separator");
  r.target_label = d.string(o, "targetLabel");
  r.regex = d.string(o, "regex");
  r.modulus = d.opt_uint64(o, "modulus").value_or(0);
  r.replacement = d.string(o, "replacement");
  r.action = d.string(o, "action");
  return r;
}

std::vector<RelabelConfig> relabel_list(Decoder& d, const object& o, std::string_view key) {
  return d.list(o, key, [&](const object& s) { return relabel_config(d, s); });
}

LabelSelectorSpec label_selector(Decoder& d, const object& o) {
  LabelSelectorSpec s;
  s.match_labels = d.string_map(o, "matchLabels");
  s.match_expressions = d.list(o, "matchExpressions", [&](const object& e) {
    LabelSelectorRequirementSpec r;
    r.key = d.string(e, "key");
    r.op = d.string(e, "operator");
    r.values = d.string_list(e, "values");
    return r;
  });
  s.raw = value(o);
  return s;
}

std::optional<LabelSelectorSpec> opt_label_selector(Decoder& d, const object& o,
                                                    std::string_view key) {
  return d.opt(o, key, [&](const object& s) { return label_selector(d, s); });
}

LabelSelectorSpec value_label_selector(Decoder& d, const object& o, std::string_view key) {
  return opt_label_selector(d, o, key).value_or(LabelSelectorSpec{});
}

NamespaceSelector namespace_selector(Decoder& d, const object& o, std::string_view key) {
  return d
      .opt(o, key,
           [&](const object& s) {
             NamespaceSelector n;
             n.any = d.boolean(s, "any");
             n.match_names = d.string_list(s, "matchNames");
             return n;
           })
      .value_or(NamespaceSelector{});
}

std::optional<IntOrString> opt_int_or_string(Decoder& d, const object& o, std::string_view key) {
  const value* v = d.raw(o, key);
  if (v == nullptr) return std::nullopt;
  IntOrString r;
  if (v->is_string()) {
    r.is_string = true;
    r.string_value = std::string(v->get_string());
  } else if (v->is_int64()) {
    r.int_value = v->get_int64();
  } else if (v->is_uint64()) {
    r.int_value = static_cast<std::int64_t>(v->get_uint64());
  } else if (v->is_double() &&
             v->get_double() == static_cast<double>(static_cast<std::int64_t>(v->get_double()))) {
    r.int_value = static_cast<std::int64_t>(v->get_double());
  } else {
    d.error_at(key, std::string("expected integer or string, got ") +
                        std::string(k8s::json_kind_name(*v)));
    return std::nullopt;
  }
  return r;
}

// Verbatim JSON members.
std::optional<object> opt_raw_object(Decoder& d, const object& o, std::string_view key) {
  const object* p = d.object(o, key);
  if (p == nullptr) return std::nullopt;
  return *p;
}

array raw_array(Decoder& d, const object& o, std::string_view key) {
  const array* p = d.array(o, key);
  if (p == nullptr) return {};
  return *p;
}

std::vector<object> raw_object_list(Decoder& d, const object& o, std::string_view key) {
  return d.list(o, key, [](const object& s) { return s; });
}

// ---- metadata -------------------------------------------------------------------------

ObjectMeta metadata(Decoder& d, const object& root) {
  ObjectMeta m;
  const object* md = d.object(root, "metadata");
  if (md == nullptr) return m;
  const auto scope = d.field("metadata");
  m.name = d.string(*md, "name");
  m.ns = d.string(*md, "namespace");
  m.uid = d.string(*md, "uid");
  m.resource_version = d.string(*md, "resourceVersion");
  m.generation = d.opt_int64(*md, "generation").value_or(0);
  m.labels = to_labels(d.string_map(*md, "labels"));
  m.annotations = to_labels(d.string_map(*md, "annotations"));
  return m;
}

// ---- GrafanaAgent ---------------------------------------------------------------------

RemoteWriteSpec remote_write(Decoder& d, const object& o) {
  RemoteWriteSpec r;
  r.name = d.string(o, "name");
  r.url = d.string(o, "url");
  r.remote_timeout = d.string(o, "remoteTimeout");
  r.headers = d.opt_string_map(o, "headers");
  r.write_relabel_configs = relabel_list(d, o, "writeRelabelConfigs");
  r.basic_auth = opt_basic_auth(d, o);
  r.oauth2 = opt_oauth2(d, o);
  r.bearer_token = d.string(o, "bearerToken");
  r.bearer_token_file = d.string(o, "bearerTokenFile");
  r.sigv4 = d.opt(o, "sigv4", [&](const object& s) {
    Sigv4 v;
    v.region = d.string(s, "region");
    v.access_key = opt_key_selector(d, s, "accessKey");
    v.secret_key = opt_key_selector(d, s, "secretKey");
    v.profile = d.string(s, "profile");
    v.role_arn = d.string(s, "roleARN");
    return v;
  });
  r.tls_config = opt_tls(d, o, true);
  r.proxy_url = d.string(o, "proxyUrl");
  r.queue_config = d.opt(o, "queueConfig", [&](const object& s) {
    QueueConfig q;
    q.capacity = d.int64(s, "capacity");
    q.min_shards = d.int64(s, "minShards");
    q.max_shards = d.int64(s, "maxShards");
    q.max_samples_per_send = d.int64(s, "maxSamplesPerSend");
    q.batch_send_deadline = d.string(s, "batchSendDeadline");
    q.max_retries = d.int64(s, "maxRetries");
    q.min_backoff = d.string(s, "minBackoff");
    q.max_backoff = d.string(s, "maxBackoff");
    q.retry_on_rate_limit = d.boolean(s, "retryOnRateLimit");
    return q;
  });
  r.metadata_config = d.opt(o, "metadataConfig", [&](const object& s) {
    MetadataConfig m;
    m.send = d.boolean(s, "send");
    m.send_interval = d.string(s, "sendInterval");
    return m;
  });
  return r;
}

std::vector<RemoteWriteSpec> remote_write_list(Decoder& d, const object& o) {
  return d.list(o, "remoteWrite", [&](const object& s) { return remote_write(d, s); });
}

LogsClientSpec logs_client(Decoder& d, const object& o) {
  LogsClientSpec c;
  c.url = d.string(o, "url");
  c.tenant_id = d.string(o, "tenantId");
  c.batch_wait = d.string(o, "batchWait");
  c.batch_size = d.int64(o, "batchSize");
  c.basic_auth = opt_basic_auth(d, o);
  c.oauth2 = opt_oauth2(d, o);
  c.bearer_token = d.string(o, "bearerToken");
  c.bearer_token_file = d.string(o, "bearerTokenFile");
  c.proxy_url = d.string(o, "proxyUrl");
  c.tls_config = opt_tls(d, o, true);
  c.backoff_config = d.opt(o, "backoffConfig", [&](const object& s) {
    BackoffConfig b;
    b.min_period = d.string(s, "minPeriod");
    b.max_period = d.string(s, "maxPeriod");
    b.max_retries = d.int64(s, "maxRetries");
    return b;
  });
  c.external_labels = d.string_map(o, "externalLabels");
  c.timeout = d.string(o, "timeout");
  return c;
}

std::vector<LogsClientSpec> logs_client_list(Decoder& d, const object& o) {
  return d.list(o, "clients", [&](const object& s) { return logs_client(d, s); });
}

MetricsSubsystemSpec metrics_subsystem(Decoder& d, const object& o) {
  MetricsSubsystemSpec m;
  m.remote_write = remote_write_list(d, o);
  m.replicas = d.opt_int64(o, "replicas");
  m.shards = d.opt_int64(o, "shards");
  m.replica_external_label_name = d.opt_string(o, "replicaExternalLabelName");
  m.metrics_external_label_name = d.opt_string(o, "metricsExternalLabelName");
  m.scrape_interval = d.string(o, "scrapeInterval");
  m.scrape_timeout = d.string(o, "scrapeTimeout");
  m.external_labels = d.string_map(o, "externalLabels");
  m.deny_arbitrary_fs_access = d.opt(o, "arbitraryFSAccessThroughSMs", [&](const object& s) {
                                  return d.boolean(s, "deny");
                                }).value_or(false);
  m.override_honor_labels = d.boolean(o, "overrideHonorLabels");
  m.override_honor_timestamps = d.boolean(o, "overrideHonorTimestamps");
  m.ignore_namespace_selectors = d.boolean(o, "ignoreNamespaceSelectors");
  m.enforced_namespace_label = d.string(o, "enforcedNamespaceLabel");
  m.enforced_sample_limit = d.opt_uint64(o, "enforcedSampleLimit");
  m.enforced_target_limit = d.opt_uint64(o, "enforcedTargetLimit");
  m.instance_selector = opt_label_selector(d, o, "instanceSelector");
  m.instance_namespace_selector = opt_label_selector(d, o, "instanceNamespaceSelector");
  return m;
}

LogsSubsystemSpec logs_subsystem(Decoder& d, const object& o) {
  LogsSubsystemSpec l;
  l.clients = logs_client_list(d, o);
  l.logs_external_label_name = d.opt_string(o, "logsExternalLabelName");
  l.instance_selector = opt_label_selector(d, o, "instanceSelector");
  l.instance_namespace_selector = opt_label_selector(d, o, "instanceNamespaceSelector");
  l.ignore_namespace_selectors = d.boolean(o, "ignoreNamespaceSelectors");
  l.enforced_namespace_label = d.string(o, "enforcedNamespaceLabel");
  return l;
}

GrafanaAgentSpec grafana_agent_spec(Decoder& d, const object& o) {
  GrafanaAgentSpec s;
  s.log_level = d.string(o, "logLevel");
  s.log_format = d.string(o, "logFormat");
  s.api_server = d.opt(o, "apiServer", [&](const object& a) {
    APIServerConfig c;
    c.host = d.string(a, "host");
    c.basic_auth = opt_basic_auth(d, a);
    c.bearer_token = d.string(a, "bearerToken");
    c.bearer_token_file = d.string(a, "bearerTokenFile");
    c.tls_config = opt_tls(d, a, true);
    c.authorization = opt_authorization(d, a);
    return c;
  });
  s.pod_metadata = d.opt(o, "podMetadata", [&](const object& p) {
    PodMetadata m;
    m.labels = to_labels(d.string_map(p, "labels"));
    m.annotations = to_labels(d.string_map(p, "annotations"));
    return m;
  });
  s.version = d.string(o, "version");
  s.paused = d.boolean(o, "paused");
  s.image = d.opt_string(o, "image");
  s.config_reloader_version = d.string(o, "configReloaderVersion");
  s.config_reloader_image = d.opt_string(o, "configReloaderImage");
  s.image_pull_secrets = raw_array(d, o, "imagePullSecrets");
  s.storage = d.opt(o, "storage", [&](const object& st) {
    StorageSpec v;
    v.empty_dir = opt_raw_object(d, st, "emptyDir");
    v.volume_claim_template = opt_raw_object(d, st, "volumeClaimTemplate");
    if (v.volume_claim_template) {
      const auto vct = d.field("volumeClaimTemplate");
      if (const object* md = d.object(*v.volume_claim_template, "metadata")) {
        const auto mds = d.field("metadata");
        v.volume_claim_template_name = d.string(*md, "name");
      }
    }
    return v;
  });
  s.volumes = raw_array(d, o, "volumes");
  s.volume_mounts = raw_array(d, o, "volumeMounts");
  s.resources = opt_raw_object(d, o, "resources");
  s.node_selector = opt_raw_object(d, o, "nodeSelector");
  s.service_account_name = d.string(o, "serviceAccountName");
  s.affinity = opt_raw_object(d, o, "affinity");
  s.tolerations = raw_array(d, o, "tolerations");
  s.topology_spread_constraints = raw_array(d, o, "topologySpreadConstraints");
  s.security_context = opt_raw_object(d, o, "securityContext");
  s.priority_class_name = d.string(o, "priorityClassName");
  s.runtime_class_name = d.opt_string(o, "runtimeClassName");
  s.secrets = d.string_list(o, "secrets");
  s.config_maps = d.string_list(o, "configMaps");
  s.containers = raw_array(d, o, "containers");
  s.init_containers = raw_array(d, o, "initContainers");
  s.port_name = d.string(o, "portName");
  s.metrics = d.opt(o, "metrics", [&](const object& m) {
                 return metrics_subsystem(d, m);
               }).value_or(MetricsSubsystemSpec{});
  s.logs = d.opt(o, "logs", [&](const object& m) {
              return logs_subsystem(d, m);
            }).value_or(LogsSubsystemSpec{});
  s.integrations = d.opt(o, "integrations", [&](const object& m) {
                      IntegrationsSubsystemSpec i;
                      i.selector = opt_label_selector(d, m, "selector");
                      i.namespace_selector = opt_label_selector(d, m, "namespaceSelector");
                      return i;
                    }).value_or(IntegrationsSubsystemSpec{});
  s.enable_config_read_api = d.boolean(o, "enableConfigReadAPI");
  s.disable_reporting = d.boolean(o, "disableReporting");
  s.disable_support_bundle = d.boolean(o, "disableSupportBundle");

  // Containers are strategic-merged by name and walked for env secret references; an
  // element that is not an object, or lacks a name, could only fail later.
  for (const char* key : {"containers", "initContainers"}) {
    const array* list = d.array(o, key);
    if (list == nullptr) continue;
    const auto f = d.field(key);
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto is = d.index(i);
      if (!(*list)[i].is_object()) {
        d.error(std::string("expected object, got ") +
                std::string(k8s::json_kind_name((*list)[i])));
      } else {
        (void)d.string((*list)[i].get_object(), "name");
      }
    }
  }
  return s;
}

// ---- MetricsInstance, LogsInstance ----------------------------------------------------

MetricsInstanceSpec metrics_instance_spec(Decoder& d, const object& o) {
  MetricsInstanceSpec s;
  s.wal_truncate_frequency = d.string(o, "walTruncateFrequency");
  s.min_wal_time = d.string(o, "minWALTime");
  s.max_wal_time = d.string(o, "maxWALTime");
  s.remote_flush_deadline = d.string(o, "remoteFlushDeadline");
  s.write_stale_on_shutdown = d.opt_bool(o, "writeStaleOnShutdown");
  s.service_monitor_selector = opt_label_selector(d, o, "serviceMonitorSelector");
  s.service_monitor_namespace_selector =
      opt_label_selector(d, o, "serviceMonitorNamespaceSelector");
  s.pod_monitor_selector = opt_label_selector(d, o, "podMonitorSelector");
  s.pod_monitor_namespace_selector = opt_label_selector(d, o, "podMonitorNamespaceSelector");
  s.probe_selector = opt_label_selector(d, o, "probeSelector");
  s.probe_namespace_selector = opt_label_selector(d, o, "probeNamespaceSelector");
  s.remote_write = remote_write_list(d, o);
  s.additional_scrape_configs = opt_key_selector(d, o, "additionalScrapeConfigs");
  return s;
}

LogsInstanceSpec logs_instance_spec(Decoder& d, const object& o) {
  LogsInstanceSpec s;
  s.clients = logs_client_list(d, o);
  s.pod_logs_selector = opt_label_selector(d, o, "podLogsSelector");
  s.pod_logs_namespace_selector = opt_label_selector(d, o, "podLogsNamespaceSelector");
  s.additional_scrape_configs = opt_key_selector(d, o, "additionalScrapeConfigs");
  s.target_sync_period =
      d.opt(o, "targetConfig", [&](const object& t) { return d.string(t, "syncPeriod"); });
  return s;
}

// ---- PodLogs --------------------------------------------------------------------------

PipelineStageSpec pipeline_stage(Decoder& d, const object& o) {
  PipelineStageSpec p;
  p.cri = d.object(o, "cri") != nullptr;
  p.docker = d.object(o, "docker") != nullptr;
  p.drop = d.opt(o, "drop", [&](const object& s) {
    DropStage v;
    v.source = d.string(s, "source");
    v.expression = d.string(s, "expression");
    v.value = d.string(s, "value");
    v.older_than = d.string(s, "olderThan");
    v.longer_than = d.string(s, "longerThan");
    v.drop_counter_reason = d.string(s, "dropCounterReason");
    return v;
  });
  p.json = d.opt(o, "json", [&](const object& s) {
    JSONStage v;
    v.source = d.string(s, "source");
    v.expressions = d.opt_string_map(s, "expressions");
    return v;
  });
  p.label_allow = d.string_list(o, "labelAllow");
  p.label_drop = d.string_list(o, "labelDrop");
  p.labels = d.string_map(o, "labels");
  p.limit = d.opt(o, "limit", [&](const object& s) {
    LimitStage v;
    v.rate = d.int64(s, "rate");
    v.burst = d.int64(s, "burst");
    v.drop = d.boolean(s, "drop");
    return v;
  });
  p.match = d.opt(o, "match", [&](const object& s) {
    MatchStage v;
    v.selector = d.string(s, "selector");
    v.pipeline_name = d.string(s, "pipelineName");
    v.action = d.string(s, "action");
    v.drop_counter_reason = d.string(s, "dropCounterReason");
    v.stages = d.string(s, "stages");
    return v;
  });
  if (const object* metrics = d.object(o, "metrics")) {
    const auto ms = d.field("metrics");
    for (const auto& kv : *metrics) {
      const auto name = std::string(kv.key());
      if (!kv.value().is_object()) {
        if (!kv.value().is_null()) {
          d.error_at(name, std::string("expected object, got ") +
                               std::string(k8s::json_kind_name(kv.value())));
        }
        continue;
      }
      const object& s = kv.value().get_object();
      const auto f = d.field(name);
      MetricsStage v;
      v.type = d.string(s, "type");
      v.description = d.string(s, "description");
      v.prefix = d.string(s, "prefix");
      v.source = d.string(s, "source");
      v.max_idle_duration = d.string(s, "maxIdleDuration");
      v.match_all = d.opt_bool(s, "matchAll");
      v.count_entry_bytes = d.opt_bool(s, "countEntryBytes");
      v.value = d.string(s, "value");
      v.action = d.string(s, "action");
      v.buckets = d.string_list(s, "buckets");
      p.metrics.emplace(name, std::move(v));
    }
  }
  p.multiline = d.opt(o, "multiline", [&](const object& s) {
    MultilineStage v;
    v.first_line = d.string(s, "firstLine");
    v.max_wait_time = d.string(s, "maxWaitTime");
    v.max_lines = d.int64(s, "maxLines");
    return v;
  });
  p.output_source = d.opt(o, "output", [&](const object& s) { return d.string(s, "source"); });
  p.pack = d.opt(o, "pack", [&](const object& s) {
    PackStage v;
    v.labels = d.string_list(s, "labels");
    v.ingest_timestamp = d.boolean(s, "ingestTimestamp");
    return v;
  });
  p.regex = d.opt(o, "regex", [&](const object& s) {
    return RegexStage{d.string(s, "source"), d.string(s, "expression")};
  });
  p.replace = d.opt(o, "replace", [&](const object& s) {
    return ReplaceStage{d.string(s, "source"), d.string(s, "expression"), d.string(s, "replace")};
  });
  p.templ = d.opt(o, "template", [&](const object& s) {
    return TemplateStage{d.string(s, "source"), d.string(s, "template")};
  });
  p.tenant = d.opt(o, "tenant", [&](const object& s) {
    return TenantStage{d.string(s, "label"), d.string(s, "source"), d.string(s, "value")};
  });
  p.timestamp = d.opt(o, "timestamp", [&](const object& s) {
    TimestampStage v;
    v.source = d.string(s, "source");
    v.format = d.string(s, "format");
    v.fallback_formats = d.string_list(s, "fallbackFormats");
    v.location = d.string(s, "location");
    v.action_on_failure = d.string(s, "actionOnFailure");
    return v;
  });
  return p;
}

PodLogsSpec pod_logs_spec(Decoder& d, const object& o) {
  PodLogsSpec s;
  s.job_label = d.string(o, "jobLabel");
  s.pod_target_labels = d.string_list(o, "podTargetLabels");
  s.selector = value_label_selector(d, o, "selector");
  s.namespace_selector = namespace_selector(d, o, "namespaceSelector");
  s.pipeline_stages =
      d.list(o, "pipelineStages", [&](const object& st) { return pipeline_stage(d, st); });
  s.relabelings = relabel_list(d, o, "relabelings");
  return s;
}

// ---- Integration ----------------------------------------------------------------------

IntegrationSpec integration_spec(Decoder& d, const object& o) {
  IntegrationSpec s;
  s.name = d.string(o, "name");
  if (const object* t = d.object(o, "type")) {
    const auto f = d.field("type");
    s.all_nodes = d.boolean(*t, "allNodes");
    s.unique = d.boolean(*t, "unique");
  }
  if (const value* c = d.raw(o, "config")) s.config = *c;
  s.volumes = raw_object_list(d, o, "volumes");
  s.volume_mounts = raw_object_list(d, o, "volumeMounts");
  s.secrets = d.list(o, "secrets", [&](const object& k) { return key_selector(d, k); });
  s.config_maps = d.list(o, "configMaps", [&](const object& k) { return key_selector(d, k); });
  return s;
}

// ---- ServiceMonitor, PodMonitor, Probe -------------------------------------------------

Endpoint endpoint(Decoder& d, const object& o, bool service_monitor) {
  Endpoint e;
  e.port = d.string(o, "port");
  e.target_port = opt_int_or_string(d, o, "targetPort");
  e.path = d.string(o, "path");
  e.scheme = d.string(o, "scheme");
  if (const object* params = d.object(o, "params")) {
    const auto f = d.field("params");
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& kv : *params) out[std::string(kv.key())] = d.string_list(*params, kv.key());
    e.params = std::move(out);
  }
  e.interval = d.string(o, "interval");
  e.scrape_timeout = d.string(o, "scrapeTimeout");
  e.tls_config = opt_tls(d, o, service_monitor);
  if (service_monitor) e.bearer_token_file = d.string(o, "bearerTokenFile");
  e.bearer_token_secret = value_key_selector(d, o, "bearerTokenSecret");
  e.honor_labels = d.boolean(o, "honorLabels");
  e.honor_timestamps = d.opt_bool(o, "honorTimestamps");
  e.basic_auth = opt_basic_auth(d, o);
  e.oauth2 = opt_oauth2(d, o);
  e.authorization = opt_authorization(d, o);
  if (d.array(o, "metricRelabelings") != nullptr) {
    e.metric_relabelings = relabel_list(d, o, "metricRelabelings");
  }
  e.relabelings = relabel_list(d, o, "relabelings");
  e.proxy_url = d.opt_string(o, "proxyUrl");
  e.enable_http2 = d.opt_bool(o, "enableHttp2");
  e.filter_running = d.opt_bool(o, "filterRunning");
  e.follow_redirects = d.opt_bool(o, "followRedirects");
  return e;
}

LabelLimits label_limits(Decoder& d, const object& o) {
  return {d.opt_uint64(o, "labelLimit").value_or(0),
          d.opt_uint64(o, "labelNameLengthLimit").value_or(0),
          d.opt_uint64(o, "labelValueLengthLimit").value_or(0)};
}

ServiceMonitorSpec service_monitor_spec(Decoder& d, const object& o) {
  ServiceMonitorSpec s;
  s.job_label = d.string(o, "jobLabel");
  s.target_labels = d.string_list(o, "targetLabels");
  s.pod_target_labels = d.string_list(o, "podTargetLabels");
  s.endpoints = d.list(o, "endpoints", [&](const object& e) { return endpoint(d, e, true); });
  s.selector = value_label_selector(d, o, "selector");
  s.namespace_selector = namespace_selector(d, o, "namespaceSelector");
  s.sample_limit = d.opt_uint64(o, "sampleLimit").value_or(0);
  s.target_limit = d.opt_uint64(o, "targetLimit").value_or(0);
  s.label_limits = label_limits(d, o);
  return s;
}

PodMonitorSpec pod_monitor_spec(Decoder& d, const object& o) {
  PodMonitorSpec s;
  s.job_label = d.string(o, "jobLabel");
  s.pod_target_labels = d.string_list(o, "podTargetLabels");
  s.pod_metrics_endpoints =
      d.list(o, "podMetricsEndpoints", [&](const object& e) { return endpoint(d, e, false); });
  s.selector = value_label_selector(d, o, "selector");
  s.namespace_selector = namespace_selector(d, o, "namespaceSelector");
  s.sample_limit = d.opt_uint64(o, "sampleLimit").value_or(0);
  s.target_limit = d.opt_uint64(o, "targetLimit").value_or(0);
  s.label_limits = label_limits(d, o);
  return s;
}

ProbeSpec probe_spec(Decoder& d, const object& o) {
  ProbeSpec s;
  s.job_name = d.string(o, "jobName");
  if (const object* p = d.object(o, "prober")) {
    const auto f = d.field("prober");
    s.prober_url = d.string(*p, "url");
    s.prober_scheme = d.string(*p, "scheme");
    s.prober_path = d.string(*p, "path");
    s.prober_proxy_url = d.string(*p, "proxyUrl");
  }
  s.module = d.string(o, "module");
  if (const object* t = d.object(o, "targets")) {
    const auto f = d.field("targets");
    s.static_config = d.opt(*t, "staticConfig", [&](const object& sc) {
      ProbeStaticConfig c;
      c.targets = d.opt_string_list(sc, "static");
      c.labels = d.string_map(sc, "labels");
      c.relabeling_configs = relabel_list(d, sc, "relabelingConfigs");
      return c;
    });
    s.ingress = d.opt(*t, "ingress", [&](const object& in) {
      ProbeIngress i;
      i.selector = value_label_selector(d, in, "selector");
      i.namespace_selector = namespace_selector(d, in, "namespaceSelector");
      i.relabeling_configs = relabel_list(d, in, "relabelingConfigs");
      return i;
    });
  }
  s.interval = d.string(o, "interval");
  s.scrape_timeout = d.string(o, "scrapeTimeout");
  s.tls_config = opt_tls(d, o, false);
  s.bearer_token_secret = value_key_selector(d, o, "bearerTokenSecret");
  s.basic_auth = opt_basic_auth(d, o);
  s.oauth2 = opt_oauth2(d, o);
  s.authorization = opt_authorization(d, o);
  s.metric_relabelings = relabel_list(d, o, "metricRelabelings");
  s.sample_limit = d.opt_uint64(o, "sampleLimit").value_or(0);
  s.target_limit = d.opt_uint64(o, "targetLimit").value_or(0);
  s.label_limits = label_limits(d, o);
  return s;
}

// Decodes `{metadata, spec}` with `spec_fn`; all errors of the object in one message.
template <class T, class SpecFn>
Result<T> decode_object(const value& v, SpecFn&& spec_fn) {
  if (!v.is_object()) {
    return make_error(std::string("expected object, got ") + std::string(k8s::json_kind_name(v)));
  }
  const object& root = v.get_object();
  Decoder d;
  T out;
  out.metadata = metadata(d, root);
  if (const object* spec = d.object(root, "spec")) {
    const auto scope = d.field("spec");
    out.spec = spec_fn(d, *spec);
  }
  if (!d.ok()) return make_error(d.message());
  return out;
}

}  // namespace

Result<ObjectMeta> decode_metadata(const value& v) {
  if (!v.is_object()) {
    return make_error(std::string("expected object, got ") + std::string(k8s::json_kind_name(v)));
  }
  Decoder d;
  ObjectMeta m = metadata(d, v.get_object());
  if (!d.ok()) return make_error(d.message());
  return m;
}

Result<GrafanaAgent> decode_grafana_agent(const value& v) {
  return decode_object<GrafanaAgent>(v, grafana_agent_spec);
}
Result<MetricsInstance> decode_metrics_instance(const value& v) {
  return decode_object<MetricsInstance>(v, metrics_instance_spec);
}
Result<LogsInstance> decode_logs_instance(const value& v) {
  return decode_object<LogsInstance>(v, logs_instance_spec);
}
Result<PodLogs> decode_pod_logs(const value& v) {
  return decode_object<PodLogs>(v, pod_logs_spec);
}
Result<Integration> decode_integration(const value& v) {
  return decode_object<Integration>(v, integration_spec);
}
Result<ServiceMonitor> decode_service_monitor(const value& v) {
  return decode_object<ServiceMonitor>(v, service_monitor_spec);
}
Result<PodMonitor> decode_pod_monitor(const value& v) {
  return decode_object<PodMonitor>(v, pod_monitor_spec);
}
Result<Probe> decode_probe(const value& v) {
  return decode_object<Probe>(v, probe_spec);
}

Result<std::vector<PipelineStageSpec>> decode_pipeline_stages(const value& list,
                                                              const std::string& path) {
  if (!list.is_array()) {
    return make_error(path + ": expected a list of pipeline stages, got " +
                      std::string(k8s::json_kind_name(list)));
  }
  Decoder d(path);
  std::vector<PipelineStageSpec> out;
  const array& arr = list.get_array();
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const auto scope = d.index(i);
    if (arr[i].is_null()) {
      out.emplace_back();
      continue;
    }
    if (!arr[i].is_object()) {
      d.error(std::string("expected object, got ") + std::string(k8s::json_kind_name(arr[i])));
      continue;
    }
    out.push_back(pipeline_stage(d, arr[i].get_object()));
  }
  if (!d.ok()) return make_error(d.message());
  return out;
}

}  // namespace aop::agent
