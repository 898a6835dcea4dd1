// Static and Alloy integrations configurations of the same custom resources are
// equivalent, checked by walking the parsed Alloy graph (not by comparing text). For every
// Integration of the static backend's golden inputs, of deploy/examples and of the input
// below, in both subsets (Deployment and DaemonSet) and both compat modes, the static
// config of the Integration (its element of `<name>_configs` in the static tree) is either
//
//   * translated: one prometheus.exporter.<component> whose arguments are the static keys
//     through the argument table of the backend specification; with autoscrape, a
//     discovery.relabel giving the targets the labels static mode gave them (job,
//     agent_hostname, instance, the __meta_agent_integration_* labels, extra labels, then
//     the user's rules in order), a prometheus.scrape with the static intervals and no
//     clustering, and the remote write of the MetricsInstance it names with the same
//     endpoints; an eventhandler becomes loki.source.kubernetes_events → loki.relabel →
//     the LogsInstance's loki.write components; or
//   * kept on static: reported (class `kept`, naming the field), absent from the Alloy
//     configuration, and present, with the same config, in the static integrations Secret
//     the hybrid root applies.
//
// Expected values are the static tree read through the specification's tables, spelled
// out here.
#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "k8s/yaml.hpp"
#include "reconcile/alloy/backend.hpp"
#include "reconcile/alloy/duration.hpp"
#include "reconcile/alloy/integrations.hpp"
#include "reconcile/alloy/labels.hpp"
#include "tests/alloy/equivalence.hpp"
#include "tests/alloy/support.hpp"

