// Translation of Integrations into Alloy exporters; see integrations.hpp.
//
// Each Integration is a member. Its exporter arguments either translate completely or the
// Integration is kept on static (a key or value without translation: running it on the
// static workloads keeps its data flowing). Its autoscrape rules and extra labels are
// validated like a scrape job's: what Alloy would refuse skips the Integration (class A).
// The remote writes and Loki clients it sends to belong to their instances (class B).
#include "reconcile/alloy/integrations.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <boost/json.hpp>

#include "reconcile/alloy/duration.hpp"
#include "reconcile/alloy/labels.hpp"
#include "reconcile/alloy/translator.hpp"

namespace aop::alloy {
namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;
using namespace detail;

constexpr std::string_view kEventJob = "integrations/kubernetes/eventhandler";

// How a static key's value becomes an Alloy argument.
enum class Arg {
  text,      // a string (scalars read as their text)
  flag,      // a bool
  integer,   // an integral number
  duration,  // a Go duration string, copied
  list,      // a list of strings
  csv,       // a list of strings; a comma-separated string is split (static CSV fields)
  special,   // handled by code: blocks, objects as JSON text, target lists
};

// A static config key and the exporter argument it becomes (`block` empty: top level).
struct ArgMap {
  std::string_view from;
  std::string_view block;
  std::string_view to;
  Arg type = Arg::text;
};

constexpr ArgMap same(std::string_view key, Arg type) {
  return {key, "", key, type};
}

// The `instance` label static mode gave an Integration without an `instance` key.
enum class DefaultInstance {
  none,      // the exporter computes the same value as static mode did
  agent_id,  // the agent identifier, `<hostname>:8080`
  name,      // the integration's name (blackbox, snmp)
};

struct Exporter {
  std::string_view integration;  // spec.name
  std::string_view component;    // prometheus.exporter.<component>
  std::vector<ArgMap> args;
  std::vector<std::string_view> required = {};  // static keys Alloy requires
  DefaultInstance instance = DefaultInstance::none;
  std::string_view target_label = {};  // copy of __param_target (blackbox_target, ...)
};

std::vector<Exporter> make_exporters() {
  using A = Arg;
  std::vector<Exporter> e;
  e.push_back({"node_exporter",
               "unix",
               {same("include_exporter_metrics", A::flag),
                same("procfs_path", A::text),
                same("sysfs_path", A::text),
                same("rootfs_path", A::text),
                same("udev_data_path", A::text),
                same("enable_collectors", A::csv),
                same("disable_collectors", A::csv),
                same("set_collectors", A::csv),
                {"arp_device_exclude", "arp", "device_exclude"},
                {"arp_device_include", "arp", "device_include"},
                {"arp_netlink", "arp", "netlink", A::flag},
                {"enable_bcache_priority_stats", "bcache", "priority_stats", A::flag},
                {"cpu_bugs_include", "cpu", "bugs_include"},
                {"enable_cpu_guest_seconds_metric", "cpu", "guest", A::flag},
                {"enable_cpu_info_metric", "cpu", "info", A::flag},
                {"cpu_flags_include", "cpu", "flags_include"},
                {"diskstats_device_exclude", "disk", "device_exclude"},
                {"diskstats_device_include", "disk", "device_include"},
                {"diskstats_ignored_devices", "disk", "device_exclude"},
                {"ethtool_device_exclude", "ethtool", "device_exclude"},
                {"ethtool_device_include", "ethtool", "device_include"},
                {"ethtool_metrics_include", "ethtool", "metrics_include"},
                {"filesystem_fs_types_exclude", "filesystem", "fs_types_exclude"},
                {"filesystem_mount_points_exclude", "filesystem", "mount_points_exclude"},
                {"filesystem_mount_timeout", "filesystem", "mount_timeout", A::duration},
                {"filesystem_ignored_mount_points", "filesystem", "mount_points_exclude"},
                {"filesystem_ignored_fs_types", "filesystem", "fs_types_exclude"},
                {"hwmon_chip_include", "hwmon", "chip_include"},
                {"hwmon_chip_exclude", "hwmon", "chip_exclude"},
                {"ipvs_backend_labels", "ipvs", "backend_labels", A::csv},
                {"ntp_ip_ttl", "ntp", "ip_ttl", A::integer},
                {"ntp_local_offset_tolerance", "ntp", "local_offset_tolerance", A::duration},
                {"ntp_max_distance", "ntp", "max_distance", A::duration},
                {"ntp_protocol_version", "ntp", "protocol_version", A::integer},
                {"ntp_server", "ntp", "server"},
                {"ntp_server_is_local", "ntp", "server_is_local", A::flag},
                {"netclass_ignore_invalid_speed_device", "netclass", "ignore_invalid_speed_device",
                 A::flag},
                {"netclass_ignored_devices", "netclass", "ignored_devices"},
                {"netdev_address_info", "netdev", "address_info", A::flag},
                {"netdev_device_exclude", "netdev", "device_exclude"},
                {"netdev_device_include", "netdev", "device_include"},
                {"netdev_device_whitelist", "netdev", "device_include"},
                {"netdev_device_blacklist", "netdev", "device_exclude"},
                {"netstat_fields", "netstat", "fields"},
                {"perf_cpus", "perf", "cpus"},
                {"perf_tracepoint", "perf", "tracepoint", A::csv},
                {"perf_disable_hardware_profilers", "perf", "disable_hardware_profilers", A::flag},
                {"perf_disable_software_profilers", "perf", "disable_software_profilers", A::flag},
                {"perf_disable_cache_profilers", "perf", "disable_cache_profilers", A::flag},
                {"perf_hardware_profilers", "perf", "hardware_profilers", A::csv},
                {"perf_software_profilers", "perf", "software_profilers", A::csv},
                {"perf_cache_profilers", "perf", "cache_profilers", A::csv},
                {"powersupply_ignored_supplies", "powersupply", "ignored_supplies"},
                {"runit_service_dir", "runit", "service_dir"},
                {"supervisord_url", "supervisord", "url"},
                {"sysctl_include", "sysctl", "include", A::csv},
                {"sysctl_include_info", "sysctl", "include_info", A::csv},
                {"systemd_enable_restarts_metrics", "systemd", "enable_restarts", A::flag},
                {"systemd_enable_start_time_metrics", "systemd", "start_time", A::flag},
                {"systemd_enable_task_metrics", "systemd", "task_metrics", A::flag},
                {"systemd_unit_exclude", "systemd", "unit_exclude"},
                {"systemd_unit_include", "systemd", "unit_include"},
                {"systemd_unit_whitelist", "systemd", "unit_include"},
                {"systemd_unit_blacklist", "systemd", "unit_exclude"},
                {"tapestats_ignored_devices", "tapestats", "ignored_devices"},
                {"textfile_directory", "textfile", "directory"},
                {"vmstat_fields", "vmstat", "fields"}},
               {},
               DefaultInstance::agent_id});
  e.push_back({"process_exporter",
               "process",
               {{"process_names", "matcher", "", A::special},
                same("procfs_path", A::text),
                same("track_children", A::flag),
                same("track_threads", A::flag),
                same("gather_smaps", A::flag),
                same("recheck_on_scrape", A::flag),
                same("remove_empty_groups", A::flag)},
               {},
               DefaultInstance::agent_id});
  e.push_back({"cadvisor",
               "cadvisor",
               {same("store_container_labels", A::flag),
                same("allowlisted_container_labels", A::list),
                same("env_metadata_allowlist", A::list),
                same("raw_cgroup_prefix_allowlist", A::list),
                same("perf_events_config", A::text),
                same("resctrl_interval", A::duration),
                same("disabled_metrics", A::list),
                same("enabled_metrics", A::list),
                same("storage_duration", A::duration),
                {"containerd", "", "containerd_host"},
                same("containerd_namespace", A::text),
                {"docker", "", "docker_host"},
                {"docker_tls", "", "use_docker_tls", A::flag},
                same("docker_tls_cert", A::text),
                same("docker_tls_key", A::text),
                same("docker_tls_ca", A::text),
                same("docker_only", A::flag),
                same("disable_root_cgroup_stats", A::flag)},
               {},
               DefaultInstance::agent_id});
  e.push_back({"statsd_exporter",
               "statsd",
               {same("listen_udp", A::text),
                same("listen_tcp", A::text),
                same("listen_unixgram", A::text),
                same("unix_socket_mode", A::text),
                {"mapping_config", "", "", A::special},
                same("mapping_config_path", A::text),
                same("read_buffer", A::integer),
                same("cache_size", A::integer),
                same("cache_type", A::text),
                same("event_queue_size", A::integer),
                same("event_flush_threshold", A::integer),
                same("event_flush_interval", A::duration),
                same("parse_dogstatsd_tags", A::flag),
                same("parse_influxdb_tags", A::flag),
                same("parse_librato_tags", A::flag),
                same("parse_signalfx_tags", A::flag),
                same("relay_addr", A::text),
                same("relay_packet_length", A::integer)},
               {},
               DefaultInstance::agent_id});
  e.push_back({"redis_exporter",
               "redis",
               {same("redis_addr", A::text),
                same("redis_user", A::text),
                same("redis_password", A::text),
                same("redis_password_file", A::text),
                same("redis_password_map_file", A::text),
                same("namespace", A::text),
                same("config_command", A::text),
                same("check_keys", A::csv),
                same("check_key_groups", A::csv),
                same("check_key_groups_batch_size", A::integer),
                same("max_distinct_key_groups", A::integer),
                same("check_single_keys", A::csv),
                same("check_streams", A::csv),
                same("check_single_streams", A::csv),
                same("export_key_values", A::flag),
                same("count_keys", A::csv),
                same("script_path", A::text),
                same("script_paths", A::list),
                same("connection_timeout", A::duration),
                same("tls_client_key_file", A::text),
                same("tls_client_cert_file", A::text),
                same("tls_ca_cert_file", A::text),
                same("set_client_name", A::flag),
                same("is_tile38", A::flag),
                same("is_cluster", A::flag),
                same("export_client_list", A::flag),
                same("export_client_port", A::flag),
                same("redis_metrics_only", A::flag),
                same("ping_on_connect", A::flag),
                same("incl_system_metrics", A::flag),
                same("skip_tls_verification", A::flag)},
               {"redis_addr"}});
  e.push_back(
      {"mysqld_exporter",
       "mysql",
       {same("data_source_name", A::text),
        same("enable_collectors", A::list),
        same("disable_collectors", A::list),
        same("set_collectors", A::list),
        same("enable_lock_wait_timeout", A::flag),
        same("lock_wait_timeout", A::integer),
        same("log_slow_filter", A::flag),
        {"info_schema_processlist_min_time", "info_schema.processlist", "min_time", A::integer},
        {"info_schema_processlist_processes_by_user", "info_schema.processlist",
         "processes_by_user", A::flag},
        {"info_schema_processlist_processes_by_host", "info_schema.processlist",
         "processes_by_host", A::flag},
        {"info_schema_tables_databases", "info_schema.tables", "databases"},
        {"perf_schema_eventsstatements_limit", "perf_schema.eventsstatements", "limit", A::integer},
        {"perf_schema_eventsstatements_time_limit", "perf_schema.eventsstatements", "time_limit",
         A::integer},
        {"perf_schema_eventsstatements_digtext_text_limit", "perf_schema.eventsstatements",
         "text_limit", A::integer},
        {"perf_schema_eventsstatements_exclude_schemas", "perf_schema.eventsstatements",
         "exclude_schemas", A::list},
        {"perf_schema_file_instances_filter", "perf_schema.file_instances", "filter"},
        {"perf_schema_file_instances_remove_prefix", "perf_schema.file_instances", "remove_prefix"},
        {"perf_schema_memory_events_remove_prefix", "perf_schema.memory_events", "remove_prefix"},
        {"heartbeat_database", "heartbeat", "database"},
        {"heartbeat_table", "heartbeat", "table"},
        {"heartbeat_utc", "heartbeat", "utc", A::flag},
        {"mysql_user_privileges", "mysql.user", "privileges", A::flag}}});
  e.push_back({"postgres_exporter",
               "postgres",
               {same("data_source_names", A::list),
                same("disable_settings_metrics", A::flag),
                same("disable_default_metrics", A::flag),
                {"query_path", "", "custom_queries_config_path"},
                {"autodiscover_databases", "autodiscovery", "enabled", A::flag},
                {"include_databases", "autodiscovery", "database_allowlist", A::list},
                {"exclude_databases", "autodiscovery", "database_denylist", A::list}}});
  e.push_back({"memcached_exporter",
               "memcached",
               {{"memcached_address", "", "address"},
                same("timeout", A::duration),
                {"tls_config", "tls_config", "", A::special}}});
  e.push_back({"kafka_exporter",
               "kafka",
               {same("kafka_uris", A::list),
                same("use_sasl", A::flag),
                same("use_sasl_handshake", A::flag),
                same("sasl_username", A::text),
                same("sasl_password", A::text),
                same("sasl_mechanism", A::text),
                same("sasl_disable_pafx_fast", A::flag),
                same("use_tls", A::flag),
                same("tls_server_name", A::text),
                same("ca_file", A::text),
                same("cert_file", A::text),
                same("key_file", A::text),
                same("insecure_skip_verify", A::flag),
                same("kafka_version", A::text),
                same("use_zookeeper_lag", A::flag),
                same("zookeeper_uris", A::list),
                same("kafka_cluster_name", A::text),
                same("metadata_refresh_interval", A::duration),
                same("gssapi_service_name", A::text),
                same("gssapi_kerberos_config_path", A::text),
                same("gssapi_realm", A::text),
                same("gssapi_key_tab_path", A::text),
                same("gssapi_kerberos_auth_type", A::text),
                same("offset_show_all", A::flag),
                same("topic_workers", A::integer),
                same("allow_concurrency", A::flag),
                same("allow_auto_topic_creation", A::flag),
                same("max_offsets", A::integer),
                same("prune_interval_seconds", A::integer),
                same("topics_filter_regex", A::text),
                same("topics_exclude_regex", A::text),
                same("groups_filter_regex", A::text),
                same("groups_exclude_regex", A::text)}});
  e.push_back({"elasticsearch_exporter",
               "elasticsearch",
               {same("address", A::text),
                same("timeout", A::duration),
                same("all", A::flag),
                same("node", A::text),
                same("indices", A::flag),
                same("indices_settings", A::flag),
                same("cluster_settings", A::flag),
                same("shards", A::flag),
                same("snapshots", A::flag),
                same("clusterinfo_interval", A::duration),
                same("ca", A::text),
                same("client_private_key", A::text),
                same("client_cert", A::text),
                same("ssl_skip_verify", A::flag),
                same("aliases", A::flag),
                same("include_aliases", A::flag),
                same("indices_mappings", A::flag),
                same("slm", A::flag),
                same("data_stream", A::flag),
                {"basic_auth", "basic_auth", "", A::special}}});
  e.push_back({"blackbox",
               "blackbox",
               {same("config_file", A::text),
                same("probe_timeout_offset", A::duration),
                {"blackbox_config", "", "config", A::special},
                {"blackbox_targets", "", "targets", A::special}},
               {},
               DefaultInstance::name,
               "blackbox_target"});
  e.push_back({"snmp",
               "snmp",
               {same("config_file", A::text),
                same("config_merge_strategy", A::text),
                same("concurrency", A::integer),
                {"snmp_config", "", "config", A::special},
                {"snmp_targets", "", "targets", A::special},
                {"walk_params", "walk_param", "", A::special}},
               {},
               DefaultInstance::name,
               "snmp_target"});
  e.push_back(
      {"apache_http",
       "apache",
       {same("scrape_uri", A::text), same("host_override", A::text), same("insecure", A::flag)}});
  e.push_back({"consul_exporter",
               "consul",
               {same("server", A::text), same("ca_file", A::text), same("cert_file", A::text),
                same("key_file", A::text), same("server_name", A::text),
                same("timeout", A::duration), same("insecure_skip_verify", A::flag),
                same("concurrent_request_limit", A::text), same("allow_stale", A::flag),
                same("require_consistent", A::flag), same("kv_prefix", A::text),
                same("kv_filter", A::text), same("generate_health_summary", A::flag)}});
  e.push_back({"dnsmasq_exporter",
               "dnsmasq",
               {{"dnsmasq_address", "", "address"},
                {"leases_path", "", "leases_file"},
                same("expose_leases", A::flag)}});
  e.push_back({"mongodb_exporter",
               "mongodb",
               {same("mongodb_uri", A::text), same("direct_connect", A::flag),
                same("discovering_mode", A::flag), same("tls_basic_auth_config_path", A::text),
                same("compatible_mode", A::flag), same("collstats_colls", A::list),
                same("indexstats_colls", A::list)},
               {"mongodb_uri"}});
  e.push_back({"mssql",
               "mssql",
               {same("connection_string", A::text),
                same("max_idle_connections", A::integer),
                same("max_open_connections", A::integer),
                same("timeout", A::duration),
                {"query_config", "", "query_config", A::special}},
               {"connection_string"}});
  e.push_back({"squid_exporter",
               "squid",
               {same("address", A::text), same("username", A::text), same("password", A::text)},
               {"address"}});
  e.push_back(
      {"github_exporter",
       "github",
       {same("api_url", A::text), same("repositories", A::list), same("organizations", A::list),
        same("users", A::list), same("api_token", A::text), same("api_token_file", A::text)}});
  e.push_back({"snowflake_exporter",
               "snowflake",
               {same("account_name", A::text), same("username", A::text), same("password", A::text),
                same("private_key_path", A::text), same("private_key_password", A::text),
                same("role", A::text), same("warehouse", A::text)},
               {"account_name", "username", "warehouse"}});
  e.push_back({"agent", "self", {}, {}, DefaultInstance::agent_id});
  return e;
}

const Exporter* exporter_for(std::string_view integration) {
  static const std::vector<Exporter> exporters = make_exporters();
  for (const auto& e : exporters) {
    if (e.integration == integration) return &e;
  }
  return nullptr;
}

std::vector<std::string> sorted_keys(const object& o) {
  std::vector<std::string> keys;
  keys.reserve(o.size());
  for (const auto& kv : o) keys.emplace_back(kv.key());
  std::sort(keys.begin(), keys.end());
  return keys;
}

// The config as the static config file held it (null members and elements removed), its
// object members in bytewise order so that nothing depends on the order they were given in.
value normalized(const value& v) {
  if (v.is_object()) {
    object o;
    for (const auto& k : sorted_keys(v.get_object())) {
      const value& e = v.get_object().at(k);
      if (!e.is_null()) o[k] = normalized(e);
    }
    return o;
  }
  if (v.is_array()) {
    array a;
    for (const auto& e : v.get_array()) {
      if (!e.is_null()) a.push_back(normalized(e));
    }
    return a;
  }
  return v;
}

// What keeps an Integration on static: the field and what is wrong with it.
struct Untranslated {
  std::string field;
  std::string what;
};

// The keys every Integration shares, consumed by the translation itself.
struct Common {
  const object* autoscrape = nullptr;
  std::optional<std::string> instance;
  std::vector<std::pair<std::string, std::string>> extra_labels;  // bytewise by name
};

// Static mode's agent identifier: $HOSTNAME (the node name in operator pods) or the host
// name, and the agent's HTTP port under the operator.
Expr agent_id() {
  return Expr::concat(
      {Expr::call("coalesce", {Expr::env("HOSTNAME"), Expr::constant("constants.hostname")}),
       Expr::string(":8080")});
}

class IntegrationsTranslator : Translator {
 public:
  explicit IntegrationsTranslator(const IntegrationsRoot& root)
      : Translator(root.ns, root.name, root.integer_numbers), root_(root) {}

