// The integrations translation: Integrations (from custom resources through the static
// backend's discovery, or written by hand) to Alloy exporters, their label normalisation
// and scrape, and the decision to keep an Integration on static. Every output goes through
// the Alloy checker; the worked example of the backend specification must come out byte
// for byte as golden/worked_example/integrations-ds (typed in from the specification).
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/agent/config.hpp"
#include "reconcile/alloy/integrations.hpp"
#include "reconcile/alloy/labels.hpp"
#include "tests/alloy/support.hpp"

namespace aop::alloy {
namespace {

namespace fs = std::filesystem;
using boost::json::value;
using test::file;
using test::problems_text;

IntegrationsRoot root_of(const test::Root& r, bool integers = false) {
  return {r.ns(), r.name(), integers, test::agent_clients(r.hierarchy)};
}

value integrations_tree(const test::Root& r, bool all_nodes, const agent::Options& options = {}) {
  auto tree = agent::integrations_config_tree(r.hierarchy, r.assets, options, all_nodes, nullptr);
  EXPECT_TRUE(tree.has_value());
  return tree ? *tree : value();
}

// Translates, writes and checks.
std::vector<check::SourceFile> translate_checked(const value& tree,
                                                 const std::vector<IntegrationMember>& members,
                                                 bool all_nodes, const IntegrationsRoot& root,
                                                 IntegrationsConfig* out = nullptr) {
  IntegrationsConfig c = translate_integrations(tree, members, all_nodes, root);
  auto files = test::written(c.files, root.ns, root.name);
  const auto v = check::check_config(files, root.ns, root.name);
  EXPECT_TRUE(v.empty()) << check::to_string(v);
  if (out != nullptr) *out = std::move(c);
  return files;
}

TEST(IntegrationsTranslation, WorkedExampleIsReproducedByteForByte) {
  const auto roots = test::roots(test::read(test::worked_example() / "input.yaml"));
  ASSERT_EQ(roots.size(), 1U);
  const auto& r = roots[0];
  IntegrationsConfig c;
  const auto files = translate_checked(integrations_tree(r, true), test::members(r.hierarchy), true,
                                       root_of(r), &c);
  EXPECT_TRUE(c.problems.empty()) << problems_text(c.problems);
  EXPECT_TRUE(c.kept.empty());
  const fs::path dir = test::worked_example() / "integrations-ds";
  const std::vector<std::string> keys = {"main.alloy", "mi_monitoring_primary_7f26355a.alloy",
                                         "integration_monitoring_node_92957cb5.alloy"};
  ASSERT_EQ(files.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(files[i].key, keys[i]);
    EXPECT_EQ(files[i].text, test::read(dir / keys[i])) << keys[i];
  }
  // The Deployment subset is empty: no configuration, no workload.
  const auto deploy = translate_integrations(integrations_tree(r, false),
                                             test::members(r.hierarchy), false, root_of(r));
  EXPECT_TRUE(deploy.files.empty());
  EXPECT_TRUE(deploy.problems.empty());
  std::size_t secrets = 0;
  const auto v = test::check_packed(c.files, "monitoring", "agent",
                                    "agent-alloy-integrations-ds-config", &secrets);
  EXPECT_TRUE(v.empty()) << check::to_string(v);
  EXPECT_EQ(secrets, 1U);
}

// ---- Hand-written inputs ---------------------------------------------------------------

value tree_of(std::string_view json) {
  return boost::json::parse(json);
}

// A static integrations tree with MetricsInstances ns/mi and ns/other and LogsInstance
// ns/li.
value base_tree() {
  return tree_of(R"j({"server": {}, "metrics": {"wal_directory": "/var/lib/grafana-agent/data",
      "global": {"external_labels": {"cluster": "ns/a"}, "scrape_interval": "30s"},
      "configs": [{"name": "ns/other"}, {"name": "ns/mi", "remote_write": [{"url": "https://m/push"}]}]},
    "logs": {"positions_directory": "/var/lib/grafana-agent/data",
      "configs": [{"name": "ns/li", "clients": [{"url": "https://l/push"}]}]},
    "integrations": {"metrics": {"autoscrape": {"enable": false}}}})j");
}

IntegrationMember member(std::string integration, std::string_view config, std::string name = "i",
                         bool all_nodes = false) {
  return {"ns", std::move(name), std::move(integration), all_nodes, tree_of(config)};
}

IntegrationsRoot root_a() {
  return {"ns", "a", false, {}};
}

std::string label_of(const std::string& name) {
  return ident("integration", "ns_" + name, "Integration/ns/" + name);
}

const std::string kMi = ident("mi", "ns_mi", "MetricsInstance/ns/mi");

// `text` with the placeholders `@L@` (the Integration's label), `@MI@` (ns/mi's remote
// write) and `@LOKI@` (ns/li's client) replaced.
std::string expand(std::string text, const std::string& label) {
  const std::string loki = ident("loki", "ns_li_0", "LogsInstance/ns/li/0");
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"@L@", label},
                                 std::pair<std::string, std::string>{"@MI@", kMi},
                                 std::pair<std::string, std::string>{"@LOKI@", loki}}) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