namespace aop::alloy {
namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;
using test::expect_same_value;
using test::text;

struct Counts {
  std::size_t translated = 0;
  std::size_t autoscraped = 0;
  std::size_t kept = 0;
  std::size_t kept_on_static = 0;  // found in the hybrid root's static config
  std::size_t arguments = 0;
  std::size_t endpoints = 0;
  std::set<std::string> components;
};

// ---- The argument table of the specification ---------------------------------------------

// How a static key becomes an argument.
enum class Conv { same, csv, json_text };

struct Arg {
  std::string block;  // "" → an attribute of the exporter
  std::string to;
  Conv conv = Conv::same;
};

// The exporter component of each supported integration.
const std::map<std::string, std::string>& components() {
  static const std::map<std::string, std::string> m = {{"node_exporter", "unix"},
                                                       {"process_exporter", "process"},
                                                       {"cadvisor", "cadvisor"},
                                                       {"statsd_exporter", "statsd"},
                                                       {"redis_exporter", "redis"},
                                                       {"mysqld_exporter", "mysql"},
                                                       {"postgres_exporter", "postgres"},
                                                       {"memcached_exporter", "memcached"},
                                                       {"kafka_exporter", "kafka"},
                                                       {"elasticsearch_exporter", "elasticsearch"},
                                                       {"blackbox", "blackbox"},
                                                       {"snmp", "snmp"},
                                                       {"apache_http", "apache"},
                                                       {"consul_exporter", "consul"},
                                                       {"dnsmasq_exporter", "dnsmasq"},
                                                       {"mongodb_exporter", "mongodb"},
                                                       {"mssql", "mssql"},
                                                       {"squid_exporter", "squid"},
                                                       {"github_exporter", "github"},
                                                       {"snowflake_exporter", "snowflake"},
                                                       {"agent", "self"}};
  return m;
}

// The renamed keys, by integration (every other key keeps its name).
const std::map<std::string, std::map<std::string, Arg>>& renames() {
  static const std::map<std::string, std::map<std::string, Arg>> m = {
      {"node_exporter",
       {{"arp_device_exclude", {"arp", "device_exclude"}},
        {"arp_netlink", {"arp", "netlink"}},
        {"enable_bcache_priority_stats", {"bcache", "priority_stats"}},
        {"enable_cpu_info_metric", {"cpu", "info"}},
        {"diskstats_device_exclude", {"disk", "device_exclude"}},
        {"diskstats_ignored_devices", {"disk", "device_exclude"}},
        {"filesystem_fs_types_exclude", {"filesystem", "fs_types_exclude"}},
        {"filesystem_mount_timeout", {"filesystem", "mount_timeout"}},
        {"filesystem_ignored_mount_points", {"filesystem", "mount_points_exclude"}},
        {"netdev_device_whitelist", {"netdev", "device_include"}},
        {"ntp_server", {"ntp", "server"}},
        {"ntp_ip_ttl", {"ntp", "ip_ttl"}},
        {"systemd_unit_blacklist", {"systemd", "unit_exclude"}},
        {"systemd_enable_restarts_metrics", {"systemd", "enable_restarts"}},
        {"textfile_directory", {"textfile", "directory"}},
        {"vmstat_fields", {"vmstat", "fields"}}}},
      {"cadvisor",
       {{"containerd", {"", "containerd_host"}},
        {"docker", {"", "docker_host"}},
        {"docker_tls", {"", "use_docker_tls"}}}},
      {"redis_exporter",
       {{"check_keys", {"", "check_keys", Conv::csv}},
        {"check_key_groups", {"", "check_key_groups", Conv::csv}},
        {"check_single_keys", {"", "check_single_keys", Conv::csv}},
        {"check_streams", {"", "check_streams", Conv::csv}},
        {"check_single_streams", {"", "check_single_streams", Conv::csv}},
        {"count_keys", {"", "count_keys", Conv::csv}}}},
      {"mysqld_exporter",
       {{"info_schema_processlist_min_time", {"info_schema.processlist", "min_time"}},
        {"info_schema_tables_databases", {"info_schema.tables", "databases"}},
        {"perf_schema_eventsstatements_limit", {"perf_schema.eventsstatements", "limit"}},
        {"perf_schema_eventsstatements_digtext_text_limit",
         {"perf_schema.eventsstatements", "text_limit"}},
        {"heartbeat_database", {"heartbeat", "database"}},
        {"heartbeat_utc", {"heartbeat", "utc"}},
        {"mysql_user_privileges", {"mysql.user", "privileges"}}}},
      {"postgres_exporter",
       {{"query_path", {"", "custom_queries_config_path"}},
        {"autodiscover_databases", {"autodiscovery", "enabled"}},
        {"include_databases", {"autodiscovery", "database_allowlist"}},
        {"exclude_databases", {"autodiscovery", "database_denylist"}}}},
      {"memcached_exporter", {{"memcached_address", {"", "address"}}}},
      {"dnsmasq_exporter",
       {{"dnsmasq_address", {"", "address"}}, {"leases_path", {"", "leases_file"}}}},
      {"blackbox", {{"blackbox_config", {"", "config", Conv::json_text}}}},
      {"mssql", {{"query_config", {"", "query_config", Conv::json_text}}}}};
  return m;
}

// Canonical JSON: compact, members sorted bytewise, integral numbers as integers.
std::string canonical(const value& v) {
  if (v.is_object()) {
    std::vector<std::string> keys;
    for (const auto& kv : v.get_object()) keys.emplace_back(kv.key());
    std::sort(keys.begin(), keys.end());
    std::string out = "{";
    for (const auto& k : keys) {
      if (out.size() > 1) out += ",";
      out += boost::json::serialize(value(k)) + ":" + canonical(v.get_object().at(k));
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (const auto& e : v.get_array()) out += (out.size() > 1 ? "," : "") + canonical(e);
    return out + "]";
  }
  if (v.is_number()) {
    const double d = v.to_number<double>();
    if (d == static_cast<double>(static_cast<long long>(d))) {
      return std::to_string(static_cast<long long>(d));
    }
  }
  return boost::json::serialize(v);
}

const check::Block* child(const check::Block& b, std::string_view name) {
  const auto c = b.children(name);
  EXPECT_LE(c.size(), 1U) << name;
  return c.empty() ? nullptr : c[0];
}

// The exporter's arguments against the static config (common keys aside).
void expect_arguments(const std::string& integration, const object& config,
                      const check::Block& exporter, const std::string& where, Counts& n) {
  std::map<std::string, std::size_t> per_block;  // "" → top level
  std::size_t blocks_from_keys = 0;
  const auto& table =
      renames().count(integration) ? renames().at(integration) : std::map<std::string, Arg>();
  for (const auto& [k, v] : config) {
    const std::string key(k);
    if (key == "autoscrape" || key == "instance" || key == "extra_labels") continue;
    const std::string at = std::string(where).append(".").append(key);
    ++n.arguments;
    // Keys that become blocks of their own.
    if (integration == "process_exporter" && key == "process_names") {
      const auto matchers = exporter.children("matcher");
      ASSERT_EQ(matchers.size(), v.get_array().size()) << at;
      for (std::size_t i = 0; i < matchers.size(); ++i) {
        test::expect_fields(
            v.get_array()[i].get_object(), *matchers[i],
            {{"name", "name"}, {"comm", "comm"}, {"exe", "exe"}, {"cmdline", "cmdline"}},
            at + "[" + std::to_string(i) + "]");
      }
      blocks_from_keys += matchers.size();
      continue;
    }
    if ((integration == "memcached_exporter" && key == "tls_config") ||
        (integration == "elasticsearch_exporter" && key == "basic_auth")) {
      test::expect_client_blocks(config, exporter, {key}, where);
      ++blocks_from_keys;
      continue;
    }
    if (integration == "blackbox" && key == "blackbox_targets") {
      array want;
      for (const auto& t : v.get_array()) {
        object o;
        for (const char* f : {"address", "module", "name"}) {
          if (const value* x = t.get_object().if_contains(f)) o[f] = *x;
        }
        want.push_back(std::move(o));
      }
      const check::Attribute* a = exporter.attribute("targets");
      ASSERT_NE(a, nullptr) << at;
      expect_same_value(want, a->value, at);
      ++per_block[""];
      continue;
    }
    const auto it = table.find(key);
    const Arg arg = it != table.end() ? it->second : Arg{"", key, Conv::same};
    const check::Block* holder = &exporter;
    if (!arg.block.empty()) {
      holder = child(exporter, arg.block);
      ASSERT_NE(holder, nullptr) << at << " → block " << arg.block;
    }
    const check::Attribute* a = holder->attribute(arg.to);
    ASSERT_NE(a, nullptr) << at << " → " << arg.block << " " << arg.to;
    ++per_block[arg.block];
    switch (arg.conv) {
      case Conv::same:
        expect_same_value(v, a->value, at);
        break;
      case Conv::csv: {
        // Comma-separated in static mode, a list in Alloy.
        array want;
        const std::string s = text(v);
        for (std::size_t start = 0; start <= s.size();) {
          const auto comma = std::min(s.find(',', start), s.size());
          want.emplace_back(s.substr(start, comma - start));
          start = comma + 1;
        }
        expect_same_value(want, a->value, at);
        break;
      }
      case Conv::json_text:
        expect_same_value(value(canonical(v)), a->value, at);
        break;
    }
  }
  EXPECT_EQ(exporter.attributes.size(), per_block[""]) << where << ": arguments without a key";
  std::size_t blocks = blocks_from_keys;
  for (const auto& [block, count] : per_block) {
    if (block.empty()) continue;
    ++blocks;
    const check::Block* b = child(exporter, block);
    ASSERT_NE(b, nullptr) << where << " " << block;
    EXPECT_EQ(b->attributes.size(), count) << where << " " << block;
  }
  EXPECT_EQ(exporter.blocks.size(), blocks) << where << ": blocks without a key";
}

// `coalesce(sys.env("HOSTNAME"), constants.hostname) + ":8080"`: static mode's agent
// identifier, `$HOSTNAME` (else the OS hostname) and its HTTP port.
void expect_agent_id(const check::Value& v, const std::string& where) {
  using K = check::Value::Kind;
  ASSERT_EQ(v.kind, K::concat) << where;
  ASSERT_EQ(v.items.size(), 2U) << where;
  const check::Value& call = v.items[0];
  EXPECT_EQ(call.kind, K::call) << where;
  EXPECT_EQ(call.text, "coalesce") << where;
  ASSERT_EQ(call.items.size(), 2U) << where;
  EXPECT_EQ(call.items[0].text, "sys.env") << where;
  ASSERT_EQ(call.items[0].items.size(), 1U) << where;
  EXPECT_EQ(call.items[0].items[0].text, "HOSTNAME") << where;
  EXPECT_EQ(call.items[1].kind, K::reference) << where;
  EXPECT_EQ(call.items[1].text, "constants.hostname") << where;
  EXPECT_EQ(v.items[1].text, ":8080") << where;
}

// Static mode set constant labels literally; Go's expansion turns `$$` back into `$`.
std::string literal(const std::string& s) {
  std::string out;
  for (const char c : s) out += c == '$' ? std::string("$$") : std::string(1, c);
  return out;
}

void expect_constant(const check::Block& rule, const std::string& label, const std::string& value,
                     const std::string& where) {
  EXPECT_EQ(rule.attributes.size(), 2U) << where;
  ASSERT_NE(rule.attribute("target_label"), nullptr) << where;
  EXPECT_EQ(rule.attribute("target_label")->value.text, label) << where;
  ASSERT_NE(rule.attribute("replacement"), nullptr) << where;
  EXPECT_EQ(rule.attribute("replacement")->value.kind, check::Value::Kind::string) << where;
  EXPECT_EQ(rule.attribute("replacement")->value.text, literal(value)) << where;
}

std::vector<std::string> refs(const check::Block& b, std::string_view attribute) {
  const check::Attribute* a = b.attribute(attribute);
  EXPECT_NE(a, nullptr) << b.name << " " << attribute;
  return a != nullptr ? test::references(a->value) : std::vector<std::string>();
}

const object* instance_named(const value& tree, std::string_view section, const std::string& name) {
  const value* s = tree.get_object().if_contains(section);
  const value* configs = s != nullptr ? s->get_object().if_contains("configs") : nullptr;
  if (configs == nullptr) return nullptr;
  for (const auto& c : configs->get_array()) {
    if (text(c.at("name")) == name) return &c.get_object();
  }
  return nullptr;
}

// A Prometheus duration in milliseconds (the static tree's scrape settings).
std::uint64_t ms_of(const value& v) {
  const auto ms = parse_prometheus_duration(text(v));
  EXPECT_TRUE(ms.has_value()) << text(v);
  return ms.value_or(0);
}

// The autoscrape pipeline of a translated Integration.
void expect_autoscrape(const std::string& integration, const object& config, const value& tree,
                       const test::Graph& g, const std::string& label, const std::string& where,
                       Counts& n) {
  const object empty;
  const value* as = config.if_contains("autoscrape");
  const object& autoscrape = as != nullptr ? as->get_object() : empty;
  const value* enable = autoscrape.if_contains("enable");
  const std::string mi = autoscrape.contains("metrics_instance")
                             ? text(autoscrape.at("metrics_instance"))
                             : std::string();
  const object* instance = instance_named(tree, "metrics", mi);
  const check::Block* relabel = g.component("discovery.relabel", label);
  const check::Block* scrape = g.component("prometheus.scrape", label);
  if (enable == nullptr || !enable->as_bool() || instance == nullptr) {
    // As in static mode, the exporter runs and nothing scrapes it.
    EXPECT_EQ(relabel, nullptr) << where;
    EXPECT_EQ(scrape, nullptr) << where;
    return;
  }
  ++n.autoscraped;
  ASSERT_NE(relabel, nullptr) << where;
  ASSERT_NE(scrape, nullptr) << where;
  const std::string component = components().at(integration);
  EXPECT_EQ(refs(*relabel, "targets"),
            std::vector<std::string>{"prometheus.exporter." + component + "." + label + ".targets"})
      << where;
  // The labels of static mode's integration targets, in the specification's order.
  const auto rules = relabel->children("rule");
  std::size_t i = 0;
  const auto next = [&]() -> const check::Block* {
    EXPECT_LT(i, rules.size()) << where << ": too few rules";
    return i < rules.size() ? rules[i++] : nullptr;
  };
  const check::Block* r = next();
  ASSERT_NE(r, nullptr);
  expect_constant(*r, "job", "integrations/" + integration, where + " job");
  r = next();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->attribute("target_label")->value.text, "agent_hostname") << where;
  expect_agent_id(r->attribute("replacement")->value, where + " agent_hostname");
  // The instance label: the `instance` key; else the agent identifier for exporters of
  // the agent's own host, the integration's name for blackbox and snmp, and otherwise
  // what the exporter computes (no rule).
  static const std::set<std::string> host = {"node_exporter", "process_exporter", "cadvisor",
                                             "statsd_exporter", "agent"};
  if (const value* in = config.if_contains("instance")) {
    r = next();
    ASSERT_NE(r, nullptr);
    expect_constant(*r, "instance", text(*in), where + " instance");
  } else if (host.count(integration) != 0) {
    r = next();
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->attribute("target_label")->value.text, "instance") << where;
    expect_agent_id(r->attribute("replacement")->value, where + " instance");
  } else if (integration == "blackbox" || integration == "snmp") {
    r = next();
    ASSERT_NE(r, nullptr);
    expect_constant(*r, "instance", integration, where + " instance");
  }
  r = next();
  ASSERT_NE(r, nullptr);
  expect_constant(*r, "__meta_agent_integration_name", integration, where);
  r = next();
  ASSERT_NE(r, nullptr);
  test::expect_same_rule(
      boost::json::parse(R"({"source_labels":["instance"],)"
                         R"("target_label":"__meta_agent_integration_instance"})")
          .get_object(),
      *r, where);
  r = next();
  ASSERT_NE(r, nullptr);
  expect_constant(*r, "__meta_agent_integration_autoscrape", "1", where);
  if (integration == "blackbox" || integration == "snmp") {
    r = next();
    ASSERT_NE(r, nullptr);
    test::expect_same_rule(
        boost::json::parse(R"({"source_labels":["__param_target"],"target_label":")" + integration +
                           R"(_target"})")
            .get_object(),
        *r, where);
  }
  if (const value* extra = config.if_contains("extra_labels")) {
    std::vector<std::string> keys;
    for (const auto& kv : extra->get_object()) keys.emplace_back(kv.key());
    std::sort(keys.begin(), keys.end());
    for (const auto& k : keys) {
      r = next();
      ASSERT_NE(r, nullptr);
      expect_constant(*r, k, text(extra->get_object().at(k)),
                      std::string(where).append(" extra ").append(k));
    }
  }
  const value* user = autoscrape.if_contains("relabel_configs");
  std::vector<const check::Block*> rest(rules.begin() + static_cast<std::ptrdiff_t>(i),
                                        rules.end());
  test::expect_same_rules(user, rest, where + " autoscrape");

  // The scrape: static intervals (the autoscrape ones, else the GrafanaAgent's, else
  // Prometheus' defaults, the timeout capped at the interval), no clustering.
  EXPECT_EQ(refs(*scrape, "targets"),
            std::vector<std::string>{"discovery.relabel." + label + ".output"});
  EXPECT_EQ(scrape->attribute("job_name")->value.text, "integrations/" + integration) << where;
  const object& metrics = tree.at("metrics").get_object();
  const value* gv = metrics.if_contains("global");
  const object& global = gv != nullptr ? gv->get_object() : empty;
  std::uint64_t si = 60000;
  if (const value* v = autoscrape.if_contains("scrape_interval")) {
    si = ms_of(*v);
  } else if (const value* v = global.if_contains("scrape_interval")) {
    si = ms_of(*v);
  }
  std::uint64_t st = std::min<std::uint64_t>(
      global.contains("scrape_timeout") ? ms_of(global.at("scrape_timeout")) : 10000, si);
  if (const value* v = autoscrape.if_contains("scrape_timeout")) st = ms_of(*v);
  EXPECT_EQ(check::parse_go_duration(scrape->attribute("scrape_interval")->value.text),
            static_cast<double>(si) * 1e6)
      << where;
  EXPECT_EQ(check::parse_go_duration(scrape->attribute("scrape_timeout")->value.text),
            static_cast<double>(st) * 1e6)
      << where;
  EXPECT_TRUE(scrape->children("clustering").empty()) << where;
  EXPECT_TRUE(scrape->blocks.empty()) << where;

  // Metric relabel rules, then the remote write of the named MetricsInstance.
  auto out = refs(*scrape, "forward_to");
  ASSERT_FALSE(out.empty()) << where;
  const check::Block* next_hop = g.at(out[0]);
  ASSERT_NE(next_hop, nullptr) << where;
  const value* mr = autoscrape.if_contains("metric_relabel_configs");
  if (mr != nullptr && !mr->get_array().empty()) {
    // The report series go around the user's rules, as Prometheus never relabeled them.
    ASSERT_EQ(out.size(), 2U) << where;
    ASSERT_EQ(next_hop->name, "prometheus.relabel") << where;
    auto mrules = next_hop->children("rule");
    ASSERT_FALSE(mrules.empty()) << where;
    EXPECT_EQ(mrules[0]->attribute("action")->value.text, "drop") << where;
    mrules.erase(mrules.begin());
    test::expect_same_rules(mr, mrules, where + " metric");
    const check::Block* report = g.at(out[1]);
    ASSERT_NE(report, nullptr) << where;
    ASSERT_EQ(report->children("rule").size(), 1U) << where;
    EXPECT_EQ(report->children("rule")[0]->attribute("action")->value.text, "keep") << where;
    EXPECT_EQ(refs(*report, "forward_to"), refs(*next_hop, "forward_to")) << where;
    out = refs(*next_hop, "forward_to");
    ASSERT_EQ(out.size(), 1U) << where;
    next_hop = g.at(out[0]);
    ASSERT_NE(next_hop, nullptr) << where;
  } else {
    ASSERT_EQ(out.size(), 1U) << where;
  }
  ASSERT_EQ(next_hop->name, "prometheus.remote_write") << where;
  // The instance's remote writes, else the GrafanaAgent's; the external labels without a
  // replica label (integration pods are not replicated).
  const value* rw = instance->if_contains("remote_write");
  if (rw == nullptr || rw->get_array().empty()) rw = global.if_contains("remote_write");
  const auto endpoints = next_hop->children("endpoint");
  ASSERT_EQ(endpoints.size(), rw != nullptr ? rw->get_array().size() : 0U) << where;
  for (std::size_t e = 0; e < endpoints.size(); ++e) {
    test::expect_same_endpoint(rw->get_array()[e].get_object(), *endpoints[e],
                               where + " endpoint " + std::to_string(e));
    ++n.endpoints;
  }
  const value* el = global.if_contains("external_labels");
  if (el != nullptr && !el->get_object().empty()) {
    ASSERT_NE(next_hop->attribute("external_labels"), nullptr) << where;
    expect_same_value(*el, next_hop->attribute("external_labels")->value, where);
  } else {
    EXPECT_EQ(next_hop->attribute("external_labels"), nullptr) << where;
  }
}