  IntegrationsConfig run(const value& tree, const std::vector<IntegrationMember>& members,
                         bool all_nodes) {
    IntegrationsConfig out;
    const object* top = tree.if_object();
    const object empty;
    const auto section = [&](const char* key) -> const object& {
      const value* v = top != nullptr ? top->if_contains(key) : nullptr;
      return v != nullptr && v->is_object() ? v->get_object() : empty;
    };
    const object& metrics = section("metrics");
    const object& logs = section("logs");
    if (const value* g = metrics.if_contains("global"); g && g->is_object()) {
      global_ = g->get_object();
    }
    index(metrics, metrics_instances_);
    index(logs, logs_instances_);

    std::vector<File> files;
    for (const auto& m : members) {
      if (m.all_nodes == all_nodes) integration(m, files, out.kept);
    }
    if (!files.empty()) {
      const value* server = top != nullptr ? top->if_contains("server") : nullptr;
      out.files.push_back({"main.alloy", {logging(server ? server->if_object() : nullptr)}});
      for (auto& [full, c] : metrics_instances_) {
        if (auto it = remote_writes_.find(full); it != remote_writes_.end()) {
          out.files.push_back({it->second.label + ".alloy", {std::move(it->second.block)}});
        }
      }
      for (auto& [full, c] : logs_instances_) {
        if (auto it = clients_.find(full); it != clients_.end() && !it->second.blocks.empty()) {
          out.files.push_back({it->second.file + ".alloy", std::move(it->second.blocks)});
        }
      }
      for (auto& f : files) out.files.push_back(std::move(f));
    }
    out.problems = std::move(problems_);
    if (translation_failed(out.problems)) out.files.clear();
    return out;
  }

