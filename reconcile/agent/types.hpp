// Typed custom resources of the Grafana Agent controller.
//
// The structs mirror the CRD JSON field names (camelCase → snake_case). Where the
// generated output depends on the difference between "absent" and "empty" (selectors,
// *bool, *int32, maps and lists that render as `{}`/`[]` when present but empty), the
// member is a std::optional. Kubernetes-native fields that are only copied through into
// generated pods (containers, volumes, affinity, ...) are kept as verbatim JSON.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace aop::agent {

using StringMap = std::map<std::string, std::string>;
// Labels use a transparent comparator so k8s::MapLabels can view them.
using Labels = std::map<std::string, std::string, std::less<>>;

struct ObjectMeta {
  std::string name;
  std::string ns;
  std::string uid;
  std::string resource_version;
  std::int64_t generation = 0;
  Labels labels;
  Labels annotations;
};

// ---- shared value types ----------------------------------------------------------------

struct LabelSelectorRequirementSpec {
  std::string key;
  std::string op;  // verbatim `operator`; validated only when used for discovery
  std::vector<std::string> values;
};

// The API form of a label selector. `raw` is the JSON it was decoded from, handed to
// k8s::parse_label_selector when the selector is used for discovery.
struct LabelSelectorSpec {
  std::map<std::string, std::string> match_labels;  // sorted bytewise
  std::vector<LabelSelectorRequirementSpec> match_expressions;
  boost::json::value raw = boost::json::object();
};

// prometheus-operator NamespaceSelector (used only for SD `namespaces`).
struct NamespaceSelector {
  bool any = false;
  std::vector<std::string> match_names;
};

struct SecretKeySelector {
  std::string name;
  std::string key;
};
using ConfigMapKeySelector = SecretKeySelector;

struct SecretOrConfigMap {
  std::optional<SecretKeySelector> secret;
  std::optional<ConfigMapKeySelector> config_map;
};

struct SafeTLSConfig {
  SecretOrConfigMap ca;
  SecretOrConfigMap cert;
  std::optional<SecretKeySelector> key_secret;
  std::string server_name;
  bool insecure_skip_verify = false;
};