// An eventhandler: kubernetes events → the static labels → the LogsInstance's clients.
void expect_eventhandler(const object& config, const value& tree, const test::Graph& g,
                         const std::string& label, const std::string& where) {
  const check::Block* source = g.component("loki.source.kubernetes_events", label);
  const check::Block* relabel = g.component("loki.relabel", label);
  ASSERT_NE(source, nullptr) << where;
  ASSERT_NE(relabel, nullptr) << where;
  EXPECT_EQ(refs(*source, "forward_to"),
            std::vector<std::string>{"loki.relabel." + label + ".receiver"});
  EXPECT_EQ(source->attribute("job_name")->value.text, "integrations/kubernetes/eventhandler");
  std::size_t attributes = 2;
  if (const value* ns = config.if_contains("namespace")) {
    expect_same_value(array{*ns}, source->attribute("namespaces")->value, where);
    ++attributes;
  }
  if (const value* f = config.if_contains("log_format")) {
    expect_same_value(*f, source->attribute("log_format")->value, where);
    ++attributes;
  }
  EXPECT_EQ(source->attributes.size(), attributes) << where;
  const auto clients = source->children("client");
  if (const value* k = config.if_contains("kubeconfig_path")) {
    ASSERT_EQ(clients.size(), 1U) << where;
    expect_same_value(*k, clients[0]->attribute("kubeconfig_file")->value, where);
  } else {
    EXPECT_TRUE(clients.empty()) << where;
  }
  // The LogsInstance's loki.write components, in client order.
  const std::string li =
      config.contains("logs_instance") ? text(config.at("logs_instance")) : std::string();
  const object* instance = instance_named(tree, "logs", li);
  std::vector<std::string> want;
  if (instance != nullptr && instance->contains("clients")) {
    const auto writes = g.all("loki.write");
    const auto& cl = instance->at("clients").get_array();
    for (const auto* w : writes) {
      const check::Block* endpoint = w->children("endpoint").at(0);
      const std::string url = endpoint->attribute("url")->value.text;
      if (want.size() < cl.size() && url == text(cl[want.size()].at("url"))) {
        want.push_back("loki.write." + *w->label + ".receiver");
      }
    }
    EXPECT_EQ(want.size(), cl.size()) << where;
  }
  EXPECT_EQ(refs(*relabel, "forward_to"), want) << where;
  const std::string instance_label =
      config.contains("instance") ? text(config.at("instance")) : "eventhandler";
  const auto rules = relabel->children("rule");
  std::size_t extras = 0;
  if (const value* e = config.if_contains("extra_labels")) extras = e->get_object().size();
  ASSERT_EQ(rules.size(), 2 + extras) << where;
  expect_constant(*rules[0], "instance", instance_label, where);
  expect_constant(*rules[1], "agent_hostname", instance_label, where);
  if (extras > 0) {
    std::vector<std::string> keys;
    for (const auto& kv : config.at("extra_labels").get_object()) keys.emplace_back(kv.key());
    std::sort(keys.begin(), keys.end());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      expect_constant(*rules[2 + i], keys[i], text(config.at("extra_labels").at(keys[i])), where);
    }
  }
}

