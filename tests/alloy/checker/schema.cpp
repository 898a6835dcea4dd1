// Schema tables; see schema.hpp. Attribute order is the order of the backend's mapping
// tables (the writer must follow it); exporter arguments are ordered bytewise instead.
#include "tests/alloy/checker/schema.hpp"

#include <algorithm>
#include <map>

namespace aop::alloy::check::schema {
namespace {

using K = Kind;

Attr req(std::string name, Kind k = K::string) {
  return Attr{std::move(name), k, true};
}

std::vector<std::string> roles() {
  return {"endpoints", "endpointslice", "pod", "service", "node", "ingress"};
}

// Every `stage.*` block a pipeline may hold, each repeatable, bodies `stage.<x>`.
std::vector<Nested> stages() {
  std::vector<Nested> out;
  for (const char* s :
       {"cri",        "docker",     "regex",  "json",          "logfmt",
        "replace",    "template",   "pack",   "timestamp",     "output",
        "label_drop", "label_keep", "labels", "static_labels", "structured_metadata",
        "limit",      "multiline",  "tenant", "drop",          "sampling",
        "decolorize", "match",      "metrics"}) {
    const std::string name = std::string("stage.") + s;
    out.push_back({name, name, true});
  }
  return out;
}

// Exporter arguments: every attribute of kind `any` (values come from the static config
// with their JSON types), plus required ones.
Body exporter(std::vector<std::string> attrs, std::vector<std::string> required = {},
              std::vector<Nested> blocks = {}) {
  Body b;
  b.bytewise = true;
  for (auto& a : attrs) {
    const bool r = std::find(required.begin(), required.end(), a) != required.end();
    b.attrs.push_back({std::move(a), K::any, r});
  }
  b.blocks = std::move(blocks);
  return b;
}

Body any_block(std::vector<std::string> attrs) {
  return exporter(std::move(attrs));
}

std::map<std::string, Body, std::less<>> make_bodies() {
  std::map<std::string, Body, std::less<>> m;

  // Shared client blocks.
  m["basic_auth"] = {{{"username"}, {"password"}, {"password_file"}}};
  m["authorization"] = {{{"type"}, {"credentials"}, {"credentials_file"}}};
  m["tls_config"] = {{{"ca_pem"},
                      {"ca_file"},
                      {"cert_pem"},
                      {"cert_file"},
                      {"key_pem"},
                      {"key_file"},
                      {"server_name"},
                      {"insecure_skip_verify", K::boolean},
                      {"min_version"}}};
  m["oauth2"] = {{{"client_id"},
                  {"client_secret"},
                  {"client_secret_file"},
                  {"scopes", K::strings},
                  {"token_url"},
                  {"endpoint_params", K::string_map},
                  {"proxy_url"}},
                 {{"tls_config", "tls_config"}}};
  m["sigv4"] = {{{"region"}, {"access_key"}, {"secret_key"}, {"profile"}, {"role_arn"}}};
  m["rule"] = {{{"source_labels", K::strings},
                {"separator"},
                {"regex"},
                {"modulus", K::integer},
                {"target_label"},
                {"replacement"},
                {"action"}}};

  m["logging"] = {{{"level", K::string, false, {"debug", "info", "warn", "error"}},
                   {"format", K::string, false, {"logfmt", "json"}}}};

  // Metrics.
  m["discovery.kubernetes"] = {{{"role", K::string, true, roles()},
                                {"api_server"},
                                {"kubeconfig_file"},
                                {"bearer_token"},
                                {"bearer_token_file"},
                                {"proxy_url"},
                                {"follow_redirects", K::boolean},
                                {"enable_http2", K::boolean}},
                               {{"namespaces", "discovery.kubernetes/namespaces"},
                                {"selectors", "discovery.kubernetes/selectors", true},
                                {"attach_metadata", "discovery.kubernetes/attach_metadata"},
                                {"basic_auth", "basic_auth"},
                                {"authorization", "authorization"},
                                {"oauth2", "oauth2"},
                                {"tls_config", "tls_config"}}};
  m["discovery.kubernetes/namespaces"] = {{{"names", K::strings}, {"own_namespace", K::boolean}}};
  m["discovery.kubernetes/selectors"] = {
      {{"role", K::string, true, roles()}, {"label"}, {"field"}}};
  m["discovery.kubernetes/attach_metadata"] = {{{"node", K::boolean}, {"namespace", K::boolean}}};
  m["discovery.relabel"] = {{req("targets", K::targets)}, {{"rule", "rule", true}}};
  m["prometheus.scrape"] = {{req("targets", K::targets),
                             req("forward_to", K::metric_receivers),
                             {"job_name"},
                             {"honor_labels", K::boolean},
                             {"honor_timestamps", K::boolean},
                             {"params", K::list_map},
                             {"scrape_interval", K::duration},
                             {"scrape_timeout", K::duration},
                             {"metrics_path"},
                             {"scheme"},
                             {"sample_limit", K::integer},
                             {"target_limit", K::integer},
                             {"label_limit", K::integer},
                             {"label_name_length_limit", K::integer},
                             {"label_value_length_limit", K::integer},
                             {"body_size_limit", K::bytesize},
                             {"bearer_token"},
                             {"bearer_token_file"},
                             {"proxy_url"},
                             {"no_proxy"},
                             {"proxy_from_environment", K::boolean},
                             {"follow_redirects", K::boolean},
                             {"enable_http2", K::boolean}},
                            {{"basic_auth", "basic_auth"},
                             {"authorization", "authorization"},
                             {"oauth2", "oauth2"},
                             {"tls_config", "tls_config"},
                             {"clustering", "prometheus.scrape/clustering"}}};
  m["prometheus.scrape/clustering"] = {{req("enabled", K::boolean)}};
  m["prometheus.relabel"] = {{req("forward_to", K::metric_receivers)}, {{"rule", "rule", true}}};
  m["prometheus.remote_write"] = {{{"external_labels", K::string_map}},
                                  {{"endpoint", "prometheus.remote_write/endpoint", true},
                                   {"wal", "prometheus.remote_write/wal"}}};
  m["prometheus.remote_write/endpoint"] = {
      {req("url"),
       {"name"},
       {"remote_timeout", K::duration},
       {"headers", K::string_map},
       {"proxy_url"}},
      {{"basic_auth", "basic_auth"},
       {"authorization", "authorization"},
       {"oauth2", "oauth2"},
       {"sigv4", "sigv4"},
       {"tls_config", "tls_config"},
       {"queue_config", "prometheus.remote_write/queue_config"},
       {"metadata_config", "prometheus.remote_write/metadata_config"},
       {"write_relabel_config", "rule", true}}};
  m["prometheus.remote_write/queue_config"] = {{{"capacity", K::integer},
                                                {"max_shards", K::integer},
                                                {"min_shards", K::integer},
                                                {"max_samples_per_send", K::integer},
                                                {"batch_send_deadline", K::duration},
                                                {"min_backoff", K::duration},
                                                {"max_backoff", K::duration},
                                                {"retry_on_http_429", K::boolean}}};
  m["prometheus.remote_write/metadata_config"] = {
      {{"send", K::boolean}, {"send_interval", K::duration}}};
  m["prometheus.remote_write/wal"] = {{{"truncate_frequency", K::duration},
                                       {"min_keepalive_time", K::duration},
                                       {"max_keepalive_time", K::duration}}};

  // Logs.
  m["local.file_match"] = {{req("path_targets", K::targets), {"sync_period", K::duration}}};
  m["loki.source.file"] = {
      {req("targets", K::targets), req("forward_to", K::log_receivers), {"legacy_positions_file"}}};
  m["loki.process"] = {{req("forward_to", K::log_receivers)}, stages(), false, true};
  m["loki.write"] = {{{"external_labels", K::string_map}},
                     {{"endpoint", "loki.write/endpoint", true}}};
  m["loki.write/endpoint"] = {
      {req("url"),
       {"tenant_id"},
       {"batch_wait", K::duration},
       {"batch_size", K::bytesize},
       {"remote_timeout", K::duration},
       {"min_backoff_period", K::duration},
       {"max_backoff_period", K::duration},
       {"max_backoff_retries", K::integer},
       {"proxy_url"},
       {"bearer_token"},
       {"bearer_token_file"}},
      {{"basic_auth", "basic_auth"}, {"oauth2", "oauth2"}, {"tls_config", "tls_config"}}};
  m["loki.relabel"] = {{req("forward_to", K::log_receivers)}, {{"rule", "rule", true}}};
  m["loki.source.kubernetes_events"] = {{req("forward_to", K::log_receivers),
                                         {"job_name"},
                                         {"namespaces", K::strings},
                                         {"log_format", K::string, false, {"logfmt", "json"}}},
                                        {{"client", "loki.source.kubernetes_events/client"}}};
  m["loki.source.kubernetes_events/client"] = {{{"kubeconfig_file"}}};

  // Pipeline stages.
  m["stage.cri"] = {{{"max_partial_lines", K::integer},
                     {"max_partial_line_size", K::integer},
                     {"max_partial_line_size_truncate", K::boolean}}};
  m["stage.docker"] = {};
  m["stage.regex"] = {{req("expression"), {"source"}}};
  m["stage.json"] = {{{"expressions", K::string_map}, {"source"}, {"drop_malformed", K::boolean}}};
  m["stage.logfmt"] = {{{"mapping", K::string_map}, {"source"}}};
  m["stage.replace"] = {{req("expression"), {"source"}, {"replace"}}};
  m["stage.template"] = {{req("source"), req("template")}};
  m["stage.pack"] = {{req("labels", K::strings), {"ingest_timestamp", K::boolean}}};
  m["stage.timestamp"] = {{req("source"),
                           req("format"),
                           {"fallback_formats", K::strings},
                           {"location"},
                           {"action_on_failure"}}};
  m["stage.output"] = {{req("source")}};
  m["stage.label_drop"] = {{req("values", K::strings)}};
  m["stage.label_keep"] = {{req("values", K::strings)}};
  m["stage.labels"] = {{req("values", K::string_map)}};
  m["stage.static_labels"] = {{req("values", K::string_map)}};
  m["stage.structured_metadata"] = {{{"values", K::string_map}}};
  m["stage.limit"] = {{req("rate", K::number),
                       req("burst", K::number),
                       {"drop", K::boolean},
                       {"by_label_name"},
                       {"max_distinct_labels", K::integer}}};
  m["stage.multiline"] = {
      {req("firstline"), {"max_wait_time", K::duration}, {"max_lines", K::integer}}};
  m["stage.tenant"] = {{{"label"}, {"source"}, {"value"}}};
  m["stage.drop"] = {{{"source"},
                      {"separator"},
                      {"expression"},
                      {"value"},
                      {"older_than", K::duration},
                      {"longer_than", K::bytesize},
                      {"drop_counter_reason"}}};
  m["stage.sampling"] = {{req("rate", K::number), {"drop_counter_reason"}}};
  m["stage.decolorize"] = {};
  m["stage.match"] = {{req("selector"), {"pipeline_name"}, {"action"}, {"drop_counter_reason"}},
                      stages(),
                      false,
                      true};
  m["stage.metrics"] = {{},
                        {{"metric.counter", "metric.counter", true},
                         {"metric.gauge", "metric.gauge", true},
                         {"metric.histogram", "metric.histogram", true}},
                        false,
                        true};
  const std::vector<Attr> metric_common = {
      req("name"), {"description"}, {"source"}, {"prefix"}, {"max_idle_duration", K::duration},
      {"value"}};
  auto with = [&](std::vector<Attr> extra) {
    Body b{metric_common};
    b.attrs.insert(b.attrs.end(), extra.begin(), extra.end());
    return b;
  };
  m["metric.counter"] =
      with({req("action"), {"match_all", K::boolean}, {"count_entry_bytes", K::boolean}});
  m["metric.gauge"] = with({req("action")});
  m["metric.histogram"] = with({req("buckets", K::numbers)});

  // Exporters (arguments in bytewise order).
  m["prometheus.exporter.unix"] =
      exporter({"disable_collectors", "enable_collectors", "include_exporter_metrics",
                "procfs_path", "rootfs_path", "set_collectors", "sysfs_path", "udev_data_path"},
               {},
               {{"arp", "unix/arp"},
                {"bcache", "unix/bcache"},
                {"cpu", "unix/cpu"},
                {"disk", "unix/disk"},
                {"ethtool", "unix/ethtool"},
                {"filesystem", "unix/filesystem"},
                {"hwmon", "unix/hwmon"},
                {"ipvs", "unix/ipvs"},
                {"netclass", "unix/netclass"},
                {"netdev", "unix/netdev"},
                {"netstat", "unix/netstat"},
                {"ntp", "unix/ntp"},
                {"perf", "unix/perf"},
                {"powersupply", "unix/powersupply"},
                {"runit", "unix/runit"},
                {"supervisord", "unix/supervisord"},
                {"sysctl", "unix/sysctl"},
                {"systemd", "unix/systemd"},
                {"tapestats", "unix/tapestats"},
                {"textfile", "unix/textfile"},
                {"vmstat", "unix/vmstat"}});
  m["unix/arp"] = any_block({"device_exclude", "device_include", "netlink"});
  m["unix/bcache"] = any_block({"priority_stats"});
  m["unix/cpu"] = any_block({"bugs_include", "flags_include", "guest", "info"});
  m["unix/disk"] = any_block({"device_exclude", "device_include"});
  m["unix/ethtool"] = any_block({"device_exclude", "device_include", "metrics_include"});
  m["unix/filesystem"] = any_block({"fs_types_exclude", "mount_points_exclude", "mount_timeout"});
  m["unix/hwmon"] = any_block({"chip_exclude", "chip_include"});
  m["unix/ipvs"] = any_block({"backend_labels"});
  m["unix/netclass"] = any_block({"ignore_invalid_speed_device", "ignored_devices"});
  m["unix/netdev"] = any_block({"address_info", "device_exclude", "device_include"});
  m["unix/netstat"] = any_block({"fields"});
  m["unix/ntp"] = any_block({"ip_ttl", "local_offset_tolerance", "max_distance", "protocol_version",
                             "server", "server_is_local"});
  m["unix/perf"] = any_block({"cache_profilers", "cpus", "disable_cache_profilers",
                              "disable_hardware_profilers", "disable_software_profilers",
                              "hardware_profilers", "software_profilers", "tracepoint"});
  m["unix/powersupply"] = any_block({"ignored_supplies"});
  m["unix/runit"] = any_block({"service_dir"});
  m["unix/supervisord"] = any_block({"url"});
  m["unix/sysctl"] = any_block({"include", "include_info"});
  m["unix/systemd"] =
      any_block({"enable_restarts", "start_time", "task_metrics", "unit_exclude", "unit_include"});
  m["unix/tapestats"] = any_block({"ignored_devices"});
  m["unix/textfile"] = any_block({"directory"});
  m["unix/vmstat"] = any_block({"fields"});
  m["prometheus.exporter.process"] =
      exporter({"gather_smaps", "procfs_path", "recheck_on_scrape", "remove_empty_groups",
                "track_children", "track_threads"},
               {}, {{"matcher", "process/matcher", true}});
  m["process/matcher"] = any_block({"cmdline", "comm", "exe", "name"});
  m["prometheus.exporter.cadvisor"] = exporter(
      {"allowlisted_container_labels", "containerd_host", "containerd_namespace",
       "disable_root_cgroup_stats", "disabled_metrics", "docker_host", "docker_only",
       "docker_tls_ca", "docker_tls_cert", "docker_tls_key", "enabled_metrics",
       "env_metadata_allowlist", "perf_events_config", "raw_cgroup_prefix_allowlist",
       "resctrl_interval", "storage_duration", "store_container_labels", "use_docker_tls"});
  m["prometheus.exporter.statsd"] = exporter(
      {"cache_size", "cache_type", "event_flush_interval", "event_flush_threshold",
       "event_queue_size", "listen_tcp", "listen_udp", "listen_unixgram", "mapping_config_path",
       "parse_dogstatsd_tags", "parse_influxdb_tags", "parse_librato_tags", "parse_signalfx_tags",
       "read_buffer", "relay_addr", "relay_packet_length", "unix_socket_mode"});
  m["prometheus.exporter.redis"] = exporter({"check_key_groups",
                                             "check_key_groups_batch_size",
                                             "check_keys",
                                             "check_single_keys",
                                             "check_single_streams",
                                             "check_streams",
                                             "config_command",
                                             "connection_timeout",
                                             "count_keys",
                                             "export_client_list",
                                             "export_client_port",
                                             "export_key_values",
                                             "incl_system_metrics",
                                             "is_cluster",
                                             "is_tile38",
                                             "max_distinct_key_groups",
                                             "namespace",
                                             "ping_on_connect",
                                             "redis_addr",
                                             "redis_metrics_only",
                                             "redis_password",
                                             "redis_password_file",
                                             "redis_password_map_file",
                                             "redis_user",
                                             "script_path",
                                             "script_paths",
                                             "set_client_name",
                                             "skip_tls_verification",
                                             "tls_ca_cert_file",
                                             "tls_client_cert_file",
                                             "tls_client_key_file"},
                                            {"redis_addr"});
  m["prometheus.exporter.mysql"] = exporter(
      {"data_source_name", "disable_collectors", "enable_collectors", "enable_lock_wait_timeout",
       "lock_wait_timeout", "log_slow_filter", "set_collectors"},
      {},
      {{"heartbeat", "mysql/heartbeat"},
       {"info_schema.processlist", "mysql/info_schema.processlist"},
       {"info_schema.tables", "mysql/info_schema.tables"},
       {"mysql.user", "mysql/mysql.user"},
       {"perf_schema.eventsstatements", "mysql/perf_schema.eventsstatements"},
       {"perf_schema.file_instances", "mysql/perf_schema.file_instances"},
       {"perf_schema.memory_events", "mysql/perf_schema.memory_events"}});
  m["mysql/heartbeat"] = any_block({"database", "table", "utc"});
  m["mysql/info_schema.processlist"] =
      any_block({"min_time", "processes_by_host", "processes_by_user"});
  m["mysql/info_schema.tables"] = any_block({"databases"});
  m["mysql/mysql.user"] = any_block({"privileges"});
  m["mysql/perf_schema.eventsstatements"] =
      any_block({"exclude_schemas", "limit", "text_limit", "time_limit"});
  m["mysql/perf_schema.file_instances"] = any_block({"filter", "remove_prefix"});
  m["mysql/perf_schema.memory_events"] = any_block({"remove_prefix"});
  m["prometheus.exporter.postgres"] =
      exporter({"custom_queries_config_path", "data_source_names", "disable_default_metrics",
                "disable_settings_metrics"},
               {}, {{"autodiscovery", "postgres/autodiscovery"}});
  m["postgres/autodiscovery"] = any_block({"database_allowlist", "database_denylist", "enabled"});
  m["prometheus.exporter.memcached"] =
      exporter({"address", "timeout"}, {}, {{"tls_config", "tls_config"}});
  m["prometheus.exporter.kafka"] = exporter({"allow_auto_topic_creation",
                                             "allow_concurrency",
                                             "ca_file",
                                             "cert_file",
                                             "gssapi_kerberos_auth_type",
                                             "gssapi_kerberos_config_path",
                                             "gssapi_key_tab_path",
                                             "gssapi_realm",
                                             "gssapi_service_name",
                                             "groups_exclude_regex",
                                             "groups_filter_regex",
                                             "insecure_skip_verify",
                                             "instance",
                                             "kafka_cluster_name",
                                             "kafka_uris",
                                             "kafka_version",
                                             "key_file",
                                             "max_offsets",
                                             "metadata_refresh_interval",
                                             "offset_show_all",
                                             "prune_interval_seconds",
                                             "sasl_disable_pafx_fast",
                                             "sasl_mechanism",
                                             "sasl_password",
                                             "sasl_username",
                                             "tls_server_name",
                                             "topic_workers",
                                             "topics_exclude_regex",
                                             "topics_filter_regex",
                                             "use_sasl",
                                             "use_sasl_handshake",
                                             "use_tls",
                                             "use_zookeeper_lag",
                                             "zookeeper_uris"});
  m["prometheus.exporter.elasticsearch"] = exporter(
      {"address", "aliases", "all", "ca", "client_cert", "client_private_key", "cluster_settings",
       "clusterinfo_interval", "data_stream", "include_aliases", "indices", "indices_mappings",
       "indices_settings", "node", "shards", "slm", "snapshots", "ssl_skip_verify", "timeout"},
      {}, {{"basic_auth", "basic_auth"}});
  m["prometheus.exporter.blackbox"] =
      exporter({"config", "config_file", "probe_timeout_offset", "targets"});
  m["prometheus.exporter.snmp"] =
      exporter({"concurrency", "config", "config_file", "config_merge_strategy", "targets"}, {},
               {{"walk_param", "snmp/walk_param", true, true}});
  m["snmp/walk_param"] =
      any_block({"max_repetitions", "retries", "timeout", "use_unconnected_udp_socket"});
  m["prometheus.exporter.apache"] = exporter({"host_override", "insecure", "scrape_uri"});
  m["prometheus.exporter.consul"] =
      exporter({"allow_stale", "ca_file", "cert_file", "concurrent_request_limit",
                "generate_health_summary", "insecure_skip_verify", "key_file", "kv_filter",
                "kv_prefix", "require_consistent", "server", "server_name", "timeout"});
  m["prometheus.exporter.dnsmasq"] = exporter({"address", "expose_leases", "leases_file"});
  m["prometheus.exporter.mongodb"] =
      exporter({"collstats_colls", "compatible_mode", "direct_connect", "discovering_mode",
                "indexstats_colls", "mongodb_uri", "tls_basic_auth_config_path"},
               {"mongodb_uri"});
  m["prometheus.exporter.mssql"] = exporter({"connection_string", "max_idle_connections",
                                             "max_open_connections", "query_config", "timeout"},
                                            {"connection_string"});
  m["prometheus.exporter.squid"] = exporter({"address", "password", "username"}, {"address"});
  m["prometheus.exporter.github"] = exporter(
      {"api_token", "api_token_file", "api_url", "organizations", "repositories", "users"});
  m["prometheus.exporter.snowflake"] =
      exporter({"account_name", "password", "private_key_password", "private_key_path", "role",
                "username", "warehouse"},
               {"account_name", "username", "warehouse"});
  m["prometheus.exporter.self"] = exporter({});
  return m;
}

const std::map<std::string, Body, std::less<>>& bodies() {
  static const auto m = make_bodies();
  return m;
}

std::map<std::string, Component, std::less<>> make_components() {
  std::map<std::string, Component, std::less<>> c;
  c["discovery.kubernetes"] = {"discovery.kubernetes", {"targets"}};
  c["discovery.relabel"] = {"discovery.relabel", {"output"}};
  c["prometheus.scrape"] = {"prometheus.scrape", {}};
  c["prometheus.relabel"] = {"prometheus.relabel", {"receiver"}, Receiver::metrics};
  c["prometheus.remote_write"] = {"prometheus.remote_write", {"receiver"}, Receiver::metrics};
  c["local.file_match"] = {"local.file_match", {"targets"}};
  c["loki.source.file"] = {"loki.source.file", {}};
  c["loki.process"] = {"loki.process", {"receiver"}, Receiver::logs};
  c["loki.write"] = {"loki.write", {"receiver"}, Receiver::logs};
  c["loki.relabel"] = {"loki.relabel", {"receiver"}, Receiver::logs};
  c["loki.source.kubernetes_events"] = {"loki.source.kubernetes_events", {}};
  for (const auto& [id, b] : bodies()) {
    if (id.rfind("prometheus.exporter.", 0) == 0) c[id] = {id, {"targets"}};
  }
  return c;
}

}  // namespace

const Attr* Body::attr(std::string_view n) const {
  for (const auto& a : attrs) {
    if (a.name == n) return &a;
  }
  return nullptr;
}

const Nested* Body::block(std::string_view n) const {
  for (const auto& b : blocks) {
    if (b.name == n) return &b;
  }
  return nullptr;
}

std::size_t Body::attr_index(std::string_view n) const {
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    if (attrs[i].name == n) return i;
  }
  return attrs.size();
}

std::size_t Body::block_index(std::string_view n) const {
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].name == n) return i;
  }
  return blocks.size();
}

const Body* body(std::string_view id) {
  const auto& m = bodies();
  const auto it = m.find(id);
  return it == m.end() ? nullptr : &it->second;
}

const Component* component(std::string_view name) {
  static const auto c = make_components();
  const auto it = c.find(name);
  return it == c.end() ? nullptr : &it->second;
}

}  // namespace aop::alloy::check::schema