TEST(IntegrationsTranslation, ExporterArgumentTable) {
  const struct {
    const char* integration;
    const char* config;
    const char* alloy;  // the exporter block
  } cases[] = {
      {"node_exporter",
       R"j({"rootfs_path": "/host/root", "include_exporter_metrics": true,
            "enable_collectors": "systemd,ntp", "set_collectors": ["cpu"],
            "netdev_device_whitelist": "eth0", "netdev_address_info": true,
            "systemd_unit_blacklist": ".+\\.scope", "systemd_enable_task_metrics": true,
            "filesystem_mount_timeout": "5s", "ntp_ip_ttl": 2.0, "ntp_server": "pool.ntp.org",
            "enable_cpu_info_metric": true, "cpu_flags_include": "avx",
            "sysctl_include": "vm.swappiness,net.core.somaxconn",
            "perf_tracepoint": ["sched:sched_switch"], "textfile_directory": "/tf",
            "diskstats_ignored_devices": "^ram", "arp_netlink": false,
            "enable_bcache_priority_stats": true, "ethtool_metrics_include": ".*",
            "hwmon_chip_include": "k10", "ipvs_backend_labels": "local_address,local_port",
            "netclass_ignored_devices": "^lo$", "netstat_fields": "^Tcp",
            "powersupply_ignored_supplies": "^BAT", "runit_service_dir": "/etc/service",
            "supervisord_url": "http://s", "tapestats_ignored_devices": "^st",
            "vmstat_fields": "^pg", "perf_cpus": "0-3", "filesystem_ignored_fs_types": "^tmpfs$"})j",
       R"a(prometheus.exporter.unix "@L@" {
  enable_collectors = ["systemd", "ntp"]
  include_exporter_metrics = true
  rootfs_path = "/host/root"
  set_collectors = ["cpu"]
  arp {
    netlink = false
  }
  bcache {
    priority_stats = true
  }
  cpu {
    flags_include = "avx"
    info = true
  }
  disk {
    device_exclude = "^ram"
  }
  ethtool {
    metrics_include = ".*"
  }
  filesystem {
    fs_types_exclude = "^tmpfs$"
    mount_timeout = "5s"
  }
  hwmon {
    chip_include = "k10"
  }
  ipvs {
    backend_labels = ["local_address", "local_port"]
  }
  netclass {
    ignored_devices = "^lo$"
  }
  netdev {
    address_info = true
    device_include = "eth0"
  }
  netstat {
    fields = "^Tcp"
  }
  ntp {
    ip_ttl = 2
    server = "pool.ntp.org"
  }
  perf {
    cpus = "0-3"
    tracepoint = ["sched:sched_switch"]
  }
  powersupply {
    ignored_supplies = "^BAT"
  }
  runit {
    service_dir = "/etc/service"
  }
  supervisord {
    url = "http://s"
  }
  sysctl {
    include = ["vm.swappiness", "net.core.somaxconn"]
  }
  systemd {
    task_metrics = true
    unit_exclude = ".+\\.scope"
  }
  tapestats {
    ignored_devices = "^st"
  }
  textfile {
    directory = "/tf"
  }
  vmstat {
    fields = "^pg"
  }
}
)a"},
      {"process_exporter",
       R"j({"process_names": [{"name": "{{.Comm}}", "cmdline": [".+"]},
                              {"comm": ["bash", "zsh"], "exe": ["/bin/sh"]}],
            "track_children": false, "procfs_path": "/host/proc"})j",
       R"a(prometheus.exporter.process "@L@" {
  procfs_path = "/host/proc"
  track_children = false
  matcher {
    cmdline = [".+"]
    name = "{{.Comm}}"
  }
  matcher {
    comm = ["bash", "zsh"]
    exe = ["/bin/sh"]
  }
}
)a"},
      {"cadvisor",
       R"j({"docker": "unix:///var/run/docker.sock", "containerd": "/run/containerd.sock",
            "docker_tls": true, "docker_only": true, "storage_duration": "2m",
            "enabled_metrics": ["cpu"], "store_container_labels": false})j",
       R"a(prometheus.exporter.cadvisor "@L@" {
  containerd_host = "/run/containerd.sock"
  docker_host = "unix:///var/run/docker.sock"
  docker_only = true
  enabled_metrics = ["cpu"]
  storage_duration = "2m"
  store_container_labels = false
  use_docker_tls = true
}
)a"},
      {"statsd_exporter",
       R"j({"listen_udp": ":9125", "listen_tcp": "", "cache_size": 1000.0,
            "event_flush_interval": "200ms", "parse_dogstatsd_tags": true,
            "mapping_config_path": "/etc/m.yml"})j",
       R"a(prometheus.exporter.statsd "@L@" {
  cache_size = 1000
  event_flush_interval = "200ms"
  listen_tcp = ""
  listen_udp = ":9125"
  mapping_config_path = "/etc/m.yml"
  parse_dogstatsd_tags = true
}
)a"},
      {"redis_exporter",
       R"j({"redis_addr": "redis:6379", "check_keys": "a*,b*", "check_single_keys": "",
            "count_keys": "db0=x", "check_key_groups": ["g1"], "redis_password_file": "/p",
            "connection_timeout": "15s", "is_cluster": true, "namespace": "redis"})j",
       R"a(prometheus.exporter.redis "@L@" {
  check_key_groups = ["g1"]
  check_keys = ["a*", "b*"]
  connection_timeout = "15s"
  count_keys = ["db0=x"]
  is_cluster = true
  namespace = "redis"
  redis_addr = "redis:6379"
  redis_password_file = "/p"
}
)a"},
      {"mysqld_exporter",
       R"j({"data_source_name": "user:pw@(db:3306)/", "enable_collectors": ["heartbeat"],
            "lock_wait_timeout": 2.0, "info_schema_processlist_min_time": 5.0,
            "info_schema_processlist_processes_by_user": true,
            "info_schema_tables_databases": "*", "perf_schema_eventsstatements_limit": 250.0,
            "perf_schema_eventsstatements_digtext_text_limit": 120.0,
            "perf_schema_file_instances_filter": ".*",
            "perf_schema_memory_events_remove_prefix": "memory/",
            "heartbeat_database": "heartbeat", "heartbeat_utc": true,
            "mysql_user_privileges": true})j",
       R"a(prometheus.exporter.mysql "@L@" {
  data_source_name = "user:pw@(db:3306)/"
  enable_collectors = ["heartbeat"]
  lock_wait_timeout = 2
  heartbeat {
    database = "heartbeat"
    utc = true
  }
  info_schema.processlist {
    min_time = 5
    processes_by_user = true
  }
  info_schema.tables {
    databases = "*"
  }
  mysql.user {
    privileges = true
  }
  perf_schema.eventsstatements {
    limit = 250
    text_limit = 120
  }
  perf_schema.file_instances {
    filter = ".*"
  }
  perf_schema.memory_events {
    remove_prefix = "memory/"
  }
}
)a"},
      {"postgres_exporter",
       R"j({"data_source_names": ["postgresql://u@db:5432/x"], "query_path": "/q.yaml",
            "autodiscover_databases": true, "exclude_databases": ["template0"],
            "disable_default_metrics": false})j",
       R"a(prometheus.exporter.postgres "@L@" {
  custom_queries_config_path = "/q.yaml"
  data_source_names = ["postgresql://u@db:5432/x"]
  disable_default_metrics = false
  autodiscovery {
    database_denylist = ["template0"]
    enabled = true
  }
}
)a"},
      {"memcached_exporter",
       R"j({"memcached_address": "mc:11211", "timeout": "1s",
            "tls_config": {"server_name": "mc", "insecure_skip_verify": true, "ca_file": "/ca"}})j",
       R"a(prometheus.exporter.memcached "@L@" {
  address = "mc:11211"
  timeout = "1s"
  tls_config {
    ca_file = "/ca"
    server_name = "mc"
    insecure_skip_verify = true
  }
}
)a"},
      {"kafka_exporter",
       R"j({"kafka_uris": ["k1:9092", "k2:9092"], "use_sasl": true, "sasl_username": "u",
            "sasl_mechanism": "plain", "topic_workers": 50.0, "metadata_refresh_interval": "1m",
            "instance": "kafka-prod"})j",
       R"a(prometheus.exporter.kafka "@L@" {
  kafka_uris = ["k1:9092", "k2:9092"]
  metadata_refresh_interval = "1m"
  sasl_mechanism = "plain"
  sasl_username = "u"
  topic_workers = 50
  use_sasl = true
}
)a"},
      {"elasticsearch_exporter",
       R"j({"address": "http://es:9200", "all": true, "timeout": "5s",
            "basic_auth": {"password_file": "/p", "username": "u"}})j",
       R"a(prometheus.exporter.elasticsearch "@L@" {
  address = "http://es:9200"
  all = true
  timeout = "5s"
  basic_auth {
    username = "u"
    password_file = "/p"
  }
}
)a"},
      {"blackbox",
       R"j({"blackbox_config": {"modules": {"http_2xx": {"prober": "http", "timeout": "5s",
                                "http": {"valid_status_codes": [200.0, 204.0]}}}},
            "blackbox_targets": [{"name": "site", "address": "https://example.com",
                                  "module": "http_2xx"},
                                 {"name": "dns", "address": "8.8.8.8"}],
            "probe_timeout_offset": "0.5s"})j",
       R"a(prometheus.exporter.blackbox "@L@" {
  config = "{\"modules\":{\"http_2xx\":{\"http\":{\"valid_status_codes\":[200,204]},\"prober\":\"http\",\"timeout\":\"5s\"}}}"
  probe_timeout_offset = "0.5s"
  targets = [
    {
      address = "https://example.com",
      module = "http_2xx",
      name = "site",
    },
    {
      address = "8.8.8.8",
      name = "dns",
    },
  ]
}
)a"},
      {"snmp",
       R"j({"snmp_config": {"auths": {"public_v2": {"community": "public", "version": 2.0}}},
            "snmp_targets": [{"name": "sw1", "address": "10.0.0.1", "module": "if_mib",
                              "auth": "public_v2", "walk_params": "slow"}],
            "walk_params": {"slow": {"timeout": "10s", "retries": 3.0},
                            "fast": {"max_repetitions": 50.0}},
            "concurrency": 4.0, "config_merge_strategy": "merge"})j",
       R"a(prometheus.exporter.snmp "@L@" {
  concurrency = 4
  config = "{\"auths\":{\"public_v2\":{\"community\":\"public\",\"version\":2}}}"
  config_merge_strategy = "merge"
  targets = [
    {
      address = "10.0.0.1",
      auth = "public_v2",
      module = "if_mib",
      name = "sw1",
      walk_params = "slow",
    },
  ]
  walk_param "fast" {
    max_repetitions = 50
  }
  walk_param "slow" {
    retries = 3
    timeout = "10s"
  }
}
)a"},
      {"apache_http", R"j({"scrape_uri": "http://a/server-status?auto", "insecure": false})j",
       R"a(prometheus.exporter.apache "@L@" {
  insecure = false
  scrape_uri = "http://a/server-status?auto"
}
)a"},
      {"consul_exporter",
       R"j({"server": "http://consul:8500", "timeout": "500ms", "concurrent_request_limit": 10.0,
            "allow_stale": true})j",
       R"a(prometheus.exporter.consul "@L@" {
  allow_stale = true
  concurrent_request_limit = "10"
  server = "http://consul:8500"
  timeout = "500ms"
}
)a"},
      {"dnsmasq_exporter",
       R"j({"dnsmasq_address": "localhost:53", "leases_path": "/var/lib/misc/dnsmasq.leases",
            "expose_leases": true})j",
       R"a(prometheus.exporter.dnsmasq "@L@" {
  address = "localhost:53"
  expose_leases = true
  leases_file = "/var/lib/misc/dnsmasq.leases"
}
)a"},
      {"mongodb_exporter", R"j({"mongodb_uri": "mongodb://m:27017", "direct_connect": true})j",
       R"a(prometheus.exporter.mongodb "@L@" {
  direct_connect = true
  mongodb_uri = "mongodb://m:27017"
}
)a"},
      {"mssql",
       R"j({"connection_string": "sqlserver://u:p@h:1433", "max_idle_connections": 3.0,
            "query_config": {"metrics": [{"metric_name": "m", "query": "SELECT 1"}]}})j",
       R"a(prometheus.exporter.mssql "@L@" {
  connection_string = "sqlserver://u:p@h:1433"
  max_idle_connections = 3
  query_config = "{\"metrics\":[{\"metric_name\":\"m\",\"query\":\"SELECT 1\"}]}"
}
)a"},
      {"squid_exporter", R"j({"address": "squid:3128", "username": "u"})j",
       R"a(prometheus.exporter.squid "@L@" {
  address = "squid:3128"
  username = "u"
}
)a"},
      {"github_exporter", R"j({"repositories": ["grafana/alloy"], "api_token_file": "/t"})j",
       R"a(prometheus.exporter.github "@L@" {
  api_token_file = "/t"
  repositories = ["grafana/alloy"]
}
)a"},
      {"snowflake_exporter",
       R"j({"account_name": "acc", "username": "u", "password": "p", "warehouse": "wh",
            "role": "ACCOUNTADMIN"})j",
       R"a(prometheus.exporter.snowflake "@L@" {
  account_name = "acc"
  password = "p"
  role = "ACCOUNTADMIN"
  username = "u"
  warehouse = "wh"
}
)a"},
      {"agent", "{}", "prometheus.exporter.self \"@L@\" {}\n"},
      {"agent", "null", "prometheus.exporter.self \"@L@\" {}\n"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.integration);
    IntegrationsConfig out;
    const auto files =
        translate_checked(base_tree(), {member(c.integration, c.config)}, false, root_a(), &out);
    EXPECT_TRUE(out.problems.empty()) << problems_text(out.problems);
    EXPECT_TRUE(out.kept.empty());
    ASSERT_EQ(files.size(), 2U);  // main and the Integration: no autoscrape, no remote write
    EXPECT_EQ(files[1].key, label_of("i") + ".alloy");
    EXPECT_EQ(files[1].text, file_header("ns", "a") + "\n" + expand(c.alloy, label_of("i")));
  }
}