// JSON equality with numbers compared by value (a YAML integer against a static double).
bool same_json(const value& a, const value& b) {
  if (a.is_number() && b.is_number()) return a.to_number<double>() == b.to_number<double>();
  if (a.is_array() && b.is_array()) {
    const auto& x = a.get_array();
    const auto& y = b.get_array();
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), same_json);
  }
  if (a.is_object() && b.is_object()) {
    const auto& x = a.get_object();
    const auto& y = b.get_object();
    return x.size() == y.size() && std::all_of(x.begin(), x.end(), [&](const auto& kv) {
             const value* other = y.if_contains(kv.key());
             return other != nullptr && same_json(kv.value(), *other);
           });
  }
  return a == b;
}

// The static integrations config a hybrid root applies for one subset (null: none).
std::optional<value> hybrid_static_config(const AlloyDesired& d, const std::string& agent,
                                          bool all_nodes) {
  const std::string name =
      agent + (all_nodes ? "-integrations-ds-config" : "-integrations-deploy-config");
  const object* secret = d.desired.find(agent::Kind::secret, name);
  if (secret == nullptr) return std::nullopt;
  const auto encoded = secret->at("data").at("agent.yml").as_string();
  const auto yaml = k8s::base64_decode(std::string_view(encoded.data(), encoded.size()));
  EXPECT_TRUE(yaml.has_value());
  auto tree = k8s::yaml::parse(yaml.value_or(""));
  EXPECT_TRUE(tree.has_value());
  return tree ? std::optional<value>(std::move(*tree)) : std::nullopt;
}

