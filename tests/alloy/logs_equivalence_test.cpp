// Static and Alloy logs configurations of the same custom resources are equivalent,
// checked by walking the parsed Alloy graph (not by comparing text). For every logs input
// of the static backend's golden tests and of deploy/examples, in both compat modes, and
// for the inputs below (every client setting, every pipeline stage, hostile strings):
//
//   * each client of each LogsInstance is one loki.write, in hierarchy and client order,
//     with the same URL, tenant, batch and backoff settings, external labels, auth and TLS;
//   * each logs job is discovery.relabel → local.file_match → loki.source.file →
//     loki.process, with the same targets discovery (pod discovery narrowed to the node),
//     the same relabel rules in order and nothing before them, the static agent's positions
//     file, and the same pipeline stages with their arguments in order;
//   * a job without a pipeline was skipped with a class-A record on its member; a root
//     that fails as a whole has a class-B record naming the field; an instance without
//     clients has a class-C record.
//
// Expected values are the static tree read through the mapping tables of the backend
// specification (logs clients, stages, sizes), spelled out here.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/alloy/labels.hpp"
#include "reconcile/alloy/logs.hpp"
#include "tests/alloy/equivalence.hpp"
#include "tests/alloy/support.hpp"

namespace aop::alloy {
namespace {

using boost::json::object;
using boost::json::value;
using test::expect_fields;
using test::expect_same_value;
using test::Key;
using test::text;

struct Counts {
  std::size_t roots = 0;
  std::size_t failed = 0;  // class B, reported
  std::size_t clients = 0;
  std::size_t jobs = 0;
  std::size_t skipped = 0;  // class A, reported
  std::size_t rules = 0;
  std::size_t stages = 0;
  std::set<std::string> stage_kinds;
};

// A promtail size text in bytes: digits, then a unit read case-insensitively, every
// multiple a power of 1024 (the table of the specification).
std::uint64_t size_bytes(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i;
  std::uint64_t n = std::stoull(s.substr(0, i));
  std::string unit;
  for (const char c : s.substr(i)) {
    if (c != ' ') unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const std::string letters = "kmgtpe";
  if (unit.empty() || unit == "b" || unit == "byte") return n;
  const auto power = letters.find(unit[0]);
  EXPECT_NE(power, std::string::npos) << s;
  for (std::size_t k = 0; k <= power; ++k) n *= 1024;
  return n;
}

// Alloy's `<n>B` for a byte count.
std::string bytes_text(std::uint64_t n) {
  return std::to_string(n) + "B";
}

void expect_attr(const check::Block& b, std::string_view name, const value& want,
                 const std::string& where) {
  const check::Attribute* a = b.attribute(name);
  ASSERT_NE(a, nullptr) << where << ": " << name;
  expect_same_value(want, a->value, where + "." + std::string(name));
}

void expect_stages(const value* list, const std::vector<check::Block>& got,
                   const std::string& where, Counts& n);

// One static stage element with one key against its stage block (the stage table of the
// specification: names, renamed keys, the values promtail defaulted and Alloy does not).
void expect_stage(const std::string& kind, const value& body, const check::Block& got,
                  const std::string& where, Counts& n) {
  ++n.stages;
  n.stage_kinds.insert(kind);
  const object empty;
  const object& o = body.is_object() ? body.get_object() : empty;
  const auto same = [&](std::string_view block, std::initializer_list<Key> keys,
                        std::initializer_list<std::string_view> nested = {},
                        std::size_t extra = 0) {
    EXPECT_EQ(got.name, block) << where;
    expect_fields(o, got, keys, where, nested, extra);
  };
  if (kind == "cri") {
    // max_partial_lines 0 is promtail's "default": omitted; sizes become bytes.
    const value* lines = o.if_contains("max_partial_lines");
    const bool zero = lines != nullptr && lines->to_number<double>() == 0;
    const std::size_t size = o.contains("max_partial_line_size") ? 1 : 0;
    if (zero) {
      same("stage.cri", {{"max_partial_line_size_truncate", "max_partial_line_size_truncate"}},
           {"max_partial_line_size", "max_partial_lines"}, size);
    } else {
      same("stage.cri",
           {{"max_partial_lines", "max_partial_lines"},
            {"max_partial_line_size_truncate", "max_partial_line_size_truncate"}},
           {"max_partial_line_size"}, size);
    }
    if (zero) {
      EXPECT_EQ(got.attribute("max_partial_lines"), nullptr) << where;
    }
    if (const value* sz = o.if_contains("max_partial_line_size")) {
      expect_attr(got, "max_partial_line_size", value(static_cast<double>(size_bytes(text(*sz)))),
                  where);
    }
  } else if (kind == "docker" || kind == "decolorize") {
    same(kind == "docker" ? "stage.docker" : "stage.decolorize", {});
  } else if (kind == "regex") {
    same("stage.regex", {{"expression", "expression"}, {"source", "source"}});
  } else if (kind == "json") {
    same("stage.json", {{"expressions", "expressions"},
                        {"source", "source"},
                        {"drop_malformed", "drop_malformed"}});
  } else if (kind == "logfmt") {
    same("stage.logfmt", {{"mapping", "mapping"}, {"source", "source"}});
  } else if (kind == "replace") {
    same("stage.replace",
         {{"expression", "expression"}, {"source", "source"}, {"replace", "replace"}});
  } else if (kind == "template") {
    // Alloy requires `template`; promtail read an absent one as empty.
    same("stage.template", {{"source", "source"}, {"template", "template"}}, {},
         o.contains("template") ? 0 : 1);
    if (!o.contains("template")) expect_attr(got, "template", value(""), where);
  } else if (kind == "pack") {
    // labels is required by Alloy: an absent list is promtail's empty one.
    same("stage.pack", {{"labels", "labels"}, {"ingest_timestamp", "ingest_timestamp"}}, {},
         o.contains("labels") ? 0 : 1);
    if (!o.contains("labels")) expect_attr(got, "labels", value(boost::json::array()), where);
  } else if (kind == "timestamp") {
    same("stage.timestamp", {{"source", "source"},
                             {"format", "format"},
                             {"fallback_formats", "fallback_formats"},
                             {"location", "location"},
                             {"action_on_failure", "action_on_failure"}});
  } else if (kind == "output") {
    same("stage.output", {{"source", "source"}});
  } else if (kind == "labeldrop" || kind == "labelallow") {
    EXPECT_EQ(got.name, kind == "labeldrop" ? "stage.label_drop" : "stage.label_keep") << where;
    ASSERT_EQ(got.attributes.size(), 1U) << where;
    expect_attr(got, "values", body, where);
  } else if (kind == "labels" || kind == "static_labels" || kind == "structured_metadata") {
    EXPECT_EQ(got.name, "stage." + kind) << where;
    ASSERT_EQ(got.attributes.size(), 1U) << where;
    expect_attr(got, "values", body, where);
  } else if (kind == "limit") {
    // drop is always written: promtail's default false.
    same("stage.limit",
         {{"rate", "rate"},
          {"burst", "burst"},
          {"drop", "drop"},
          {"by_label_name", "by_label_name"},
          {"max_distinct_labels", "max_distinct_labels"}},
         {}, o.contains("drop") ? 0 : 1);
    if (!o.contains("drop")) expect_attr(got, "drop", value(false), where);
  } else if (kind == "multiline") {
    same("stage.multiline", {{"firstline", "firstline"},
                             {"max_wait_time", "max_wait_time"},
                             {"max_lines", "max_lines"}});
  } else if (kind == "tenant") {
    same("stage.tenant", {{"label", "label"}, {"source", "source"}, {"value", "value"}});
  } else if (kind == "drop") {
    // A list of sources is joined with commas; longer_than is a size in bytes.
    same("stage.drop",
         {{"separator", "separator"},
          {"expression", "expression"},
          {"value", "value"},
          {"older_than", "older_than"},
          {"drop_counter_reason", "drop_counter_reason"}},
         {"source", "longer_than"},
         (o.contains("source") ? 1 : 0) + (o.contains("longer_than") ? 1 : 0));
    if (const value* src = o.if_contains("source")) {
      std::string joined;
      if (src->is_array()) {
        for (const auto& s : src->get_array()) joined += (joined.empty() ? "" : ",") + text(s);
      } else {
        joined = text(*src);
      }
      expect_attr(got, "source", value(joined), where);
    }
    if (const value* l = o.if_contains("longer_than")) {
      expect_attr(got, "longer_than", value(bytes_text(size_bytes(text(*l)))), where);
    }
  } else if (kind == "sampling") {
    same("stage.sampling", {{"rate", "rate"}, {"drop_counter_reason", "drop_counter_reason"}});
  } else if (kind == "match") {
    same("stage.match",
         {{"selector", "selector"},
          {"pipeline_name", "pipeline_name"},
          {"action", "action"},
          {"drop_counter_reason", "drop_counter_reason"}},
         {"stages"});
    expect_stages(o.if_contains("stages"), got.blocks, where + ".match", n);
  } else if (kind == "metrics") {
    EXPECT_EQ(got.name, "stage.metrics") << where;
    EXPECT_TRUE(got.attributes.empty()) << where;
    // One block per metric, in bytewise name order.
    std::vector<std::string> names;
    for (const auto& kv : o) names.emplace_back(kv.key());
    std::sort(names.begin(), names.end());
    ASSERT_EQ(got.blocks.size(), names.size()) << where;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string at = where + "." + names[i];
      const object& m = o.at(names[i]).get_object();
      const check::Block& b = got.blocks[i];
      std::string type = text(m.at("type"));
      std::transform(type.begin(), type.end(), type.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      EXPECT_EQ(b.name, "metric." + type) << at;
      expect_attr(b, "name", value(names[i]), at);
      for (const char* k : {"description", "source", "max_idle_duration"}) {
        if (const value* v = m.if_contains(k)) expect_attr(b, k, *v, at);
      }
      // promtail's prefix when none is given (Alloy's own default differs).
      const std::string prefix = m.contains("prefix") ? text(m.at("prefix")) : "";
      expect_attr(b, "prefix", value(prefix.empty() ? "promtail_custom_" : prefix), at);
      const object config = m.contains("config") ? m.at("config").get_object() : object();
      std::size_t attributes = 2 + (m.contains("description") ? 1 : 0) +
                               (m.contains("source") ? 1 : 0) +
                               (m.contains("max_idle_duration") ? 1 : 0);
      if (const value* v = config.if_contains("value")) {
        expect_attr(b, "value", *v, at);
        ++attributes;
      }
      std::string action = config.contains("action") ? text(config.at("action")) : "";
      std::transform(action.begin(), action.end(), action.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (type == "counter" || type == "gauge") {
        expect_attr(b, "action", value(action), at);
        ++attributes;
      }
      if (type == "counter") {
        for (const char* k : {"match_all", "count_entry_bytes"}) {
          if (const value* v = config.if_contains(k)) {
            expect_attr(b, k, *v, at);
            ++attributes;
          }
        }
      }
      if (type == "histogram") {
        // The client library's default buckets, which promtail used.
        const value* buckets = config.if_contains("buckets");
        const bool given = buckets != nullptr && !buckets->get_array().empty();
        expect_attr(b, "buckets",
                    given ? *buckets
                          : boost::json::parse("[0.005,0.01,0.025,0.05,0.1,0.25,0.5,1,2.5,5,10]"),
                    at);
        ++attributes;
      }
      EXPECT_EQ(b.attributes.size(), attributes) << at;
    }
  } else {
    ADD_FAILURE() << where << ": stage " << kind << " has no translation, yet a block exists";
  }
}

// A static pipeline_stages list (null: none) against stage blocks, one to one, empty
// elements being no stage.
void expect_stages(const value* list, const std::vector<check::Block>& got,
                   const std::string& where, Counts& n) {
  std::vector<const object*> stages;
  if (list != nullptr) {
    for (const auto& s : list->get_array()) {
      if (!s.get_object().empty()) stages.push_back(&s.get_object());
    }
  }
  ASSERT_EQ(got.size(), stages.size()) << where;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    ASSERT_EQ(stages[i]->size(), 1U) << where;
    const auto& [kind, body] = *stages[i]->begin();
    expect_stage(std::string(kind), body, got[i], where + "[" + std::to_string(i) + "]", n);
  }
}

// One static client against its loki.write.
void expect_client(const object& client, const check::Block& w, const std::string& where) {
  if (const value* el = client.if_contains("external_labels");
      el != nullptr && !el->get_object().empty()) {
    expect_attr(w, "external_labels", *el, where);
    EXPECT_EQ(w.attributes.size(), 1U) << where;
  } else {
    EXPECT_TRUE(w.attributes.empty()) << where;
  }
  const auto endpoints = w.children("endpoint");
  ASSERT_EQ(endpoints.size(), 1U) << where;
  const check::Block& e = *endpoints[0];
  const object empty;
  const value* bo = client.if_contains("backoff_config");
  const object& backoff = bo != nullptr ? bo->get_object() : empty;
  expect_fields(
      client, e,
      {{"url", "url"},
       {"tenant_id", "tenant_id"},
       {"batchwait", "batch_wait"},
       {"timeout", "remote_timeout"},
       {"proxy_url", "proxy_url"},
       {"bearer_token", "bearer_token"},
       {"bearer_token_file", "bearer_token_file"}},
      where + ".endpoint",
      {"batchsize", "backoff_config", "basic_auth", "oauth2", "tls_config", "external_labels"},
      (client.contains("batchsize") ? 1 : 0) + backoff.size());
  if (const value* bs = client.if_contains("batchsize")) {
    expect_attr(e, "batch_size",
                value(bytes_text(static_cast<std::uint64_t>(bs->to_number<double>()))), where);
  }
  for (const auto& [from, to] : {std::pair{"min_period", "min_backoff_period"},
                                 std::pair{"max_period", "max_backoff_period"},
                                 std::pair{"max_retries", "max_backoff_retries"}}) {
    if (const value* v = backoff.if_contains(from)) expect_attr(e, to, *v, where + ".backoff");
  }
  test::expect_client_blocks(client, e, {"basic_auth", "oauth2", "tls_config"},
                             where + ".endpoint");
  EXPECT_EQ(e.blocks.size(), (client.contains("basic_auth") ? 1U : 0U) +
                                 (client.contains("oauth2") ? 1U : 0U) +
                                 (client.contains("tls_config") ? 1U : 0U))
      << where;
}

std::vector<std::string> refs(const check::Block& b, std::string_view attribute) {
  const check::Attribute* a = b.attribute(attribute);
  EXPECT_NE(a, nullptr) << b.name << " " << attribute;
  return a != nullptr ? test::references(a->value) : std::vector<std::string>();
}

bool reported(const AlloyConfig& c, ProblemClass cls, std::string_view kind, const std::string& ns,
              const std::string& name) {
  return std::any_of(c.problems.begin(), c.problems.end(), [&](const TranslationProblem& p) {
    return p.cls == cls && p.kind == kind && p.ns == ns && p.name == name;
  });
}

void expect_equivalent(const value& tree, const AlloyConfig& c, const std::string& ns,
                       const std::string& name, Counts& n) {
  const test::Graph g(test::written(c.files, ns, name), ns, name);
  const object& logs = tree.at("logs").get_object();
  const std::string positions = logs.contains("positions_directory")
                                    ? text(logs.at("positions_directory"))
                                    : "/var/lib/grafana-agent/data";
  // Clients: every loki.write, in file order, is the next client of the next instance.
  const auto writes = g.all("loki.write");
  std::size_t next_write = 0;
  std::size_t pipelines = 0;
  const value* configs = logs.if_contains("configs");
  for (const auto& iv : configs != nullptr ? configs->get_array() : boost::json::array()) {
    const object& instance = iv.get_object();
    const std::string iname = text(instance.at("name"));
    const auto slash = iname.find('/');
    SCOPED_TRACE("LogsInstance " + iname);
    std::vector<std::string> receivers;
    const value* clients = instance.if_contains("clients");
    const std::size_t count = clients != nullptr ? clients->get_array().size() : 0;
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_LT(next_write, writes.size()) << "client " << i << " has no loki.write";
      const check::Block& w = *writes[next_write++];
      expect_client(clients->get_array()[i].get_object(), w, "client " + std::to_string(i));
      receivers.push_back("loki.write." + *w.label + ".receiver");
      ++n.clients;
    }
    if (count == 0) {
      // Logs are read and discarded, as in static mode: a warning says so.
      EXPECT_TRUE(reported(c, ProblemClass::c, "LogsInstance", iname.substr(0, slash),
                           iname.substr(slash + 1)))
          << test::problems_text(c.problems);
    }
    const value* jobs = instance.if_contains("scrape_configs");
    for (const auto& jv : jobs != nullptr ? jobs->get_array() : boost::json::array()) {
      const object& job = jv.get_object();
      const std::string job_name = text(job.at("job_name"));
      SCOPED_TRACE(job_name);
      const std::string label =
          ident("logs", job_name, std::string(iname).append("/").append(job_name));
      const check::Block* relabel = g.component("discovery.relabel", label);
      if (relabel == nullptr) {
        // Skipped: a class-A record on its PodLogs (by the generated job name) or on the
        // LogsInstance of an additional entry.
        const bool pod_logs = job_name.rfind("podLogs/", 0) == 0;
        const std::string rest = job_name.substr(pod_logs ? 8 : 0);
        const auto s = rest.find('/');
        EXPECT_TRUE(pod_logs ? reported(c, ProblemClass::a, "PodLogs", rest.substr(0, s),
                                        rest.substr(s + 1))
                             : reported(c, ProblemClass::a, "LogsInstance", iname.substr(0, slash),
                                        iname.substr(slash + 1)))
            << "no pipeline and no class-A record\n"
            << test::problems_text(c.problems);
        ++n.skipped;
        continue;
      }
      ++n.jobs;
      ++pipelines;
      // discovery.relabel: the targets, then exactly the static rules (promtail adds no
      // labels before relabeling, so there is no prelude).
      EXPECT_EQ(relabel->attributes.size(), 1U);
      test::expect_same_targets(job, relabel->attribute("targets")->value, g, true, "targets");
      const auto rules = relabel->children("rule");
      EXPECT_EQ(rules.size(), relabel->blocks.size());
      test::expect_same_rules(job.if_contains("relabel_configs"), rules, job_name);
      n.rules += rules.size();

      const check::Block* match = g.component("local.file_match", label);
      ASSERT_NE(match, nullptr);
      EXPECT_EQ(refs(*match, "path_targets"),
                std::vector<std::string>{"discovery.relabel." + label + ".output"});
      const value* tc = instance.if_contains("target_config");
      const value* sync = tc != nullptr ? tc->get_object().if_contains("sync_period") : nullptr;
      EXPECT_EQ(match->attributes.size(), sync != nullptr ? 2U : 1U);
      if (sync != nullptr) expect_attr(*match, "sync_period", *sync, "local.file_match");

      const check::Block* source = g.component("loki.source.file", label);
      ASSERT_NE(source, nullptr);
      EXPECT_EQ(refs(*source, "targets"),
                std::vector<std::string>{"local.file_match." + label + ".targets"});
      EXPECT_EQ(refs(*source, "forward_to"),
                std::vector<std::string>{"loki.process." + label + ".receiver"});
      // The static agent's promtail positions of this instance.
      expect_attr(*source, "legacy_positions_file",
                  value(std::string(positions).append("/").append(iname).append(".yml")),
                  "loki.source.file");
      EXPECT_EQ(source->attributes.size(), 3U);

      const check::Block* process = g.component("loki.process", label);
      ASSERT_NE(process, nullptr);
      EXPECT_EQ(refs(*process, "forward_to"), receivers);
      EXPECT_EQ(process->attributes.size(), 1U);
      expect_stages(job.if_contains("pipeline_stages"), process->blocks, "pipeline_stages", n);
    }
  }
  EXPECT_EQ(next_write, writes.size()) << "loki.write components without a static client";
  EXPECT_EQ(g.all("loki.source.file").size(), pipelines) << "pipelines without a static job";
}

// Translates one root's static logs tree and compares. A root that fails as a whole must
// say why (class B naming a field); the members named by those records are then removed
// from the static tree so that the rest of the root is still compared.
void compare_root(const test::Root& r, const agent::Options& options, const std::string& what,
                  Counts& n) {
  if (r.hierarchy.logs.empty()) return;
  auto tree = test::static_tree(r, agent::ConfigFile::logs, options);
  if (!tree) return;  // the static backend failed to render (reported there)
  SCOPED_TRACE(what + " " + r.ns() + "/" + r.name());
  const LogsRoot root{r.ns(), r.name(), options.compat == agent::Compat::fixed,
                      test::agent_clients(r.hierarchy)};
  AlloyConfig c = translate_logs(*tree, root);
  ++n.roots;
  if (translation_failed(c.problems)) {
    ++n.failed;
    EXPECT_TRUE(c.files.empty());
    // Nothing of it is applied; every record names its field.
    bool stripped = false;
    for (const auto& p : c.problems) {
      if (p.cls != ProblemClass::b) continue;
      EXPECT_FALSE(p.field.empty()) << p.message;
      EXPECT_EQ(p.message.rfind(p.field, 0), 0U) << p.message;
      // An additional entry Alloy cannot express: compare the root without it.
      const std::string prefix = "spec.additionalScrapeConfigs[";
      if (p.kind != "LogsInstance" || p.field.rfind(prefix, 0) != 0) continue;
      const std::size_t index = std::stoul(p.field.substr(prefix.size()));
      for (auto& iv : tree->at("logs").at("configs").get_array()) {
        if (text(iv.at("name")) != p.ns + "/" + p.name) continue;
        auto& jobs = iv.get_object().at("scrape_configs").get_array();
        // Additional entries follow the PodLogs jobs.
        std::size_t generated = 0;
        while (generated < jobs.size() &&
               text(jobs[generated].at("job_name")).rfind("podLogs/", 0) == 0) {
          ++generated;
        }
        if (generated + index < jobs.size()) {
          jobs.erase(jobs.begin() + static_cast<std::ptrdiff_t>(generated + index));
          stripped = true;
        }
      }
    }
    if (!stripped) return;
    c = translate_logs(*tree, root);
    if (translation_failed(c.problems)) return;
  }
  expect_equivalent(*tree, c, r.ns(), r.name(), n);
}

// The clients, jobs and stages of the logs configurations the static backend is tested
// with, written again here only where the golden inputs lack them: every client setting
// that the static agent accepts, every stage of the custom resource, the stages only an
// additional scrape config can hold, static targets, a pod selector, hostile strings.
constexpr std::string_view kEveryLogsSetting = R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: monitoring}
spec:
  logs:
    instanceSelector: {}
    clients:
      - url: http://loki-inherited/push
        bearerTokenFile: /var/run/secrets/loki-token
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: main, namespace: monitoring}
spec:
  podLogsSelector: {}
  targetConfig: {syncPeriod: 30s}
  additionalScrapeConfigs: {name: extra-logs, key: scrape.yaml}
  clients:
    - url: https://loki-a/loki/api/v1/push
      tenantId: "team \"a\" ${TENANT} ünï"
      batchWait: 2s
      batchSize: 524288
      timeout: 15s
      proxyUrl: http://proxy:3128
      bearerToken: inline-token
      backoffConfig: {minPeriod: 1s, maxPeriod: 2m, maxRetries: 3}
      externalLabels: {team: "a\\b\nc", dollar: "$1"}
      tlsConfig:
        ca: {secret: {name: loki-tls, key: ca.crt}}
        cert: {secret: {name: loki-tls, key: tls.crt}}
        keySecret: {name: loki-tls, key: tls.key}
        serverName: loki.example
        insecureSkipVerify: false
    - url: http://loki-b
      basicAuth:
        username: {name: loki-basic, key: username}
        password: {name: loki-basic, key: password}
      tlsConfig: {caFile: /etc/ca.crt, certFile: /etc/tls.crt, keyFile: /etc/tls.key}
    - url: http://loki-c
      oauth2:
        clientId: {secret: {name: oauth, key: id}}
        clientSecret: {name: oauth, key: secret}
        tokenUrl: https://auth/token
        scopes: [logs.write]
        endpointParams: {audience: loki}
      tlsConfig: {}
    - url: http://loki-d
      bearerTokenFile: /var/run/token
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: inherits, namespace: monitoring}
spec:
  podLogsSelector: {matchLabels: {inherit: "yes"}}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: PodLogs