 private:
  struct RemoteWrite {
    std::string label;
    Block block;
  };
  struct Clients {
    std::string file;
    std::vector<Block> blocks;
    std::vector<Expr> receivers;
  };

  // The instance entries of a static `metrics` or `logs` section by `<ns>/<name>`.
  void index(const object& section, std::vector<std::pair<std::string, const object*>>& out) {
    for (const object* c : instances_of(section)) {
      const auto [ins, iname] = instance_name(*c);
      std::string full = ins;
      full.append("/").append(iname);
      out.emplace_back(std::move(full), c);
    }
  }

  void integration(const IntegrationMember& m, std::vector<File>& files,
                   std::vector<KeptIntegration>& kept) {
    const value config = m.config.is_null() ? value(object()) : normalized(m.config);
    const auto keep = [&](const Untranslated& u) {
      kept.push_back({m.ns, m.name, m.integration, u.field, u.field + ": " + u.what});
      add(ProblemClass::kept, {"Integration", m.ns, m.name, u.field},
          "integration " + m.integration + " has no Alloy translation (" + u.field + ": " + u.what +
              "); it keeps running on the Grafana Agent static workloads");
    };
    if (!config.is_object()) return keep({"spec.config", "is not a mapping"});
    const object& c = config.get_object();
    if (m.integration == "eventhandler") {
      if (auto u = eventhandler(m, c, files)) keep(*u);
      return;
    }
    const Exporter* e = exporter_for(m.integration);
    if (e == nullptr) return keep({"spec.name", "no Alloy component translates it"});
    Common common;
    if (auto u = common_keys(c, true, common)) return keep(*u);
    Block arguments("prometheus.exporter." + std::string(e->component));
    if (auto u = exporter_arguments(*e, c, arguments)) return keep(*u);

    // Translated: what Alloy would refuse in the labels and autoscrape skips it.
    Sink s;
    env_warnings(config, "spec.config", s);
    std::vector<Block> rules = label_rules(m, *e, common, s);
    const object* as = common.autoscrape;
    const bool enabled = as != nullptr && as->contains("enable") && as->at("enable").is_bool() &&
                         as->at("enable").get_bool();
    const std::string mi = enabled ? text_of(*as, "metrics_instance").value_or("") : "";
    const object* instance = find(metrics_instances_, mi);
    std::vector<std::pair<std::string, Expr>> scrape_attrs;
    std::vector<Block> metric_rules;
    if (enabled && mi.empty()) {
      s.warnings.push_back(
          "spec.config.autoscrape.metrics_instance: not set (the exporter runs, nothing scrapes "
          "it)");
    }
    if (instance != nullptr) {
      const std::string path = "spec.config.autoscrape";
      for (auto& r :
           rule_blocks(as->if_contains("relabel_configs"), "rule", path + ".relabel_configs", s)) {
        rules.push_back(std::move(r));
      }
      metric_rules = rule_blocks(as->if_contains("metric_relabel_configs"), "rule",
                                 path + ".metric_relabel_configs", s);
      scrape_attrs = timing_attributes(*as, path, s);
    }
    member_findings({"Integration", m.ns, m.name, "spec.config"}, s);
    if (!s.clean()) return;

    const std::string label =
        labels_.label("integration", m.ns + "_" + m.name, "Integration/" + m.ns + "/" + m.name);
    const std::string component = "prometheus.exporter." + std::string(e->component);
    File f{label + ".alloy", {labelled(arguments, label)}};
    if (instance != nullptr) {
      const std::string mi_label = remote_write_of(mi, *instance);
      Block relabel("discovery.relabel", label);
      relabel.attr("targets", Expr::ref(component, label, "targets"));
      for (auto& r : rules) relabel.block(std::move(r));
      f.blocks.push_back(std::move(relabel));
      Block scrape("prometheus.scrape", label);
      scrape.attr("targets", Expr::ref("discovery.relabel", label, "output"));
      scrape.attr("forward_to", scrape_forward_to(label, mi_label, !metric_rules.empty()));
      scrape.attr("job_name", Expr::string("integrations/" + m.integration));
      for (auto& [n, v] : scrape_attrs) scrape.attr(n, std::move(v));
      f.blocks.push_back(std::move(scrape));
      if (!metric_rules.empty()) {
        for (auto& b : relabel_split(label, mi_label, std::move(metric_rules))) {
          f.blocks.push_back(std::move(b));
        }
      }
    }
    files.push_back(std::move(f));
  }