void compare_root(const test::Root& r, const agent::Options& options, const std::string& what,
                  Counts& n) {
  if (r.hierarchy.integrations.empty()) return;
  SCOPED_TRACE(what + " " + r.ns() + "/" + r.name());
  const IntegrationsRoot root{r.ns(), r.name(), options.compat == agent::Compat::fixed,
                              test::agent_clients(r.hierarchy)};
  // The whole root as the backend builds it, for the Integrations kept on static.
  agent::ConfigTrees configs;
  for (const auto file : agent::kConfigFiles) {
    if (agent::config_needed(r.hierarchy, file)) {
      configs[file] = test::static_tree(r, file, options);
    }
  }
  const auto built = build_root(r.hierarchy, r.assets, configs, options);
  const auto members = test::members(r.hierarchy);
  for (const bool all_nodes : {false, true}) {
    const std::string subset = all_nodes ? " ds" : " deploy";
    auto tree = test::static_tree(
        r, all_nodes ? agent::ConfigFile::integrations_ds : agent::ConfigFile::integrations_deploy,
        options);
    if (!tree) continue;
    const IntegrationsConfig c = translate_integrations(*tree, members, all_nodes, root);
    if (translation_failed(c.problems)) {
      ADD_FAILURE() << subset << ": the integrations configuration fails as a whole\n"
                    << test::problems_text(c.problems);
      continue;
    }
    std::optional<test::Graph> g;
    if (!c.files.empty()) g.emplace(test::written(c.files, r.ns(), r.name()), r.ns(), r.name());
    const std::optional<value> hybrid =
        built.failure ? std::nullopt : hybrid_static_config(built.value, r.name(), all_nodes);
    std::map<std::string, std::size_t> next;  // per `<name>_configs`: the next element
    std::map<std::string, std::size_t> next_kept;
    const object& section = tree->at("integrations").get_object();
    for (const auto& m : members) {
      if (m.all_nodes != all_nodes) continue;
      const std::string key = m.integration + "_configs";
      const std::string where = "Integration " + m.ns + "/" + m.name + subset;
      SCOPED_TRACE(where);
      const value* list = section.if_contains(key);
      ASSERT_NE(list, nullptr) << key;
      const std::size_t index = next[key]++;
      ASSERT_LT(index, list->get_array().size()) << key;
      const object& config = list->get_array()[index].get_object();
      const std::string label =
          ident("integration", m.ns + "_" + m.name, "Integration/" + m.ns + "/" + m.name);
      const bool kept = std::any_of(c.kept.begin(), c.kept.end(), [&](const KeptIntegration& k) {
        return k.ns == m.ns && k.name == m.name;
      });
      if (kept) {
        ++n.kept;
        // Reported with the field, never silently dropped ...
        EXPECT_TRUE(std::any_of(c.problems.begin(), c.problems.end(), [&](const auto& p) {
          return p.cls == ProblemClass::kept && p.kind == "Integration" && p.ns == m.ns &&
                 p.name == m.name && !p.field.empty();
        })) << test::problems_text(c.problems);
        // ... absent from the Alloy configuration ...
        if (g) {
          for (const auto& f : g->files()) {
            for (const auto& b : f.blocks) EXPECT_NE(b.label, label) << b.name;
          }
        }
        // ... and running on the static workloads with the same config.
        ASSERT_TRUE(hybrid.has_value()) << "no static integrations config for the kept subset";
        const value* kept_list = hybrid->at("integrations").get_object().if_contains(key);
        ASSERT_NE(kept_list, nullptr) << key;
        const std::size_t k = next_kept[key]++;
        ASSERT_LT(k, kept_list->get_array().size()) << key;
        EXPECT_TRUE(same_json(kept_list->get_array()[k], value(config)))
            << boost::json::serialize(kept_list->get_array()[k]) << "\n"
            << boost::json::serialize(config);
        ++n.kept_on_static;
        continue;
      }
      ASSERT_TRUE(g.has_value()) << "translated, yet no Alloy configuration";
      if (m.integration == "eventhandler") {
        expect_eventhandler(config, *tree, *g, label, where);
        // Settings without an equivalent are reported, by field.
        for (const char* k : {"send_timeout", "informer_resync", "flush_interval", "cache_path"}) {
          if (!config.contains(k)) continue;
          EXPECT_TRUE(
              std::any_of(c.problems.begin(), c.problems.end(),
                          [&](const auto& p) {
                            return p.cls == ProblemClass::c && p.ns == m.ns && p.name == m.name &&
                                   p.message.rfind(std::string("spec.config.") + k + ":", 0) == 0;
                          }))
              << k << "\n"
              << test::problems_text(c.problems);
        }
        ++n.translated;
        n.components.insert("eventhandler");
        continue;
      }
      const auto comp = components().find(m.integration);
      ASSERT_NE(comp, components().end()) << m.integration << " translated, yet unsupported";
      const check::Block* exporter = g->component("prometheus.exporter." + comp->second, label);
      ASSERT_NE(exporter, nullptr) << "prometheus.exporter." << comp->second << " " << label;
      ++n.translated;
      n.components.insert(comp->second);
      expect_arguments(m.integration, config, *exporter, where, n);
      expect_autoscrape(m.integration, config, *tree, *g, label, where, n);
    }
    // Every kept Integration of the hybrid static config was compared: nothing else runs
    // there; the rest of that config is the static one, unchanged.
    if (hybrid) {
      for (const auto& [k, v] : tree->get_object()) {
        if (k == "integrations") continue;
        const value* same = hybrid->get_object().if_contains(k);
        ASSERT_NE(same, nullptr) << k;
        EXPECT_TRUE(same_json(*same, v)) << k;
      }
      EXPECT_EQ(hybrid->get_object().size(), tree->get_object().size());
      for (const auto& [k, v] : hybrid->at("integrations").get_object()) {
        if (k == "metrics") continue;
        EXPECT_EQ(v.get_array().size(), next_kept[std::string(k)]) << k;
      }
    }
  }
}