// The whole pipeline of an autoscraped Integration: static mode's target labels, `$` kept
// literal in constant replacements, extra labels, the user's rules, the metric relabel
// split, and the intervals (a Prometheus `1d` written as Go's `24h`).
TEST(IntegrationsTranslation, AutoscrapePipeline) {
  IntegrationsConfig out;
  const auto files = translate_checked(
      base_tree(), {member("blackbox", R"j({"config_file": "/etc/bb.yml", "instance": "probe-$1",
          "extra_labels": {"team": "a$b", "env": "prod"},
          "autoscrape": {"enable": true, "metrics_instance": "ns/mi", "scrape_interval": "1d",
            "scrape_timeout": "30s",
            "relabel_configs": [{"source_labels": ["__address__"], "target_label": "addr",
                                 "action": "Replace"}],
            "metric_relabel_configs": [{"source_labels": ["__name__"], "regex": "probe_.*",
                                        "action": "keep"}]}})j")},
      false, root_a(), &out);
  // `$b` read as an environment reference in static mode; `$1` did not.
  EXPECT_EQ(problems_text(out.problems),
            "C Integration ns/i spec.config.extra_labels.team: contains an environment reference "
            "that static mode expanded (Alloy keeps the text literally)\n");
  ASSERT_EQ(files.size(), 3U);
  EXPECT_EQ(files[1].key, kMi + ".alloy");
  EXPECT_EQ(files[1].text, file_header("ns", "a") + "\n" +
                               expand(R"a(prometheus.remote_write "@MI@" {
  external_labels = {
    cluster = "ns/a",
  }
  endpoint {
    url = "https://m/push"
  }
  wal {
    truncate_frequency = "60m"
    min_keepalive_time = "5m"
    max_keepalive_time = "4h"
  }
}
)a",
                                      ""));
  EXPECT_EQ(files[2].text, file_header("ns", "a") + "\n" +
                               expand(R"a(prometheus.exporter.blackbox "@L@" {
  config_file = "/etc/bb.yml"
}

discovery.relabel "@L@" {
  targets = prometheus.exporter.blackbox.@L@.targets
  rule {
    target_label = "job"
    replacement = "integrations/blackbox"
  }
  rule {
    target_label = "agent_hostname"
    replacement = coalesce(sys.env("HOSTNAME"), constants.hostname) + ":8080"
  }
  rule {
    target_label = "instance"
    replacement = "probe-$$1"
  }
  rule {
    target_label = "__meta_agent_integration_name"
    replacement = "blackbox"
  }
  rule {
    source_labels = ["instance"]
    target_label = "__meta_agent_integration_instance"
  }
  rule {
    target_label = "__meta_agent_integration_autoscrape"
    replacement = "1"
  }
  rule {
    source_labels = ["__param_target"]
    target_label = "blackbox_target"
  }
  rule {
    target_label = "env"
    replacement = "prod"
  }
  rule {
    target_label = "team"
    replacement = "a$$b"
  }
  rule {
    source_labels = ["__address__"]
    target_label = "addr"
    action = "replace"
  }
}

prometheus.scrape "@L@" {
  targets = discovery.relabel.@L@.output
  forward_to = [prometheus.relabel.@L@.receiver, prometheus.relabel.@L@_report.receiver]
  job_name = "integrations/blackbox"
  scrape_interval = "24h"
  scrape_timeout = "30s"
}

prometheus.relabel "@L@" {
  forward_to = [prometheus.remote_write.@MI@.receiver]
  rule {
    source_labels = ["__name__"]
    regex = "up|scrape_duration_seconds|scrape_samples_scraped|scrape_samples_post_metric_relabeling|scrape_series_added"
    action = "drop"
  }
  rule {
    source_labels = ["__name__"]
    regex = "probe_.*"
    action = "keep"
  }
}

prometheus.relabel "@L@_report" {
  forward_to = [prometheus.remote_write.@MI@.receiver]
  rule {
    source_labels = ["__name__"]
    regex = "up|scrape_duration_seconds|scrape_samples_scraped|scrape_samples_post_metric_relabeling|scrape_series_added"
    action = "keep"
  }
}
)a",
                                      label_of("i")));
}