  static const object* find(const std::vector<std::pair<std::string, const object*>>& index,
                            const std::string& full) {
    for (const auto& [name, c] : index) {
      if (name == full) return c;
    }
    return nullptr;
  }

  // `autoscrape`, `instance`, `extra_labels`.
  std::optional<Untranslated> common_keys(const object& c, bool autoscrape, Common& out) const {
    if (const value* a = c.if_contains("autoscrape")) {
      if (!autoscrape) {
        return Untranslated{"spec.config.autoscrape", "this integration has no metrics to scrape"};
      }
      if (!a->is_object()) return Untranslated{"spec.config.autoscrape", "is not a mapping"};
      const object& o = a->get_object();
      for (const auto& key : sorted_keys(o)) {
        const std::string field = "spec.config.autoscrape." + key;
        const value& v = o.at(key);
        if (key == "enable") {
          if (!v.is_bool()) return Untranslated{field, "expected a boolean"};
        } else if (key == "metrics_instance" || key == "scrape_interval" ||
                   key == "scrape_timeout") {
          if (!scalar_text(v)) return Untranslated{field, "expected a string"};
        } else if (key == "relabel_configs" || key == "metric_relabel_configs") {
          if (!v.is_array()) return Untranslated{field, "expected a list"};
        } else {
          return Untranslated{field, "not an autoscrape setting the translation covers"};
        }
      }
      out.autoscrape = &o;
    }
    if (const value* i = c.if_contains("instance")) {
      out.instance = scalar_text(*i);
      if (!out.instance) return Untranslated{"spec.config.instance", "expected a string"};
    }
    if (const value* l = c.if_contains("extra_labels")) {
      if (!l->is_object()) return Untranslated{"spec.config.extra_labels", "is not a mapping"};
      for (const auto& key : sorted_keys(l->get_object())) {
        const auto v = scalar_text(l->get_object().at(key));
        if (!v) return Untranslated{"spec.config.extra_labels." + key, "expected a string"};
        out.extra_labels.emplace_back(key, *v);
      }
    }
    return std::nullopt;
  }