// Integrations of every kind the translation covers (with renamed keys, blocks, lists from
// comma-separated strings, JSON text, autoscrape variants), an eventhandler, and three
// that stay on static: an integration Alloy lacks, an inline statsd mapping and a key the
// table does not cover.
constexpr std::string_view kEveryIntegration = R"yaml(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: monitoring, uid: ga-uid}
spec:
  metrics:
    scrapeInterval: 30s
    scrapeTimeout: 20s
    externalLabels: {region: "eu \"west\""}
    remoteWrite: [{url: "http://global/push"}]
    instanceSelector: {}
  logs:
    instanceSelector: {}
  integrations:
    selector: {}
    namespaceSelector: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: metrics, namespace: monitoring}
spec:
  remoteWrite:
    - url: https://mimir/api/v1/push
      name: mimir
      remoteTimeout: 1d
      headers: {X-Scope-OrgID: team-a}
      basicAuth:
        username: {name: rw, key: user}
        password: {name: rw, key: pass}
      tlsConfig:
        ca: {secret: {name: rw, key: ca}}
        serverName: mimir.example
      queueConfig: {capacity: 5000, maxShards: 10, batchSendDeadline: 10s, minBackoff: 1s, retryOnRateLimit: true}
      metadataConfig: {send: true, sendInterval: 2m}
      writeRelabelConfigs:
        - {sourceLabels: [__name__], regex: "go_.*", action: Drop}
    - url: http://second/push
      bearerTokenFile: /var/run/token
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: bare, namespace: monitoring}
spec: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: logs, namespace: monitoring}
spec:
  clients:
    - url: http://loki-a/push
      tenantId: a
    - url: http://loki-b/push