// The instance label static mode gave each integration without an `instance` key.
TEST(IntegrationsTranslation, DefaultInstanceLabels) {
  const std::string agent_id = "coalesce(sys.env(\"HOSTNAME\"), constants.hostname) + \":8080\"";
  const struct {
    const char* integration;
    const char* config;
    std::string instance;  // the replacement, "" when no instance rule
    const char* target_label;
  } cases[] = {
      {"node_exporter", "{}", agent_id, nullptr},
      {"process_exporter", "{}", agent_id, nullptr},
      {"cadvisor", "{}", agent_id, nullptr},
      {"statsd_exporter", "{}", agent_id, nullptr},
      {"agent", "{}", agent_id, nullptr},
      {"blackbox", "{}", "\"blackbox\"", "blackbox_target"},
      {"snmp", "{}", "\"snmp\"", "snmp_target"},
      {"redis_exporter", R"j({"redis_addr": "r:6379"})j", "", nullptr},
      {"mysqld_exporter", "{}", "", nullptr},
      {"postgres_exporter", "{}", "", nullptr},
      {"memcached_exporter", "{}", "", nullptr},
      {"kafka_exporter", "{}", "", nullptr},
      {"elasticsearch_exporter", "{}", "", nullptr},
      {"apache_http", "{}", "", nullptr},
      {"consul_exporter", "{}", "", nullptr},
      {"dnsmasq_exporter", "{}", "", nullptr},
      {"mongodb_exporter", R"j({"mongodb_uri": "m"})j", "", nullptr},
      {"mssql", R"j({"connection_string": "c"})j", "", nullptr},
      {"squid_exporter", R"j({"address": "s"})j", "", nullptr},
      {"github_exporter", "{}", "", nullptr},
      {"snowflake_exporter", R"j({"account_name": "a", "username": "u", "warehouse": "w"})j", "",
       nullptr},
      {"node_exporter", R"j({"instance": "my-node"})j", "\"my-node\"", nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.integration) + " " + c.config);
    boost::json::object config = tree_of(c.config).as_object();
    config["autoscrape"] = {{"enable", true}, {"metrics_instance", "ns/mi"}};
    IntegrationsConfig out;
    const auto files = translate_checked(
        base_tree(), {{"ns", "i", c.integration, true, value(config)}}, true, root_a(), &out);
    EXPECT_TRUE(out.problems.empty()) << problems_text(out.problems);
    ASSERT_EQ(files.size(), 3U);
    std::vector<check::Violation> v;
    const auto parsed = check::parse_file(files[2], v);
    ASSERT_TRUE(v.empty());
    const auto rules = parsed.blocks.at(1).children("rule");
    std::vector<std::string> targets;
    for (const auto* r : rules) targets.push_back(r->attribute("target_label")->value.text);
    std::vector<std::string> want = {"job", "agent_hostname"};
    if (!c.instance.empty()) want.emplace_back("instance");
    want.insert(want.end(), {"__meta_agent_integration_name", "__meta_agent_integration_instance",
                             "__meta_agent_integration_autoscrape"});
    if (c.target_label != nullptr) want.emplace_back(c.target_label);
    EXPECT_EQ(targets, want);
    EXPECT_EQ(rules[0]->attribute("replacement")->value.text,
              std::string("integrations/") + c.integration);
    if (!c.instance.empty()) {
      EXPECT_NE(
          files[2].text.find("target_label = \"instance\"\n    replacement = " + c.instance + "\n"),
          std::string::npos)
          << files[2].text;
    }
    if (c.target_label != nullptr) {
      EXPECT_EQ(rules.back()->attribute("source_labels")->value.items.at(0).text, "__param_target");
    }
    // Without a scrape interval anywhere: 30s from the GrafanaAgent, timeout 10s.
    EXPECT_NE(files[2].text.find("  scrape_interval = \"30s\"\n  scrape_timeout = \"10s\"\n}\n"),
              std::string::npos);
  }
}