// SafeTLSConfig plus file paths. For the "safe" variants the *_file members stay empty.
struct TLSConfig : SafeTLSConfig {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

struct BasicAuth {
  SecretKeySelector username;  // held by value: collected only when name and key set
  SecretKeySelector password;
};

struct OAuth2 {
  SecretOrConfigMap client_id;
  SecretKeySelector client_secret;  // by value
  std::string token_url;
  std::optional<std::vector<std::string>> scopes;
  std::optional<StringMap> endpoint_params;
};

// SafeAuthorization (+ credentialsFile for the API server's Authorization). Never
// rendered upstream; its Secret is still collected.
struct Authorization {
  std::string type;
  std::optional<SecretKeySelector> credentials;
  std::string credentials_file;
};

struct RelabelConfig {
  std::vector<std::string> source_labels;
  std::string separator;
  std::string target_label;
  std::string regex;
  std::uint64_t modulus = 0;
  std::string replacement;
  std::string action;
};

struct APIServerConfig {
  std::string host;
  std::optional<BasicAuth> basic_auth;
  std::string bearer_token;
  std::string bearer_token_file;
  std::optional<TLSConfig> tls_config;
  std::optional<Authorization> authorization;
};

struct IntOrString {
  bool is_string = false;
  std::int64_t int_value = 0;
  std::string string_value;
};

// ---- GrafanaAgent ----------------------------------------------------------------------

struct Sigv4 {
  std::string region;
  std::optional<SecretKeySelector> access_key;
  std::optional<SecretKeySelector> secret_key;
  std::string profile;
  std::string role_arn;
};

struct QueueConfig {
  std::int64_t capacity = 0;
  std::int64_t min_shards = 0;
  std::int64_t max_shards = 0;
  std::int64_t max_samples_per_send = 0;
  std::string batch_send_deadline;
  std::int64_t max_retries = 0;
  std::string min_backoff;
  std::string max_backoff;
  bool retry_on_rate_limit = false;
};

struct MetadataConfig {
  bool send = false;
  std::string send_interval;
};

struct RemoteWriteSpec {
  std::string name;
  std::string url;
  std::string remote_timeout;
  std::optional<StringMap> headers;
  std::vector<RelabelConfig> write_relabel_configs;
  std::optional<BasicAuth> basic_auth;
  std::optional<OAuth2> oauth2;
  std::string bearer_token;
  std::string bearer_token_file;
  std::optional<Sigv4> sigv4;
  std::optional<TLSConfig> tls_config;
  std::string proxy_url;
  std::optional<QueueConfig> queue_config;
  std::optional<MetadataConfig> metadata_config;
};

struct MetricsSubsystemSpec {
  std::vector<RemoteWriteSpec> remote_write;
  std::optional<std::int64_t> replicas;
  std::optional<std::int64_t> shards;
  std::optional<std::string> replica_external_label_name;
  std::optional<std::string> metrics_external_label_name;
  std::string scrape_interval;
  std::string scrape_timeout;
  StringMap external_labels;
  bool deny_arbitrary_fs_access = false;  // arbitraryFSAccessThroughSMs.deny
  bool override_honor_labels = false;
  bool override_honor_timestamps = false;
  bool ignore_namespace_selectors = false;
  std::string enforced_namespace_label;
  std::optional<std::uint64_t> enforced_sample_limit;
  std::optional<std::uint64_t> enforced_target_limit;
  std::optional<LabelSelectorSpec> instance_selector;
  std::optional<LabelSelectorSpec> instance_namespace_selector;
};

struct BackoffConfig {
  std::string min_period;
  std::string max_period;
  std::int64_t max_retries = 0;
};

struct LogsClientSpec {
  std::string url;
  std::string tenant_id;
  std::string batch_wait;
  std::int64_t batch_size = 0;
  std::optional<BasicAuth> basic_auth;
  std::optional<OAuth2> oauth2;
  std::string bearer_token;
  std::string bearer_token_file;
  std::string proxy_url;
  std::optional<TLSConfig> tls_config;
  std::optional<BackoffConfig> backoff_config;
  StringMap external_labels;
  std::string timeout;
};

struct LogsSubsystemSpec {
  std::vector<LogsClientSpec> clients;
  std::optional<std::string> logs_external_label_name;
  std::optional<LabelSelectorSpec> instance_selector;
  std::optional<LabelSelectorSpec> instance_namespace_selector;
  bool ignore_namespace_selectors = false;
  std::string enforced_namespace_label;
};

struct IntegrationsSubsystemSpec {
  std::optional<LabelSelectorSpec> selector;
  std::optional<LabelSelectorSpec> namespace_selector;
};

struct StorageSpec {
  std::optional<boost::json::object> empty_dir;
  // The embedded PVC template, verbatim (apiVersion, kind, metadata, spec, status).
  std::optional<boost::json::object> volume_claim_template;
  std::string volume_claim_template_name;  // volumeClaimTemplate.metadata.name
};

struct PodMetadata {
  Labels labels;
  Labels annotations;
};

struct GrafanaAgentSpec {
  std::string log_level;
  std::string log_format;
  std::optional<APIServerConfig> api_server;
  std::optional<PodMetadata> pod_metadata;
  std::string version;
  bool paused = false;
  std::optional<std::string> image;
  std::string config_reloader_version;
  std::optional<std::string> config_reloader_image;
  boost::json::array image_pull_secrets;
  std::optional<StorageSpec> storage;
  boost::json::array volumes;
  boost::json::array volume_mounts;
  std::optional<boost::json::object> resources;
  std::optional<boost::json::object> node_selector;
  std::string service_account_name;
  std::optional<boost::json::object> affinity;
  boost::json::array tolerations;
  boost::json::array topology_spread_constraints;
  std::optional<boost::json::object> security_context;
  std::string priority_class_name;
  std::optional<std::string> runtime_class_name;
  std::vector<std::string> secrets;
  std::vector<std::string> config_maps;
  boost::json::array containers;
  boost::json::array init_containers;
  std::string port_name;  // "" → http-metrics
  MetricsSubsystemSpec metrics;
  LogsSubsystemSpec logs;
  IntegrationsSubsystemSpec integrations;
  bool enable_config_read_api = false;
  bool disable_reporting = false;
  bool disable_support_bundle = false;
};

struct GrafanaAgent {
  ObjectMeta metadata;
  GrafanaAgentSpec spec;
};

// ---- MetricsInstance ------------------------------------------------------------------

struct MetricsInstanceSpec {
  std::string wal_truncate_frequency;
  std::string min_wal_time;
  std::string max_wal_time;
  std::string remote_flush_deadline;
  std::optional<bool> write_stale_on_shutdown;
  std::optional<LabelSelectorSpec> service_monitor_selector;
  std::optional<LabelSelectorSpec> service_monitor_namespace_selector;
  std::optional<LabelSelectorSpec> pod_monitor_selector;
  std::optional<LabelSelectorSpec> pod_monitor_namespace_selector;
  std::optional<LabelSelectorSpec> probe_selector;
  std::optional<LabelSelectorSpec> probe_namespace_selector;
  std::vector<RemoteWriteSpec> remote_write;
  std::optional<SecretKeySelector> additional_scrape_configs;
};

struct MetricsInstance {
  ObjectMeta metadata;
  MetricsInstanceSpec spec;
};

// ---- LogsInstance, PodLogs --------------------------------------------------------------

struct LogsInstanceSpec {
  std::vector<LogsClientSpec> clients;
  std::optional<LabelSelectorSpec> pod_logs_selector;
  std::optional<LabelSelectorSpec> pod_logs_namespace_selector;
  std::optional<SecretKeySelector> additional_scrape_configs;
  std::optional<std::string> target_sync_period;  // targetConfig set → value (may be "")
};

struct LogsInstance {
  ObjectMeta metadata;
  LogsInstanceSpec spec;
};

struct DropStage {
  std::string source, expression, value, older_than, longer_than, drop_counter_reason;
};
struct JSONStage {
  std::string source;
  std::optional<StringMap> expressions;
};
struct LimitStage {
  std::int64_t rate = 0;
  std::int64_t burst = 0;
  bool drop = false;
};
struct MatchStage {
  std::string selector, pipeline_name, action, drop_counter_reason;
  std::string stages;  // a YAML string holding a list of PipelineStageSpec
};
struct MetricsStage {
  std::string type, description, prefix, source, max_idle_duration;
  std::optional<bool> match_all;
  std::optional<bool> count_entry_bytes;
  std::string value, action;
  std::vector<std::string> buckets;
};
struct MultilineStage {
  std::string first_line, max_wait_time;
  std::int64_t max_lines = 0;
};
struct PackStage {
  std::vector<std::string> labels;
  bool ingest_timestamp = false;
};
struct RegexStage {
  std::string source, expression;
};
struct ReplaceStage {
  std::string source, expression, replace;
};
struct TemplateStage {
  std::string source, templ;
};
struct TenantStage {
  std::string label, source, value;
};
struct TimestampStage {
  std::string source, format;
  std::vector<std::string> fallback_formats;
  std::string location, action_on_failure;
};

struct PipelineStageSpec {
  bool cri = false;
  bool docker = false;
  std::optional<DropStage> drop;
  std::optional<JSONStage> json;
  std::vector<std::string> label_allow;
  std::vector<std::string> label_drop;
  StringMap labels;
  std::optional<LimitStage> limit;
  std::optional<MatchStage> match;
  std::map<std::string, MetricsStage> metrics;
  std::optional<MultilineStage> multiline;
  std::optional<std::string> output_source;  // output: {source}
  std::optional<PackStage> pack;
  std::optional<RegexStage> regex;
  std::optional<ReplaceStage> replace;
  std::optional<TemplateStage> templ;
  std::optional<TenantStage> tenant;
  std::optional<TimestampStage> timestamp;
};

struct PodLogsSpec {
  std::string job_label;
  std::vector<std::string> pod_target_labels;
  LabelSelectorSpec selector;
  NamespaceSelector namespace_selector;
  std::vector<PipelineStageSpec> pipeline_stages;
  std::vector<RelabelConfig> relabelings;
};

struct PodLogs {
  ObjectMeta metadata;
  PodLogsSpec spec;
};

// ---- Integration ----------------------------------------------------------------------

struct IntegrationSpec {
  std::string name;
  bool all_nodes = false;
  bool unique = false;
  std::optional<boost::json::value> config;  // verbatim
  std::vector<boost::json::object> volumes;
  std::vector<boost::json::object> volume_mounts;
  std::vector<SecretKeySelector> secrets;
  std::vector<ConfigMapKeySelector> config_maps;
};

struct Integration {
  ObjectMeta metadata;
  IntegrationSpec spec;
};

// ---- ServiceMonitor, PodMonitor, Probe -------------------------------------------------

// `labelLimit`, `labelNameLengthLimit`, `labelValueLengthLimit` of a monitor or Probe:
// rendered only with Compat::fixed (upstream ignores them).
struct LabelLimits {
  std::uint64_t label = 0;
  std::uint64_t name_length = 0;
  std::uint64_t value_length = 0;
};

// Endpoint and PodMetricsEndpoint share this type; for PodMetricsEndpoint the TLS file
// fields and bearer_token_file are never set.
struct Endpoint {
  std::string port;
  std::optional<IntOrString> target_port;
  std::string path;
  std::string scheme;
  std::optional<std::map<std::string, std::vector<std::string>>> params;
  std::string interval;
  std::string scrape_timeout;
  std::optional<TLSConfig> tls_config;
  std::string bearer_token_file;
  SecretKeySelector bearer_token_secret;
  bool honor_labels = false;
  std::optional<bool> honor_timestamps;
  std::optional<BasicAuth> basic_auth;
  std::optional<OAuth2> oauth2;                // rendered only with Compat::fixed
  std::optional<Authorization> authorization;  // idem
  std::optional<std::vector<RelabelConfig>> metric_relabelings;
  std::vector<RelabelConfig> relabelings;
  std::optional<std::string> proxy_url;
  std::optional<bool> enable_http2;
  std::optional<bool> filter_running;
  std::optional<bool> follow_redirects;  // rendered only with Compat::fixed
};

struct ServiceMonitorSpec {
  std::string job_label;
  std::vector<std::string> target_labels;
  std::vector<std::string> pod_target_labels;
  std::vector<Endpoint> endpoints;
  LabelSelectorSpec selector;
  NamespaceSelector namespace_selector;
  std::uint64_t sample_limit = 0;
  std::uint64_t target_limit = 0;
  LabelLimits label_limits;
};

struct ServiceMonitor {
  ObjectMeta metadata;
  ServiceMonitorSpec spec;
};

struct PodMonitorSpec {
  std::string job_label;
  std::vector<std::string> pod_target_labels;
  std::vector<Endpoint> pod_metrics_endpoints;
  LabelSelectorSpec selector;
  NamespaceSelector namespace_selector;
  std::uint64_t sample_limit = 0;
  std::uint64_t target_limit = 0;
  LabelLimits label_limits;
};

struct PodMonitor {
  ObjectMeta metadata;
  PodMonitorSpec spec;
};

struct ProbeStaticConfig {
  std::optional<std::vector<std::string>> targets;  // `static`
  StringMap labels;
  std::vector<RelabelConfig> relabeling_configs;
};

struct ProbeIngress {
  LabelSelectorSpec selector;
  NamespaceSelector namespace_selector;
  std::vector<RelabelConfig> relabeling_configs;
};

struct ProbeSpec {
  std::string job_name;
  std::string prober_url;
  std::string prober_scheme;
  std::string prober_path;
  std::string prober_proxy_url;  // rendered only with Compat::fixed
  std::string module;
  std::optional<ProbeStaticConfig> static_config;
  std::optional<ProbeIngress> ingress;
  std::string interval;
  std::string scrape_timeout;
  std::optional<TLSConfig> tls_config;  // safe fields only
  SecretKeySelector bearer_token_secret;
  std::optional<BasicAuth> basic_auth;
  // Rendered only with Compat::fixed:
  std::optional<OAuth2> oauth2;
  std::optional<Authorization> authorization;
  std::vector<RelabelConfig> metric_relabelings;
  std::uint64_t sample_limit = 0;
  std::uint64_t target_limit = 0;
  LabelLimits label_limits;
};

struct Probe {
  ObjectMeta metadata;
  ProbeSpec spec;
};

}  // namespace aop::agent