---
apiVersion: v1
kind: Secret
metadata: {name: rw, namespace: monitoring}
stringData: {user: u, pass: p, ca: CA}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: node, namespace: monitoring}
spec:
  name: node_exporter
  type: {allNodes: true}
  config:
    autoscrape:
      enable: true
      metrics_instance: monitoring/metrics
      scrape_interval: 1m
      relabel_configs:
        - {source_labels: [__address__], target_label: addr, regex: "(.*):\\d+", replacement: "${1}"}
      metric_relabel_configs:
        - {source_labels: [__name__], regex: "node_(cpu|memory)_.*", action: keep}
    extra_labels: {team: "infra $HOME", zone: a}
    rootfs_path: /host/root
    procfs_path: /host/proc
    enable_collectors: [systemd, textfile]
    include_exporter_metrics: true
    arp_device_exclude: "^lo$"
    arp_netlink: false
    enable_cpu_info_metric: true
    filesystem_fs_types_exclude: "^(tmpfs|proc)$"
    filesystem_mount_timeout: 5s
    filesystem_ignored_mount_points: "^/(dev|proc)($|/)"
    netdev_device_whitelist: "^eth"
    ntp_server: 127.0.0.1
    ntp_ip_ttl: 2
    systemd_unit_blacklist: ".+\\.scope"
    systemd_enable_restarts_metrics: true
    textfile_directory: /var/lib/textfile
    vmstat_fields: "^(oom_kill|pgpg)"
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: procs, namespace: monitoring}
spec:
  name: process_exporter
  type: {allNodes: true}
  config:
    instance: "procs-$1"
    autoscrape: {enable: true, metrics_instance: monitoring/bare, scrape_timeout: 5s}
    procfs_path: /host/proc
    track_children: false
    process_names:
      - {name: "{{.Comm}}", cmdline: [".+"]}
      - {comm: [bash, sh]}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: cadvisor, namespace: monitoring}