// Only the exporter runs when nothing scrapes it, as in static mode.
TEST(IntegrationsTranslation, WithoutAutoscrapeOnlyTheExporterRuns) {
  for (const char* autoscrape :
       {R"j({})j", R"j({"autoscrape": {"enable": false, "metrics_instance": "ns/mi"}})j",
        R"j({"autoscrape": {"metrics_instance": "ns/mi"}})j",
        R"j({"autoscrape": {"enable": true, "metrics_instance": "ns/missing"}})j"}) {
    SCOPED_TRACE(autoscrape);
    IntegrationsConfig out;
    const auto files = translate_checked(base_tree(), {member("node_exporter", autoscrape)}, false,
                                         root_a(), &out);
    EXPECT_TRUE(out.problems.empty()) << problems_text(out.problems);
    ASSERT_EQ(files.size(), 2U);
    EXPECT_EQ(files[1].text,
              file_header("ns", "a") + "\nprometheus.exporter.unix \"" + label_of("i") + "\" {}\n");
  }
  IntegrationsConfig out;
  translate_checked(base_tree(), {member("node_exporter", R"j({"autoscrape": {"enable": true}})j")},
                    false, root_a(), &out);
  EXPECT_EQ(problems_text(out.problems),
            "C Integration ns/i spec.config.autoscrape.metrics_instance: not set (the exporter "
            "runs, nothing scrapes it)\n");
}

// Remote writes appear once per referenced MetricsInstance, in hierarchy order; the
// subsets are separate configurations.
TEST(IntegrationsTranslation, SubsetsAndReferencedInstances) {
  const std::string to_mi = R"j({"autoscrape": {"enable": true, "metrics_instance": "ns/mi"}})j";
  const std::string to_other =
      R"j({"autoscrape": {"enable": true, "metrics_instance": "ns/other"}})j";
  const std::vector<IntegrationMember> members = {
      member("node_exporter", to_mi, "n1", true),
      member(
          "redis_exporter",
          R"j({"redis_addr": "r", "autoscrape": {"enable": true, "metrics_instance": "ns/mi"}})j",
          "r1", false),
      member("cadvisor", to_other, "c1", true), member("windows_exporter", "{}", "w1", true),
      member("process_exporter", to_mi, "p1", true)};
  IntegrationsConfig ds;
  const auto files = translate_checked(base_tree(), members, true, root_a(), &ds);
  std::vector<std::string> keys;
  for (const auto& f : files) keys.push_back(f.key);
  const std::string other = ident("mi", "ns_other", "MetricsInstance/ns/other");
  EXPECT_EQ(keys, (std::vector<std::string>{"main.alloy", other + ".alloy", kMi + ".alloy",
                                            label_of("n1") + ".alloy", label_of("c1") + ".alloy",
                                            label_of("p1") + ".alloy"}));
  ASSERT_EQ(ds.kept.size(), 1U);
  EXPECT_EQ(ds.kept[0].name, "w1");
  EXPECT_EQ(ds.kept[0].field, "spec.name");
  EXPECT_EQ(ds.kept[0].reason, "spec.name: no Alloy component translates it");
  // ns/other has no remote write: samples go to its WAL only, as in static mode.
  EXPECT_EQ(files[1].text.find("endpoint"), std::string::npos);
  IntegrationsConfig deploy;
  const auto dfiles = translate_checked(base_tree(), members, false, root_a(), &deploy);
  keys.clear();
  for (const auto& f : dfiles) keys.push_back(f.key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"main.alloy", kMi + ".alloy", label_of("r1") + ".alloy"}));
  EXPECT_TRUE(deploy.kept.empty());
}