metadata: {name: inherited, namespace: monitoring, labels: {inherit: "yes"}}
spec:
  selector: {matchLabels: {app: other}}
  pipelineStages:
    - docker: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: PodLogs
metadata: {name: every, namespace: monitoring}
spec:
  selector: {matchLabels: {app: web}}
  relabelings:
    - sourceLabels: [__meta_kubernetes_pod_node_name]
      targetLabel: node
      action: Replace
    - sourceLabels: [__meta_kubernetes_pod_label_version]
      regex: '(\d+)\.(\d+)'
      replacement: "v$1.${2} \"quoted\" \\ tab\there ünïcödé"
      targetLabel: version
  pipelineStages:
    - cri: {}
    - docker: {}
    - regex: {expression: '^(?P<level>\w+) (?P<msg>.*)$', source: line}
    - json: {expressions: {level: lvl, msg: ""}, source: body}
    - replace: {expression: 'password=(\S+)', replace: "****", source: msg}
    - template: {source: new, template: "{{ .Value | ToUpper }}"}
    - pack: {labels: [pod, container], ingestTimestamp: true}
    - pack: {}
    - timestamp: {source: ts, format: RFC3339, fallbackFormats: [UnixMs], location: UTC, actionOnFailure: skip}
    - output: {source: msg}
    - labelDrop: [a, b]
    - labelAllow: [c]
    - labels: {level: lvl, app: ""}
    - limit: {rate: 10, burst: 20, drop: true}
    - limit: {rate: 1, burst: 1}
    - metrics:
        lines_total: {type: counter, description: lines, source: line, maxIdleDuration: 24h, matchAll: true, countEntryBytes: true, action: add}
        queue: {type: GAUGE, value: queue, action: Set, prefix: my_}
        latency: {type: Histogram, source: rt, buckets: ["0.001", "0.5", "1e3"]}
        sizes: {type: histogram, source: size}
    - multiline: {firstLine: '^\d{4}', maxWaitTime: 3s, maxLines: 128}
    - tenant: {value: team-a}
    - tenant: {label: org}
    - drop: {source: level, value: debug, dropCounterReason: noise}
    - drop: {olderThan: 24h, longerThan: 8KB}
    - drop: {expression: '.*debug.*', separator: ";"}
    - match:
        selector: '{app="web"}'
        pipelineName: web
        action: keep
        dropCounterReason: not_web
        stages: |
          - json:
              expressions:
                level: lvl
          - labels:
              level: ""
          - match:
              selector: '{level="debug"}'
              action: drop
    - match:
        selector: '{app="api"}'
        stages: |
          - output:
              source: msg
    - {}