spec:
  name: cadvisor
  type: {allNodes: true}
  config:
    autoscrape: {enable: false, metrics_instance: monitoring/metrics}
    docker: unix:///var/run/docker.sock
    docker_tls: false
    containerd: /run/containerd/containerd.sock
    store_container_labels: false
    disabled_metrics: [percpu]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: redis, namespace: monitoring}
spec:
  name: redis_exporter
  config:
    autoscrape: {enable: true, metrics_instance: monitoring/metrics}
    redis_addr: redis:6379
    redis_password_file: /secrets/redis
    check_keys: "db0=user*,db1=session*"
    count_keys: "a,b"
    connection_timeout: 15s
    is_cluster: true
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: mysql, namespace: apps}
spec:
  name: mysqld_exporter
  config:
    autoscrape: {enable: true, metrics_instance: monitoring/metrics, scrape_interval: 2m, scrape_timeout: 1m}
    data_source_name: "root@(mysql:3306)/"
    enable_collectors: [heartbeat]
    lock_wait_timeout: 2
    info_schema_processlist_min_time: 10
    info_schema_tables_databases: "*"
    perf_schema_eventsstatements_limit: 250
    perf_schema_eventsstatements_digtext_text_limit: 120
    heartbeat_database: hb
    heartbeat_utc: true
    mysql_user_privileges: true
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: postgres, namespace: apps}
spec:
  name: postgres_exporter
  config:
    data_source_names: ["postgresql://pg:5432/db"]
    query_path: /etc/queries.yaml
    autodiscover_databases: true
    exclude_databases: [template0]
    disable_default_metrics: true
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: memcached, namespace: apps}
spec:
  name: memcached_exporter
  config:
    memcached_address: memcached:11211
    timeout: 2s
    tls_config: {ca_file: /etc/ca.crt, server_name: mc, insecure_skip_verify: false}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: es, namespace: apps}
spec:
  name: elasticsearch_exporter
  config:
    address: https://es:9200
    all: true
    basic_auth: {username: elastic, password_file: /secrets/es}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: probes, namespace: apps}
spec:
  name: blackbox
  config:
    autoscrape: {enable: true, metrics_instance: monitoring/metrics}
    blackbox_config:
      modules:
        http_2xx: {prober: http, timeout: 5s, http: {valid_status_codes: [200, 204]}}
    blackbox_targets:
      - {name: web, address: "http://web", module: http_2xx}
    probe_timeout_offset: 1s
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: dnsmasq, namespace: apps}
spec:
  name: dnsmasq_exporter
  config: {dnsmasq_address: "dnsmasq:53", leases_path: /var/lib/misc/dnsmasq.leases, expose_leases: true}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: kafka, namespace: apps}
spec:
  name: kafka_exporter
  config:
    autoscrape: {enable: true, metrics_instance: monitoring/metrics}
    kafka_uris: ["kafka-0:9092", "kafka-1:9092"]
    use_tls: true
    topics_filter_regex: ".*"
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: mssql, namespace: apps}
spec:
  name: mssql
  config:
    connection_string: "sqlserver://u:p@mssql:1433"
    max_idle_connections: 3
    query_config: {metrics: [{metric_name: a, query: "SELECT 1", type: gauge}]}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: self, namespace: monitoring}
spec:
  name: agent
  config:
    autoscrape: {enable: true, metrics_instance: monitoring/metrics}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: events, namespace: monitoring}
spec:
  name: eventhandler
  config:
    logs_instance: monitoring/logs
    namespace: apps
    log_format: json
    instance: "cluster-$1"
    extra_labels: {cluster: prod, "a_b": "\"q\""}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: windows, namespace: monitoring}
spec:
  name: windows_exporter
  config: {enabled_collectors: "cpu,cs"}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: statsd, namespace: monitoring}
spec:
  name: statsd_exporter
  config:
    listen_udp: ":9125"
    mapping_config: {mappings: [{match: "a.*", name: a}]}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: node-odd, namespace: tools}
spec:
  name: node_exporter
  type: {allNodes: true}
  config: {rootfs_path: /, no_such_key: 1}
)yaml";

TEST(IntegrationsEquivalence, EveryStaticInputHasTheSamePipelinesInAlloy) {
  auto inputs = test::static_inputs();
  inputs.emplace_back("every integration", std::string(kEveryIntegration));
  Counts n;
  for (const auto compat : {agent::Compat::upstream, agent::Compat::fixed}) {
    agent::Options options;
    options.compat = compat;
    const std::string mode = compat == agent::Compat::fixed ? " (fixed)" : "";
    for (const auto& [what, yaml] : inputs) {
      for (const auto& r : test::roots(yaml, options)) compare_root(r, options, what + mode, n);
    }
  }
  // What was compared, so that a change that compares nothing fails.
  EXPECT_GE(n.translated, 40U);
  EXPECT_GE(n.autoscraped, 15U);
  EXPECT_GE(n.kept, 10U);
  EXPECT_EQ(n.kept_on_static, n.kept);
  EXPECT_GE(n.arguments, 100U);
  EXPECT_GE(n.endpoints, 15U);
  EXPECT_GE(n.components.size(), 14U);
  std::printf(
      "compared %zu translated Integrations (%zu autoscraped, %zu arguments, %zu endpoints), %zu "
      "kept on static and found there\n",
      n.translated, n.autoscraped, n.arguments, n.endpoints, n.kept);
}

}  // namespace
}  // namespace aop::alloy
