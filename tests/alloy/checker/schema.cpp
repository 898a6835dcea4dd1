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

// Exporter arguments (attributes in bytewise name order, blocks likewise), `required`
// among them.
Body exporter(std::vector<Attr> attrs, const std::vector<std::string>& required = {},
              std::vector<Nested> blocks = {}) {
  Body b;
  b.bytewise = true;
  for (auto& a : attrs) {
    a.required = std::find(required.begin(), required.end(), a.name) != required.end();
  }
  b.attrs = std::move(attrs);
  b.blocks = std::move(blocks);
  return b;
}

// A block inside an exporter's arguments.
Body arguments(std::vector<Attr> attrs) {
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
  m["stage.logfmt"] = {{req("mapping", K::string_map), {"source"}}};
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
                       req("burst", K::integer),
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

  // Exporters: arguments in bytewise order, with the types of Alloy's argument structs.
  const K s = K::string;
  const K b = K::boolean;
  const K i = K::integer;
  const K d = K::duration;
  const K l = K::strings;
  m["prometheus.exporter.unix"] = exporter({{"disable_collectors", l},
                                            {"enable_collectors", l},
                                            {"include_exporter_metrics", b},
                                            {"procfs_path", s},
                                            {"rootfs_path", s},
                                            {"set_collectors", l},
                                            {"sysfs_path", s},
                                            {"udev_data_path", s}},
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
  m["unix/arp"] = arguments({{"device_exclude", s}, {"device_include", s}, {"netlink", b}});
  m["unix/bcache"] = arguments({{"priority_stats", b}});
  m["unix/cpu"] = arguments({{"bugs_include", s}, {"flags_include", s}, {"guest", b}, {"info", b}});
  m["unix/disk"] = arguments({{"device_exclude", s}, {"device_include", s}});
  m["unix/ethtool"] =
      arguments({{"device_exclude", s}, {"device_include", s}, {"metrics_include", s}});
  m["unix/filesystem"] =
      arguments({{"fs_types_exclude", s}, {"mount_points_exclude", s}, {"mount_timeout", d}});
  m["unix/hwmon"] = arguments({{"chip_exclude", s}, {"chip_include", s}});
  m["unix/ipvs"] = arguments({{"backend_labels", l}});
  m["unix/netclass"] = arguments({{"ignore_invalid_speed_device", b}, {"ignored_devices", s}});
  m["unix/netdev"] = arguments({{"address_info", b}, {"device_exclude", s}, {"device_include", s}});
  m["unix/netstat"] = arguments({{"fields", s}});
  m["unix/ntp"] = arguments({{"ip_ttl", i},
                             {"local_offset_tolerance", d},
                             {"max_distance", d},
                             {"protocol_version", i},
                             {"server", s},
                             {"server_is_local", b}});
  m["unix/perf"] = arguments({{"cache_profilers", l},
                              {"cpus", s},
                              {"disable_cache_profilers", b},
                              {"disable_hardware_profilers", b},
                              {"disable_software_profilers", b},
                              {"hardware_profilers", l},
                              {"software_profilers", l},
                              {"tracepoint", l}});
  m["unix/powersupply"] = arguments({{"ignored_supplies", s}});
  m["unix/runit"] = arguments({{"service_dir", s}});
  m["unix/supervisord"] = arguments({{"url", s}});
  m["unix/sysctl"] = arguments({{"include", l}, {"include_info", l}});
  m["unix/systemd"] = arguments({{"enable_restarts", b},
                                 {"start_time", b},
                                 {"task_metrics", b},
                                 {"unit_exclude", s},
                                 {"unit_include", s}});
  m["unix/tapestats"] = arguments({{"ignored_devices", s}});
  m["unix/textfile"] = arguments({{"directory", s}});
  m["unix/vmstat"] = arguments({{"fields", s}});
  m["prometheus.exporter.process"] = exporter({{"gather_smaps", b},
                                               {"procfs_path", s},
                                               {"recheck_on_scrape", b},
                                               {"remove_empty_groups", b},
                                               {"track_children", b},
                                               {"track_threads", b}},
                                              {}, {{"matcher", "process/matcher", true}});
  m["process/matcher"] = arguments({{"cmdline", l}, {"comm", l}, {"exe", l}, {"name", s}});
  m["prometheus.exporter.cadvisor"] = exporter({{"allowlisted_container_labels", l},
                                                {"containerd_host", s},
                                                {"containerd_namespace", s},
                                                {"disable_root_cgroup_stats", b},
                                                {"disabled_metrics", l},
                                                {"docker_host", s},
                                                {"docker_only", b},
                                                {"docker_tls_ca", s},
                                                {"docker_tls_cert", s},
                                                {"docker_tls_key", s},
                                                {"enabled_metrics", l},
                                                {"env_metadata_allowlist", l},
                                                {"perf_events_config", s},
                                                {"raw_cgroup_prefix_allowlist", l},
                                                {"resctrl_interval", d},
                                                {"storage_duration", d},
                                                {"store_container_labels", b},
                                                {"use_docker_tls", b}});
  m["prometheus.exporter.statsd"] = exporter({{"cache_size", i},
                                              {"cache_type", s},
                                              {"event_flush_interval", d},
                                              {"event_flush_threshold", i},
                                              {"event_queue_size", i},
                                              {"listen_tcp", s},
                                              {"listen_udp", s},
                                              {"listen_unixgram", s},
                                              {"mapping_config_path", s},
                                              {"parse_dogstatsd_tags", b},
                                              {"parse_influxdb_tags", b},
                                              {"parse_librato_tags", b},
                                              {"parse_signalfx_tags", b},
                                              {"read_buffer", i},
                                              {"relay_addr", s},
                                              {"relay_packet_length", i},
                                              {"unix_socket_mode", s}});
  m["prometheus.exporter.redis"] = exporter({{"check_key_groups", l},
                                             {"check_key_groups_batch_size", i},
                                             {"check_keys", l},
                                             {"check_single_keys", l},
                                             {"check_single_streams", l},
                                             {"check_streams", l},
                                             {"config_command", s},
                                             {"connection_timeout", d},
                                             {"count_keys", l},
                                             {"export_client_list", b},
                                             {"export_client_port", b},
                                             {"export_key_values", b},
                                             {"incl_system_metrics", b},
                                             {"is_cluster", b},
                                             {"is_tile38", b},
                                             {"max_distinct_key_groups", i},
                                             {"namespace", s},
                                             {"ping_on_connect", b},
                                             {"redis_addr", s},
                                             {"redis_metrics_only", b},
                                             {"redis_password", s},
                                             {"redis_password_file", s},
                                             {"redis_password_map_file", s},
                                             {"redis_user", s},
                                             {"script_path", s},
                                             {"script_paths", l},
                                             {"set_client_name", b},
                                             {"skip_tls_verification", b},
                                             {"tls_ca_cert_file", s},
                                             {"tls_client_cert_file", s},
                                             {"tls_client_key_file", s}},
                                            {"redis_addr"});
  m["prometheus.exporter.mysql"] =
      exporter({{"data_source_name", s},
                {"disable_collectors", l},
                {"enable_collectors", l},
                {"enable_lock_wait_timeout", b},
                {"lock_wait_timeout", i},
                {"log_slow_filter", b},
                {"set_collectors", l}},
               {},
               {{"heartbeat", "mysql/heartbeat"},
                {"info_schema.processlist", "mysql/info_schema.processlist"},
                {"info_schema.tables", "mysql/info_schema.tables"},
                {"mysql.user", "mysql/mysql.user"},
                {"perf_schema.eventsstatements", "mysql/perf_schema.eventsstatements"},
                {"perf_schema.file_instances", "mysql/perf_schema.file_instances"},
                {"perf_schema.memory_events", "mysql/perf_schema.memory_events"}});
  m["mysql/heartbeat"] = arguments({{"database", s}, {"table", s}, {"utc", b}});
  m["mysql/info_schema.processlist"] =
      arguments({{"min_time", i}, {"processes_by_host", b}, {"processes_by_user", b}});
  m["mysql/info_schema.tables"] = arguments({{"databases", s}});
  m["mysql/mysql.user"] = arguments({{"privileges", b}});
  m["mysql/perf_schema.eventsstatements"] =
      arguments({{"exclude_schemas", l}, {"limit", i}, {"text_limit", i}, {"time_limit", i}});
  m["mysql/perf_schema.file_instances"] = arguments({{"filter", s}, {"remove_prefix", s}});
  m["mysql/perf_schema.memory_events"] = arguments({{"remove_prefix", s}});
  m["prometheus.exporter.postgres"] = exporter({{"custom_queries_config_path", s},
                                                {"data_source_names", l},
                                                {"disable_default_metrics", b},
                                                {"disable_settings_metrics", b}},
                                               {}, {{"autodiscovery", "postgres/autodiscovery"}});
  m["postgres/autodiscovery"] =
      arguments({{"database_allowlist", l}, {"database_denylist", l}, {"enabled", b}});
  m["prometheus.exporter.memcached"] =
      exporter({{"address", s}, {"timeout", d}}, {}, {{"tls_config", "tls_config"}});
  m["prometheus.exporter.kafka"] = exporter({{"allow_auto_topic_creation", b},
                                             {"allow_concurrency", b},
                                             {"ca_file", s},
                                             {"cert_file", s},
                                             {"gssapi_kerberos_auth_type", s},
                                             {"gssapi_kerberos_config_path", s},
                                             {"gssapi_key_tab_path", s},
                                             {"gssapi_realm", s},
                                             {"gssapi_service_name", s},
                                             {"groups_exclude_regex", s},
                                             {"groups_filter_regex", s},
                                             {"insecure_skip_verify", b},
                                             {"instance", s},
                                             {"kafka_cluster_name", s},
                                             {"kafka_uris", l},
                                             {"kafka_version", s},
                                             {"key_file", s},
                                             {"max_offsets", i},
                                             {"metadata_refresh_interval", d},
                                             {"offset_show_all", b},
                                             {"prune_interval_seconds", i},
                                             {"sasl_disable_pafx_fast", b},
                                             {"sasl_mechanism", s},
                                             {"sasl_password", s},
                                             {"sasl_username", s},
                                             {"tls_server_name", s},
                                             {"topic_workers", i},
                                             {"topics_exclude_regex", s},
                                             {"topics_filter_regex", s},
                                             {"use_sasl", b},
                                             {"use_sasl_handshake", b},
                                             {"use_tls", b},
                                             {"use_zookeeper_lag", b},
                                             {"zookeeper_uris", l}});
  m["prometheus.exporter.elasticsearch"] = exporter({{"address", s},
                                                     {"aliases", b},
                                                     {"all", b},
                                                     {"ca", s},
                                                     {"client_cert", s},
                                                     {"client_private_key", s},
                                                     {"cluster_settings", b},
                                                     {"clusterinfo_interval", d},
                                                     {"data_stream", b},
                                                     {"include_aliases", b},
                                                     {"indices", b},
                                                     {"indices_mappings", b},
                                                     {"indices_settings", b},
                                                     {"node", s},
                                                     {"shards", b},
                                                     {"slm", b},
                                                     {"snapshots", b},
                                                     {"ssl_skip_verify", b},
                                                     {"timeout", d}},
                                                    {}, {{"basic_auth", "basic_auth"}});
  m["prometheus.exporter.blackbox"] = exporter(
      {{"config", s}, {"config_file", s}, {"probe_timeout_offset", d}, {"targets", K::objects}});
  m["prometheus.exporter.snmp"] = exporter({{"concurrency", i},
                                            {"config", s},
                                            {"config_file", s},
                                            {"config_merge_strategy", s},
                                            {"targets", K::objects}},
                                           {}, {{"walk_param", "snmp/walk_param", true, true}});
  m["snmp/walk_param"] = arguments(
      {{"max_repetitions", i}, {"retries", i}, {"timeout", d}, {"use_unconnected_udp_socket", b}});
  m["prometheus.exporter.apache"] =
      exporter({{"host_override", s}, {"insecure", b}, {"scrape_uri", s}});
  m["prometheus.exporter.consul"] = exporter({{"allow_stale", b},
                                              {"ca_file", s},
                                              {"cert_file", s},
                                              {"concurrent_request_limit", s},
                                              {"generate_health_summary", b},
                                              {"insecure_skip_verify", b},
                                              {"key_file", s},
                                              {"kv_filter", s},
                                              {"kv_prefix", s},
                                              {"require_consistent", b},
                                              {"server", s},
                                              {"server_name", s},
                                              {"timeout", d}});
  m["prometheus.exporter.dnsmasq"] =
      exporter({{"address", s}, {"expose_leases", b}, {"leases_file", s}});
  m["prometheus.exporter.mongodb"] = exporter({{"collstats_colls", l},
                                               {"compatible_mode", b},
                                               {"direct_connect", b},
                                               {"discovering_mode", b},
                                               {"indexstats_colls", l},
                                               {"mongodb_uri", s},
                                               {"tls_basic_auth_config_path", s}},
                                              {"mongodb_uri"});
  m["prometheus.exporter.mssql"] = exporter({{"connection_string", s},
                                             {"max_idle_connections", i},
                                             {"max_open_connections", i},
                                             {"query_config", s},
                                             {"timeout", d}},
                                            {"connection_string"});
  m["prometheus.exporter.squid"] =
      exporter({{"address", s}, {"password", s}, {"username", s}}, {"address"});
  m["prometheus.exporter.github"] = exporter({{"api_token", s},
                                              {"api_token_file", s},
                                              {"api_url", s},
                                              {"organizations", l},
                                              {"repositories", l},
                                              {"users", l}});
  m["prometheus.exporter.snowflake"] = exporter({{"account_name", s},
                                                 {"password", s},
                                                 {"private_key_password", s},
                                                 {"private_key_path", s},
                                                 {"role", s},
                                                 {"username", s},
                                                 {"warehouse", s}},
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