// What keeps an Integration on static, with its field and reason.
TEST(IntegrationsTranslation, KeptOnStatic) {
  const struct {
    const char* integration;
    const char* config;
    const char* field;
    const char* what;
  } cases[] = {
      {"windows_exporter", "{}", "spec.name", "no Alloy component translates it"},
      {"app_agent_receiver", "{}", "spec.name", "no Alloy component translates it"},
      {"node_exporter", "[1]", "spec.config", "is not a mapping"},
      {"node_exporter", R"j({"unknown_flag": true})j", "spec.config.unknown_flag",
       "not an argument of prometheus.exporter.unix"},
      {"node_exporter", R"j({"rootfs_path": ["/"]})j", "spec.config.rootfs_path",
       "expected a string"},
      {"node_exporter", R"j({"enable_collectors": 5.0})j", "spec.config.enable_collectors",
       "expected a list of strings or a comma-separated string"},
      {"node_exporter", R"j({"ntp_ip_ttl": 1.5})j", "spec.config.ntp_ip_ttl",
       "expected an integer"},
      {"node_exporter", R"j({"arp_netlink": "yes"})j", "spec.config.arp_netlink",
       "expected a boolean"},
      {"node_exporter", R"j({"filesystem_mount_timeout": "5 s"})j",
       "spec.config.filesystem_mount_timeout", "expected a Go duration such as 30s"},
      {"node_exporter", R"j({"netdev_device_whitelist": "b", "netdev_device_include": "a"})j",
       "spec.config.netdev_device_whitelist",
       "netdev_device_include is set too and means the same (the static agent rejected the "
       "pair)"},
      {"node_exporter", R"j({"systemd_unit_exclude": "a", "systemd_unit_blacklist": "b"})j",
       "spec.config.systemd_unit_exclude",
       "systemd_unit_blacklist is set too and means the same (the static agent rejected the "
       "pair)"},
      {"node_exporter", R"j({"autoscrape": {"enable": true, "job_name": "x"}})j",
       "spec.config.autoscrape.job_name", "not an autoscrape setting the translation covers"},
      {"node_exporter", R"j({"autoscrape": {"enable": "yes"}})j", "spec.config.autoscrape.enable",
       "expected a boolean"},
      {"node_exporter", R"j({"autoscrape": {"relabel_configs": {}}})j",
       "spec.config.autoscrape.relabel_configs", "expected a list"},
      {"node_exporter", R"j({"instance": ["a"]})j", "spec.config.instance", "expected a string"},
      {"node_exporter", R"j({"extra_labels": {"a": ["x"]}})j", "spec.config.extra_labels.a",
       "expected a string"},
      {"process_exporter", R"j({"process_names": [{"name": "x", "cgroup": ["a"]}]})j",
       "spec.config.process_names[0].cgroup", "not translated"},
      {"process_exporter", R"j({"process_names": [{"cmdline": "a,b"}]})j",
       "spec.config.process_names[0].cmdline", "expected a list of strings"},
      {"statsd_exporter", R"j({"mapping_config": {"mappings": []}})j", "spec.config.mapping_config",
       "an inline mapping has no Alloy equivalent (Alloy reads mapping_config_path only)"},
      {"redis_exporter", R"j({"namespace": "r"})j", "spec.config.redis_addr",
       "required by prometheus.exporter.redis"},
      {"mongodb_exporter", "{}", "spec.config.mongodb_uri",
       "required by prometheus.exporter.mongodb"},
      {"snowflake_exporter", R"j({"account_name": "a", "username": "u"})j", "spec.config.warehouse",
       "required by prometheus.exporter.snowflake"},
      {"memcached_exporter", R"j({"tls_config": {"cert_file": "/c"}})j", "spec.config.tls_config",
       "a client certificate needs both cert and key"},
      {"elasticsearch_exporter", R"j({"basic_auth": {"username": "u", "bearer": "x"}})j",
       "spec.config.basic_auth.bearer", "has no Alloy translation"},
      {"blackbox", R"j({"config_file": "/f", "blackbox_config": {"modules": {}}})j",
       "spec.config.blackbox_config", "config_file is set too (Alloy accepts only one of them)"},
      {"blackbox", R"j({"blackbox_targets": [{"name": "a", "timeout": "5s"}]})j",
       "spec.config.blackbox_targets[0].timeout", "not translated"},
      {"snmp", R"j({"walk_params": {"bad-name": {"retries": 1.0}}})j",
       "spec.config.walk_params.bad-name", "not a valid Alloy block label"},
      {"snmp", R"j({"walk_params": {"p": {"max_repetitions": "x"}}})j",
       "spec.config.walk_params.p.max_repetitions", "expected an integer"},
      {"snmp", R"j({"snmp_targets": [{"name": "a", "extra": "x"}]})j",
       "spec.config.snmp_targets[0].extra", "not translated"},
      {"snmp", R"j({"snmp_config": "auths: {}"})j", "spec.config.snmp_config", "is not a mapping"},
      {"mssql", R"j({"connection_string": "x", "query_config": "metrics: []"})j",
       "spec.config.query_config", "is not a mapping"},
      {"agent", R"j({"foo": 1.0})j", "spec.config.foo",
       "prometheus.exporter.self takes no arguments"},
      {"eventhandler", R"j({"cache_pth": "x"})j", "spec.config.cache_pth",
       "not an argument of loki.source.kubernetes_events"},
      {"eventhandler", R"j({"log_format": "text"})j", "spec.config.log_format",
       "must be logfmt or json"},
      {"eventhandler", R"j({"autoscrape": {"enable": true}})j", "spec.config.autoscrape",
       "this integration has no metrics to scrape"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.integration) + " " + c.config);
    // The kept one is second; the first and third still translate.
    const std::vector<IntegrationMember> members = {member("node_exporter", "{}", "before"),
                                                    member(c.integration, c.config, "kept"),
                                                    member("apache_http", "{}", "after")};
    IntegrationsConfig out;
    const auto files = translate_checked(base_tree(), members, false, root_a(), &out);
    ASSERT_EQ(out.kept.size(), 1U);
    EXPECT_EQ(out.kept[0].ns + "/" + out.kept[0].name, "ns/kept");
    EXPECT_EQ(out.kept[0].integration, c.integration);
    EXPECT_EQ(out.kept[0].field, c.field);
    EXPECT_EQ(out.kept[0].reason, std::string(c.field) + ": " + c.what);
    ASSERT_EQ(out.problems.size(), 1U) << problems_text(out.problems);
    const auto& p = out.problems[0];
    EXPECT_EQ(p.cls, ProblemClass::kept);
    EXPECT_EQ(p.kind, "Integration");
    EXPECT_EQ(p.field, c.field);
    EXPECT_EQ(p.message, "integration " + std::string(c.integration) +
                             " has no Alloy translation (" + c.field + ": " + c.what +
                             "); it keeps running on the Grafana Agent static workloads");
    std::vector<std::string> keys;
    for (const auto& f : files) keys.push_back(f.key);
    EXPECT_EQ(keys, (std::vector<std::string>{"main.alloy", label_of("before") + ".alloy",
                                              label_of("after") + ".alloy"}));
  }
  // Nothing translated: no configuration at all.
  IntegrationsConfig out;
  translate_checked(base_tree(), {member("windows_exporter", "{}")}, false, root_a(), &out);
  EXPECT_TRUE(out.files.empty());
  EXPECT_EQ(out.kept.size(), 1U);
}

// What Alloy would refuse in the labels and scrape skips the Integration (class A).
TEST(IntegrationsTranslation, InvalidAutoscrapeSkipsTheIntegration) {
  const struct {
    const char* autoscrape;
    const char* message;
  } cases[] = {
      {R"j("relabel_configs": [{"action": "hashmod", "target_label": "x"}])j",
       "spec.config.autoscrape.relabel_configs[0]: action hashmod needs a non-zero modulus"},
      {R"j("metric_relabel_configs": [{"action": "Drop", "source_labels": ["a"]},
                                      {"action": "labelkeep", "target_label": "x"}])j",
       "spec.config.autoscrape.metric_relabel_configs[1]: action labelkeep takes only regex"},
      {R"j("scrape_interval": "fast")j",
       "spec.config.autoscrape.scrape_interval: not a Prometheus duration"},
      {R"j("scrape_interval": "1m", "scrape_timeout": "2m")j",
       "spec.config.autoscrape.scrape_timeout: is greater than scrape_interval"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.autoscrape);
    const std::string config =
        R"j({"autoscrape": {"enable": true, "metrics_instance": "ns/other", )j" +
        std::string(c.autoscrape) + "}}";
    IntegrationsConfig out;
    const auto files = translate_checked(
        base_tree(),
        {member("node_exporter", config, "bad"),
         member("apache_http", R"j({"autoscrape": {"enable": true, "metrics_instance": "ns/mi"}})j",
                "good")},
        false, root_a(), &out);
    EXPECT_EQ(problems_text(out.problems), "A Integration ns/bad " + std::string(c.message) +
                                               " (skipped in the Alloy configuration)\n");
    std::vector<std::string> keys;
    for (const auto& f : files) keys.push_back(f.key);
    // ns/other is referenced by the skipped Integration only: no remote write for it.
    EXPECT_EQ(keys, (std::vector<std::string>{"main.alloy", kMi + ".alloy",
                                              label_of("good") + ".alloy"}));
  }
  IntegrationsConfig out;
  translate_checked(base_tree(),
                    {member("node_exporter", R"j({"extra_labels": {"bad-label": "x"}})j")}, false,
                    root_a(), &out);
  EXPECT_EQ(problems_text(out.problems),
            "A Integration ns/i spec.config.extra_labels.bad-label: not a valid label name "
            "(skipped in the Alloy configuration)\n");
  EXPECT_TRUE(out.files.empty());
}