  // The target labels of static integrations-next, then extra_labels.
  std::vector<Block> label_rules(const IntegrationMember& m, const Exporter& e,
                                 const Common& common, Sink& s) const {
    std::vector<Block> rules;
    rules.push_back(
        constant_rule("job", Expr::string(literal_replacement("integrations/" + m.integration))));
    rules.push_back(constant_rule("agent_hostname", agent_id()));
    if (common.instance) {
      rules.push_back(
          constant_rule("instance", Expr::string(literal_replacement(*common.instance))));
    } else if (e.instance == DefaultInstance::agent_id) {
      rules.push_back(constant_rule("instance", agent_id()));
    } else if (e.instance == DefaultInstance::name) {
      rules.push_back(constant_rule("instance", Expr::string(literal_replacement(m.integration))));
    }
    rules.push_back(constant_rule("__meta_agent_integration_name",
                                  Expr::string(literal_replacement(m.integration))));
    rules.push_back(Block("rule")
                        .attr("source_labels", Expr::strings({"instance"}))
                        .attr("target_label", Expr::string("__meta_agent_integration_instance")));
    rules.push_back(constant_rule("__meta_agent_integration_autoscrape", Expr::string("1")));
    if (!e.target_label.empty()) {
      rules.push_back(Block("rule")
                          .attr("source_labels", Expr::strings({"__param_target"}))
                          .attr("target_label", Expr::string(std::string(e.target_label))));
    }
    extra_label_rules(common, s, rules);
    return rules;
  }