---
apiVersion: v1
kind: Secret
metadata: {name: extra-logs, namespace: monitoring}
stringData:
  scrape.yaml: |
    - job_name: files
      static_configs:
        - targets: [localhost]
          labels: {__path__: /var/log/*.log, job: "var\"log"}
        - targets: [a, b]
          labels: {__path__: /srv/*.log}
        - labels: {unused: "true"}
      relabel_configs:
        - {source_labels: [__path__], regex: '/var/(.*)', target_label: kind, action: Replace}
        - {action: labeldrop, regex: unused}
      pipeline_stages:
        - cri: {max_partial_lines: 200, max_partial_line_size: 64kib, max_partial_line_size_truncate: true}
        - cri: {max_partial_lines: 0}
        - logfmt: {mapping: {level: lvl, msg: ""}, source: line}
        - static_labels: {env: prod, "team_x": "x y"}
        - structured_metadata: {trace_id: "", span: sid}
        - sampling: {rate: 0.25, drop_counter_reason: sampled}
        - decolorize: {}
        - drop: {source: [level, app], separator: "|", value: "debug|web", longer_than: 2 MB}
        - json: {expressions: {a: b}, drop_malformed: true}
        - limit: {rate: 5, burst: 5, drop: true, by_label_name: app, max_distinct_labels: 10}
        - multiline: {firstline: '^\S'}
    - job_name: pods
      kubernetes_sd_configs:
        - role: pod
          namespaces: {names: [apps, web]}
          selectors: [{role: pod, label: "app=web", field: "status.phase=Running"}]
        - role: pod
        - role: node
          attach_metadata: {node: true}
      relabel_configs:
        - {source_labels: [__meta_kubernetes_pod_name], target_label: pod}
    - job_name: both
      kubernetes_sd_configs: [{role: pod, namespaces: {names: [apps]}}]
      static_configs: [{targets: [localhost], labels: {__path__: /tmp/*.log}}]
---
apiVersion: v1
kind: Secret
metadata: {name: loki-tls, namespace: monitoring}
stringData: {ca.crt: CA, tls.crt: CERT, tls.key: KEY}
---
apiVersion: v1
kind: Secret
metadata: {name: loki-basic, namespace: monitoring}
stringData: {username: "al\"ice", password: "s3cret: yes\n\\"}
---
apiVersion: v1
kind: Secret
metadata: {name: oauth, namespace: monitoring}
stringData: {id: client-1, secret: shh}
)";

TEST(LogsEquivalence, EveryStaticInputHasTheSamePipelinesInAlloy) {
  auto inputs = test::static_inputs();
  inputs.emplace_back("every logs setting", std::string(kEveryLogsSetting));
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
  EXPECT_GE(n.roots, 30U);
  EXPECT_GE(n.clients, 45U);
  EXPECT_GE(n.jobs, 24U);
  EXPECT_GE(n.rules, 170U);
  EXPECT_GE(n.stages, 90U);
  // Every stage of the stage table was compared at least once.
  EXPECT_EQ(n.stage_kinds.size(), 23U) << [&] {
    std::string s;
    for (const auto& k : n.stage_kinds) s += k + " ";
    return s;
  }();
  std::printf(
      "compared %zu roots (%zu failing as a whole, reported), %zu clients, %zu jobs (%zu "
      "skipped, reported), %zu rules, %zu stages\n",
      n.roots, n.failed, n.clients, n.jobs, n.skipped, n.rules, n.stages);
}

}  // namespace
}  // namespace aop::alloy