TEST(IntegrationsTranslation, EventHandler) {
  IntegrationsConfig out;
  const auto files =
      translate_checked(base_tree(),
                        {member("eventhandler", R"j({"logs_instance": "ns/li", "namespace": "apps",
          "log_format": "json", "kubeconfig_path": "/k", "instance": "ev",
          "extra_labels": {"cluster": "c1"}, "send_timeout": 30.0, "cache_path": "/c"})j",
                                "events")},
                        false, root_a(), &out);
  EXPECT_EQ(problems_text(out.problems),
            "C Integration ns/events spec.config.cache_path: has no equivalent in "
            "loki.source.kubernetes_events (ignored)\n"
            "C Integration ns/events spec.config.send_timeout: has no equivalent in "
            "loki.source.kubernetes_events (ignored)\n");
  const std::string li = ident("li", "ns_li", "LogsInstance/ns/li");
  const std::string loki = ident("loki", "ns_li_0", "LogsInstance/ns/li/0");
  ASSERT_EQ(files.size(), 3U);
  EXPECT_EQ(files[1].key, li + ".alloy");
  EXPECT_EQ(files[1].text, file_header("ns", "a") + "\nloki.write \"" + loki +
                               "\" {\n  endpoint {\n    url = \"https://l/push\"\n  }\n}\n");
  EXPECT_EQ(files[2].text, file_header("ns", "a") + "\n" +
                               expand(R"a(loki.source.kubernetes_events "@L@" {
  forward_to = [loki.relabel.@L@.receiver]
  job_name = "integrations/kubernetes/eventhandler"
  namespaces = ["apps"]
  log_format = "json"
  client {
    kubeconfig_file = "/k"
  }
}

loki.relabel "@L@" {
  forward_to = [loki.write.@LOKI@.receiver]
  rule {
    target_label = "instance"
    replacement = "ev"
  }
  rule {
    target_label = "agent_hostname"
    replacement = "ev"
  }
  rule {
    target_label = "cluster"
    replacement = "c1"
  }
}
)a",
                                      label_of("events")));
}

TEST(IntegrationsTranslation, EventHandlerWithoutLogsInstance) {
  IntegrationsConfig out;
  auto files = translate_checked(
      base_tree(), {member("eventhandler", R"j({"logs_instance": "ns/gone"})j", "e1")}, false,
      root_a(), &out);
  // A dangling reference is the hierarchy validation's finding; the events are dropped.
  EXPECT_TRUE(out.problems.empty()) << problems_text(out.problems);
  ASSERT_EQ(files.size(), 2U);
  EXPECT_NE(files[1].text.find("loki.relabel \"" + label_of("e1") + "\" {\n  forward_to = []\n"),
            std::string::npos)
      << files[1].text;
  files =
      translate_checked(base_tree(), {member("eventhandler", "{}", "e2")}, false, root_a(), &out);
  EXPECT_EQ(problems_text(out.problems),
            "C Integration ns/e2 spec.config.logs_instance: not set (events are read and "
            "discarded)\n");
  ASSERT_EQ(files.size(), 2U);
  // Static mode's defaults: instance and agent_hostname both "eventhandler", all namespaces.
  EXPECT_EQ(files[1].text, file_header("ns", "a") + "\n" +
                               expand(R"a(loki.source.kubernetes_events "@L@" {
  forward_to = [loki.relabel.@L@.receiver]
  job_name = "integrations/kubernetes/eventhandler"
}

loki.relabel "@L@" {
  forward_to = []
  rule {
    target_label = "instance"
    replacement = "eventhandler"
  }
  rule {
    target_label = "agent_hostname"
    replacement = "eventhandler"
  }
}
)a",
                                      label_of("e2")));
}

// A remote write or client Alloy cannot express fails the whole configuration.
TEST(IntegrationsTranslation, InstanceFailuresAreClassB) {
  value tree = base_tree();
  tree.at("metrics").at("configs").at(1).at("remote_write").at(0).as_object()["sigv4"] = {
      {"access_key", "AK"}};
  tree.at("logs").at("configs").at(0).at("clients").at(0).as_object()["bearer_token"] = "t";
  tree.at("logs").at("configs").at(0).at("clients").at(0).as_object()["bearer_token_file"] = "/t";
  IntegrationsRoot root = root_a();
  root.agent_clients = {"ns/li"};
  const auto out = translate_integrations(
      tree,
      {member("node_exporter",
              R"j({"autoscrape": {"enable": true, "metrics_instance": "ns/mi"}})j"),
       member("eventhandler", R"j({"logs_instance": "ns/li"})j", "e")},
      false, root);
  EXPECT_TRUE(out.files.empty());
  EXPECT_EQ(problems_text(out.problems),
            "B MetricsInstance ns/mi spec.remoteWrite[0].sigv4: access_key and secret_key must be "
            "set together (the Alloy configuration was not applied)\n"
            "B GrafanaAgent ns/a spec.logs.clients[0]: more than one authentication method is set "
            "(the Alloy configuration was not applied)\n");
  // An instance nobody references does not matter here.
  const auto unused = translate_integrations(tree, {member("apache_http", "{}")}, false, root);
  EXPECT_TRUE(unused.problems.empty()) << problems_text(unused.problems);
  EXPECT_EQ(unused.files.size(), 2U);
}

TEST(IntegrationsTranslation, WarningsNameTheFieldNeverTheValue) {
  IntegrationsConfig out;
  translate_checked(base_tree(), {member("redis_exporter", R"j({"redis_addr": "redis:6379",
                        "redis_password": "${REDIS_PASSWORD_VALUE}",
                        "extra_labels": {"pod": "$(POD_NAME_VALUE)"}})j")},
                    false, root_a(), &out);
  EXPECT_EQ(problems_text(out.problems),  // in bytewise order of the config's keys
            "C Integration ns/i spec.config.extra_labels.pod: contains an environment reference "
            "that static mode expanded (Alloy keeps the text literally)\n"
            "C Integration ns/i spec.config.redis_password: contains an environment reference "
            "that static mode expanded (Alloy keeps the text literally)\n");
  for (const auto& p : out.problems) {
    EXPECT_EQ(p.message.find("VALUE"), std::string::npos) << p.message;
  }
  // Kept and skipped records name fields only, whatever the value holds.
  for (const char* config :
       {R"j({"redis_addr": "r", "redis_password": ["s3cr3t"]})j",
        R"j({"redis_addr": "r", "extra_labels": {"s3cr3t-label": "s3cr3t"}})j"}) {
    translate_checked(base_tree(), {member("redis_exporter", config)}, false, root_a(), &out);
    ASSERT_FALSE(out.problems.empty());
    for (const auto& p : out.problems) {
      EXPECT_EQ(p.message.find("s3cr3t\""), std::string::npos) << p.message;
      EXPECT_EQ(p.message.find(": s3cr3t"), std::string::npos) << p.message;
    }
  }
}