  void extra_label_rules(const Common& common, Sink& s, std::vector<Block>& rules) const {
    for (const auto& [k, v] : common.extra_labels) {
      if (!label_name(k)) {
        s.reject("spec.config.extra_labels." + k, "not a valid label name");
        continue;
      }
      rules.push_back(constant_rule(k, Expr::string(literal_replacement(v))));
    }
  }

  // job_name, scrape_interval and scrape_timeout as the static agent defaulted them.
  std::vector<std::pair<std::string, Expr>> timing_attributes(const object& as,
                                                              const std::string& path, Sink& s) {
    if (!global_read_) {
      global_interval_ = global_duration(global_, "scrape_interval", kDefaultInterval);
      global_timeout_ = global_duration(global_, "scrape_timeout", kDefaultTimeout);
      global_read_ = true;
    }
    const Timing timing = scrape_timing(as, path, global_interval_, global_timeout_, s);
    const std::uint64_t si = timing.interval;
    const std::uint64_t st = timing.timeout;
    return {{"scrape_interval", Expr::string(*go_duration(prometheus_duration_text(si)))},
            {"scrape_timeout", Expr::string(*go_duration(prometheus_duration_text(st)))}};
  }

  // The remote write of the MetricsInstance an Integration sends to, emitted once.
  std::string remote_write_of(const std::string& full, const object& c) {
    if (auto it = remote_writes_.find(full); it != remote_writes_.end()) return it->second.label;
    const auto [ins, iname] = instance_name(c);
    std::string label = labels_.label("mi", ins + "_" + iname, "MetricsInstance/" + full);
    // The integrations configs carry no replica label.
    Block b = remote_write(c, global_, label, {"MetricsInstance", ins, iname, "spec"}, "");
    remote_writes_.emplace(full, RemoteWrite{label, std::move(b)});
    return label;
  }

  // The receivers of the LogsInstance an eventhandler sends to, its clients emitted once.
  std::vector<Expr> receivers_of(const std::string& full, const object& c) {
    if (auto it = clients_.find(full); it != clients_.end()) return it->second.receivers;
    const auto [ins, iname] = instance_name(c);
    Clients out;
    out.file = labels_.label("li", ins + "_" + iname, "LogsInstance/" + full);
    out.blocks = loki_writes(c, root_.agent_clients.count(full) != 0, out.receivers);
    auto receivers = out.receivers;
    clients_.emplace(full, std::move(out));
    return receivers;
  }

  // ---- Exporter arguments -------------------------------------------------------------

  struct Converted {
    std::optional<Expr> expr;  // nullopt without error: omitted (an empty CSV string)
    std::string error;
  };

  Converted argument(const value& v, Arg type) const {
    switch (type) {
      case Arg::text:
        if (auto x = scalar_text(v)) return {Expr::string(*x), {}};
        return {std::nullopt, "expected a string"};
      case Arg::flag:
        if (v.is_bool()) return {Expr::boolean(v.get_bool()), {}};
        return {std::nullopt, "expected a boolean"};
      case Arg::integer:
        if (v.is_number()) {
          const double d = v.to_number<double>();
          if (std::trunc(d) == d && std::fabs(d) < kTwoPow53) return {Expr::number(d), {}};
        }
        return {std::nullopt, "expected an integer"};
      case Arg::duration:
        if (v.is_string() && parse_go_duration(v.get_string())) {
          return {Expr::string(std::string(v.get_string())), {}};
        }
        return {std::nullopt, "expected a Go duration such as 30s"};
      case Arg::csv:
        if (v.is_string()) {
          // Static mode read these as comma-separated strings.
          const std::string_view text = v.get_string();
          if (text.empty()) return {};
          std::vector<std::string> items;
          for (std::size_t start = 0;;) {
            const auto comma = text.find(',', start);
            items.emplace_back(text.substr(
                start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
            if (comma == std::string_view::npos) break;
            start = comma + 1;
          }
          return {Expr::strings(items), {}};
        }
        [[fallthrough]];
      case Arg::list: {
        const char* what = type == Arg::csv
                               ? "expected a list of strings or a comma-separated string"
                               : "expected a list of strings";
        if (!v.is_array()) return {std::nullopt, what};
        std::vector<std::string> items;
        for (const auto& i : v.get_array()) {
          auto x = i.is_string() || i.is_number() ? scalar_text(i) : std::nullopt;
          if (!x) return {std::nullopt, what};
          items.push_back(std::move(*x));
        }
        return {Expr::strings(items), {}};
      }
      case Arg::special:
        break;
    }
    return {std::nullopt, "not translated"};
  }

  // The exporter block's arguments: attributes then blocks, each in bytewise name order.
  struct Arguments {
    std::map<std::string, Expr> attrs;
    std::map<std::string, std::map<std::string, Expr>> simple_blocks;
    std::map<std::string, std::vector<Block>> blocks;
  };

  std::optional<Untranslated> exporter_arguments(const Exporter& e, const object& c,
                                                 Block& out) const {
    const std::string component = "prometheus.exporter." + std::string(e.component);
    if (e.integration == "blackbox" && c.contains("config_file") && c.contains("blackbox_config")) {
      return Untranslated{"spec.config.blackbox_config",
                          "config_file is set too (Alloy accepts only one of them)"};
    }
    Arguments args;
    std::map<std::pair<std::string_view, std::string_view>, std::string> taken;
    for (const auto& key : sorted_keys(c)) {
      if (key == "autoscrape" || key == "instance" || key == "extra_labels") continue;
      const std::string field = "spec.config." + key;
      const auto it = std::find_if(e.args.begin(), e.args.end(),
                                   [&](const ArgMap& a) { return a.from == key; });
      if (it == e.args.end()) {
        if (e.args.empty()) return Untranslated{field, component + " takes no arguments"};
        return Untranslated{field, "not an argument of " + component};
      }
      const value& v = c.at(key);
      if (it->type == Arg::special) {
        if (auto u = special(*it, field, v, args)) return u;
        continue;
      }
      const auto [prev, fresh] = taken.emplace(std::pair{it->block, it->to}, key);
      if (!fresh) {
        return Untranslated{field, prev->second + " is set too and means the same (the static " +
                                       "agent rejected the pair)"};
      }
      Converted x = argument(v, it->type);
      if (!x.error.empty()) return Untranslated{field, x.error};
      if (!x.expr) continue;
      if (it->block.empty()) {
        args.attrs.emplace(std::string(it->to), std::move(*x.expr));
      } else {
        args.simple_blocks[std::string(it->block)].emplace(std::string(it->to), std::move(*x.expr));
      }
    }
    for (const auto& r : e.required) {
      if (!c.contains(r)) {
        return Untranslated{"spec.config." + std::string(r), "required by " + component};
      }
    }
    for (auto& [name, x] : args.attrs) out.attr(name, std::move(x));
    for (auto& [name, attrs] : args.simple_blocks) {
      Block b(name);
      for (auto& [n, x] : attrs) b.attr(n, std::move(x));
      args.blocks[name].push_back(std::move(b));
    }
    for (auto& [name, blocks] : args.blocks) {
      for (auto& b : blocks) out.block(std::move(b));
    }
    return std::nullopt;
  }

  // A client block (TLS, basic auth) read with the shared mapping, its attributes in the
  // order of every other block of that name; any finding keeps the Integration on static.
  static std::optional<Untranslated> client_block(std::optional<Block> b, const Sink& s,
                                                  Arguments& args) {
    for (const auto* list : {&s.unsupported, &s.rejected}) {
      if (list->empty()) continue;
      const std::string& m = list->front();
      const auto colon = m.find(": ");
      return Untranslated{m.substr(0, colon), m.substr(colon + 2)};
    }
    if (b) args.blocks[b->name()].push_back(std::move(*b));
    return std::nullopt;
  }

  // An object of string arguments: `keys` allowed, attributes in bytewise order.
  std::optional<Untranslated> string_object(const value& v, const std::string& field,
                                            std::initializer_list<std::string_view> keys,
                                            std::vector<std::pair<std::string, Expr>>& out) const {
    if (!v.is_object()) return Untranslated{field, "is not a mapping"};
    for (const auto& key : sorted_keys(v.get_object())) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        return Untranslated{dotted(field, key), "not translated"};
      }
      auto x = scalar_text(v.get_object().at(key));
      if (!x) return Untranslated{dotted(field, key), "expected a string"};
      out.emplace_back(key, Expr::string(*x));
    }
    return std::nullopt;
  }

  std::optional<Untranslated> special(const ArgMap& a, const std::string& field, const value& v,
                                      Arguments& args) const {
    const std::string_view key = a.from;
    if (key == "mapping_config") {
      return Untranslated{field,
                          "an inline mapping has no Alloy equivalent (Alloy reads "
                          "mapping_config_path only)"};
    }
    if (key == "tls_config" || key == "basic_auth") {
      Sink s;
      auto b = key == "tls_config" ? tls_block(v, field, s) : basic_auth_block(v, field, s);
      return client_block(std::move(b), s, args);
    }
    if (key == "blackbox_config" || key == "snmp_config" || key == "query_config") {
      // The exporter reads this text as YAML, of which JSON is a subset.
      if (!v.is_object()) return Untranslated{field, "is not a mapping"};
      args.attrs.emplace(std::string(a.to), Expr::string(canonical_json(v)));
      return std::nullopt;
    }
    if (key == "blackbox_targets" || key == "snmp_targets") {
      if (!v.is_array()) return Untranslated{field, "expected a list"};
      std::vector<Expr> targets;
      const auto& list = v.get_array();
      for (std::size_t i = 0; i < list.size(); ++i) {
        std::vector<std::pair<std::string, Expr>> entry;
        const std::string at = field + "[" + std::to_string(i) + "]";
        auto u =
            key == "blackbox_targets"
                ? string_object(list[i], at, {"address", "module", "name"}, entry)
                : string_object(
                      list[i], at,
                      {"address", "auth", "module", "name", "snmp_context", "walk_params"}, entry);
        if (u) return u;
        targets.push_back(Expr::object(std::move(entry)));
      }
      args.attrs.emplace(std::string(a.to), Expr::list(std::move(targets)));
      return std::nullopt;
    }
    if (key == "walk_params") {
      if (!v.is_object()) return Untranslated{field, "is not a mapping"};
      for (const auto& name : sorted_keys(v.get_object())) {
        const std::string at = dotted(field, name);
        if (!is_identifier(name)) return Untranslated{at, "not a valid Alloy block label"};
        const value& p = v.get_object().at(name);
        if (!p.is_object()) return Untranslated{at, "is not a mapping"};
        Block b("walk_param", name);
        static const std::vector<std::pair<std::string_view, Arg>> kFields = {
            {"max_repetitions", Arg::integer},
            {"retries", Arg::integer},
            {"timeout", Arg::duration},
            {"use_unconnected_udp_socket", Arg::flag}};
        for (const auto& k : sorted_keys(p.get_object())) {
          const auto f = std::find_if(kFields.begin(), kFields.end(),
                                      [&](const auto& x) { return x.first == k; });
          if (f == kFields.end()) return Untranslated{dotted(at, k), "not translated"};
          Converted x = argument(p.get_object().at(k), f->second);
          if (!x.error.empty()) return Untranslated{dotted(at, k), x.error};
          b.attr(k, std::move(*x.expr));
        }
        args.blocks["walk_param"].push_back(std::move(b));
      }
      return std::nullopt;
    }
    if (key == "process_names") {
      if (!v.is_array()) return Untranslated{field, "expected a list"};
      const auto& list = v.get_array();
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = field + "[" + std::to_string(i) + "]";
        if (!list[i].is_object()) return Untranslated{at, "is not a mapping"};
        Block b("matcher");
        for (const auto& k : sorted_keys(list[i].get_object())) {
          const Arg type = k == "name" ? Arg::text : Arg::list;
          if (k != "name" && k != "comm" && k != "exe" && k != "cmdline") {
            return Untranslated{dotted(at, k), "not translated"};
          }
          Converted x = argument(list[i].get_object().at(k), type);
          if (!x.error.empty()) return Untranslated{dotted(at, k), x.error};
          b.attr(k, std::move(*x.expr));
        }
        args.blocks["matcher"].push_back(std::move(b));
      }
      return std::nullopt;
    }
    return Untranslated{field, "not translated"};
  }