TEST(IntegrationsTranslation, HostileStringsSurviveTheWriterAndChecker) {
  const std::string hostile = "\"}\nevil \"x\" {\n\\d+\\.\\d+ \x01 \x7F \xFF ${1} $1 ü";
  boost::json::object config{{"redis_addr", hostile},
                             {"namespace", hostile},
                             {"check_keys", hostile + "," + hostile},
                             {"instance", hostile},
                             {"extra_labels", {{"team", hostile}}},
                             {"autoscrape", {{"enable", true}, {"metrics_instance", "ns/mi"}}}};
  IntegrationsConfig out;
  const auto files = translate_checked(
      base_tree(), {{"ns", "i", "redis_exporter", false, value(config)}}, false, root_a(), &out);
  ASSERT_EQ(files.size(), 3U) << problems_text(out.problems);
  std::vector<check::Violation> v;
  const auto parsed = check::parse_file(files[2], v);
  ASSERT_TRUE(v.empty()) << check::to_string(v);
  const auto& exporter = parsed.blocks.at(0);
  EXPECT_EQ(exporter.attribute("redis_addr")->value.text, hostile);
  EXPECT_EQ(exporter.attribute("namespace")->value.text, hostile);
  ASSERT_EQ(exporter.attribute("check_keys")->value.items.size(), 2U);
  EXPECT_EQ(exporter.attribute("check_keys")->value.items[1].text, hostile);
  // Constant replacements reach the label literally: every `$` doubled.
  std::string doubled;
  for (const char ch : hostile) doubled += ch == '$' ? std::string("$$") : std::string(1, ch);
  const auto rules = parsed.blocks.at(1).children("rule");
  EXPECT_EQ(rules.at(2)->attribute("replacement")->value.text, doubled);   // instance
  EXPECT_EQ(rules.back()->attribute("replacement")->value.text, doubled);  // team
}

// The static golden inputs' Integrations, both subsets, through the checker; what is kept
// on static is exactly what the translation does not cover.
TEST(IntegrationsTranslation, EveryStaticGoldenInputPassesTheChecker) {
  const fs::path dir = fs::path(AOP_SOURCE_DIR) / "tests/agent/golden";
  std::size_t translated = 0;
  std::vector<std::string> kept;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto input = e.path() / "input.yaml";
    if (!fs::exists(input)) continue;
    for (const auto& r : test::roots(test::read(input))) {
      if (r.hierarchy.integrations.empty()) continue;
      for (const bool all_nodes : {false, true}) {
        SCOPED_TRACE(e.path().filename().string() + (all_nodes ? " ds" : " deploy"));
        auto tree = agent::integrations_config_tree(r.hierarchy, r.assets, {}, all_nodes, nullptr);
        if (!tree) continue;
        const auto c =
            translate_integrations(*tree, test::members(r.hierarchy), all_nodes, root_of(r));
        const auto files = test::written(c.files, r.ns(), r.name());
        const auto v = check::check_config(files, r.ns(), r.name());
        EXPECT_TRUE(v.empty()) << check::to_string(v) << problems_text(c.problems);
        EXPECT_FALSE(translation_failed(c.problems)) << problems_text(c.problems);
        for (const auto& f : files) translated += f.key.rfind("integration_", 0) == 0 ? 1 : 0;
        for (const auto& k : c.kept) kept.push_back(k.ns + "/" + k.name + " " + k.reason);
      }
    }
  }
  // (integrations-validation's over-long-volume-name blackbox is rejected by
  // validate_integrations(), so it is not among them.)
  EXPECT_GE(translated, 7U);
  // The static golden inputs exercise the static renderer, not valid exporter settings.
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{
                      "monitoring/dangling spec.config.redis_addr: required by "
                      "prometheus.exporter.redis",
                      "monitoring/dangling-short spec.config.redis_addr: required by "
                      "prometheus.exporter.redis",
                      "monitoring/node spec.config.max_procs: not an argument of "
                      "prometheus.exporter.unix",
                      "monitoring/redis spec.config.redis_addr: required by "
                      "prometheus.exporter.redis"}));
}

// deploy/examples, the documented starting point, translates and loads.
TEST(IntegrationsTranslation, DeployExamples) {
  std::string yaml;
  for (const auto& e : fs::directory_iterator(fs::path(AOP_SOURCE_DIR) / "deploy/examples")) {
    if (e.path().extension() == ".yaml") yaml += test::read(e.path()) + "\n---\n";
  }
  const auto roots = test::roots(yaml);
  ASSERT_FALSE(roots.empty());
  std::size_t translated = 0;
  for (const auto& r : roots) {
    for (const bool all_nodes : {false, true}) {
      auto tree = agent::integrations_config_tree(r.hierarchy, r.assets, {}, all_nodes, nullptr);
      ASSERT_TRUE(tree.has_value());
      const auto c =
          translate_integrations(*tree, test::members(r.hierarchy), all_nodes, root_of(r));
      const auto files = test::written(c.files, r.ns(), r.name());
      const auto v = check::check_config(files, r.ns(), r.name());
      EXPECT_TRUE(v.empty()) << check::to_string(v);
      EXPECT_TRUE(c.kept.empty()) << problems_text(c.problems);
      EXPECT_FALSE(translation_failed(c.problems)) << problems_text(c.problems);
      for (const auto& f : files) translated += f.key.rfind("integration_", 0) == 0 ? 1 : 0;
    }
  }
  EXPECT_EQ(translated, 2U);  // node_exporter and redis_exporter
}

// Rendering from custom resources listed in another order, with every config's keys in
// another order, gives the same bytes and the same problems.
TEST(IntegrationsTranslation, DeterministicUnderShuffledInputs) {
  const std::string input =
      test::read(fs::path(AOP_SOURCE_DIR) / "tests/agent/golden/integrations-config/input.yaml");
  const auto reference = test::roots(input);
  ASSERT_EQ(reference.size(), 1U);
  const auto render = [](const test::Root& r, bool reverse_keys) {
    std::vector<std::string> out;
    for (const bool all_nodes : {false, true}) {
      auto tree = agent::integrations_config_tree(r.hierarchy, r.assets, {}, all_nodes, nullptr);
      EXPECT_TRUE(tree.has_value());
      auto members = test::members(r.hierarchy);
      if (reverse_keys) {
        for (auto& m : members) {
          if (!m.config.is_object()) continue;
          boost::json::object reversed;
          const auto& o = m.config.get_object();
          for (auto it = o.end(); it != o.begin();) {
            --it;
            reversed[it->key()] = it->value();
          }
          m.config = reversed;
        }
      }
      const auto c = translate_integrations(*tree, members, all_nodes, root_of(r));
      for (const auto& f : test::written(c.files, r.ns(), r.name())) {
        out.push_back(f.key + "\n" + f.text);
      }
      out.push_back(problems_text(c.problems));
    }
    return out;
  };
  const auto want = render(reference[0], false);
  ASSERT_GE(want.size(), 4U);
  for (const unsigned seed : {3U, 11U, 97U}) {
    const auto shuffled = test::roots(input, {}, seed);
    ASSERT_EQ(shuffled.size(), 1U);
    EXPECT_EQ(render(shuffled[0], seed % 2 == 1), want);
  }
}
}  // namespace
}  // namespace aop::alloy