  // ---- eventhandler ---------------------------------------------------------------------

  std::optional<Untranslated> eventhandler(const IntegrationMember& m, const object& c,
                                           std::vector<File>& files) {
    Common common;
    if (auto u = common_keys(c, false, common)) return u;
    Sink s;
    for (const auto& key : sorted_keys(c)) {
      const std::string field = "spec.config." + key;
      if (key == "instance" || key == "extra_labels") continue;
      if (key == "send_timeout" || key == "informer_resync" || key == "flush_interval" ||
          key == "cache_path") {
        s.warnings.push_back(field +
                             ": has no equivalent in loki.source.kubernetes_events (ignored)");
        continue;
      }
      if (key != "namespace" && key != "log_format" && key != "kubeconfig_path" &&
          key != "logs_instance") {
        return Untranslated{field, "not an argument of loki.source.kubernetes_events"};
      }
      if (!scalar_text(c.at(key))) return Untranslated{field, "expected a string"};
    }
    const std::string log_format = text_of(c, "log_format").value_or("");
    if (!log_format.empty() && log_format != "logfmt" && log_format != "json") {
      return Untranslated{"spec.config.log_format", "must be logfmt or json"};
    }
    env_warnings(value(c), "spec.config", s);
    const std::string instance = common.instance.value_or("eventhandler");
    std::vector<Block> rules;
    rules.push_back(constant_rule("instance", Expr::string(literal_replacement(instance))));
    rules.push_back(constant_rule("agent_hostname", Expr::string(literal_replacement(instance))));
    extra_label_rules(common, s, rules);
    const std::string li = text_of(c, "logs_instance").value_or("");
    if (li.empty()) {
      s.warnings.push_back("spec.config.logs_instance: not set (events are read and discarded)");
    }
    member_findings({"Integration", m.ns, m.name, "spec.config"}, s);
    if (!s.clean()) return std::nullopt;

    const std::string label =
        labels_.label("integration", m.ns + "_" + m.name, "Integration/" + m.ns + "/" + m.name);
    Block source("loki.source.kubernetes_events", label);
    source.attr("forward_to", Expr::list({Expr::ref("loki.relabel", label, "receiver")}));
    source.attr("job_name", Expr::string(std::string(kEventJob)));
    if (const auto ns = text_of(c, "namespace"); ns && !ns->empty()) {
      source.attr("namespaces", Expr::strings({*ns}));
    }
    if (!log_format.empty()) source.attr("log_format", Expr::string(log_format));
    if (const auto k = text_of(c, "kubeconfig_path"); k && !k->empty()) {
      source.block(Block("client").attr("kubeconfig_file", Expr::string(*k)));
    }
    // A LogsInstance outside the hierarchy is reported by the hierarchy's validation; the
    // events are then read and dropped, as the static agent did.
    const object* logs = find(logs_instances_, li);
    Block relabel("loki.relabel", label);
    relabel.attr("forward_to",
                 Expr::list(logs != nullptr ? receivers_of(li, *logs) : std::vector<Expr>{}));
    for (auto& r : rules) relabel.block(std::move(r));
    files.push_back({label + ".alloy", {std::move(source), std::move(relabel)}});
    return std::nullopt;
  }

  const IntegrationsRoot& root_;
  object global_;
  bool global_read_ = false;
  std::uint64_t global_interval_ = kDefaultInterval;
  std::uint64_t global_timeout_ = kDefaultTimeout;
  // Instances of the static tree by `<ns>/<name>`, in hierarchy order.
  std::vector<std::pair<std::string, const object*>> metrics_instances_;
  std::vector<std::pair<std::string, const object*>> logs_instances_;
  std::map<std::string, RemoteWrite> remote_writes_;
  std::map<std::string, Clients> clients_;
};

}  // namespace

IntegrationsConfig translate_integrations(const value& static_tree,
                                          const std::vector<IntegrationMember>& integrations,
                                          bool all_nodes, const IntegrationsRoot& root) {
  return IntegrationsTranslator(root).run(static_tree, integrations, all_nodes);
}

}  // namespace aop::alloy
