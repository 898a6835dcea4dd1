// Static and Alloy metrics configurations of the same custom resources are equivalent,
// checked by walking the parsed Alloy graph (not by comparing text): for every scrape job
// of every static golden input, of deploy/examples and of the hostile-strings input below,
// in both compat modes, the Alloy pipeline that scrapes it has the same targets discovery
// (every discovery setting, its auth and TLS; inline targets), exactly the labels
// Prometheus sets before relabeling then the same relabel rules in order (the shard rules
// replaced by clustering), the same scrape settings with their auth and TLS, the same
// metric relabel rules, and sends to the remote write of its MetricsInstance, whose
// endpoints (URL, headers, timeout, auth, TLS, queue, metadata, write relabel rules),
// external labels (the replica label per replica group) and WAL settings are the static
// ones. A job with no pipeline must have been skipped with a class-A record naming it; a
// root that fails as a whole must have class-B records naming the field.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/alloy/duration.hpp"
#include "reconcile/alloy/labels.hpp"
#include "reconcile/alloy/metrics.hpp"
#include "tests/alloy/equivalence.hpp"
#include "tests/alloy/support.hpp"

namespace aop::alloy {
namespace {

using boost::json::object;
using boost::json::value;
using test::expect_same_value;
using test::text;

// The static relabel rules without the two shard rules the static backend appends to
// ServiceMonitor and PodMonitor jobs, and to Probe jobs under --agent-compat=fixed (Alloy
// clustering replaces them). `sharded` tells whether they were there.
std::vector<const object*> static_rules(const object& job, bool& sharded) {
  std::vector<const object*> out;
  if (const value* r = job.if_contains("relabel_configs")) {
    for (const auto& e : r->get_array()) out.push_back(&e.get_object());
  }
  const std::string name = text(job.at("job_name"));
  sharded = false;
  if ((name.rfind("serviceMonitor/", 0) == 0 || name.rfind("podMonitor/", 0) == 0 ||
       name.rfind("probe/", 0) == 0) &&
      out.size() >= 2 && out.back()->contains("regex") &&
      text(out.back()->at("regex")) == "$(SHARD)") {
    // hashmod of the address into __tmp_hash, then keep this shard's share.
    const object& hash = *out[out.size() - 2];
    EXPECT_EQ(text(hash.at("action")), "hashmod") << name;
    EXPECT_EQ(text(out.back()->at("action")), "keep") << name;
    out.resize(out.size() - 2);
    sharded = true;
  }
  return out;
}

std::uint64_t ms_of(const value& prometheus) {
  const auto ms = parse_prometheus_duration(text(prometheus));
  EXPECT_TRUE(ms.has_value()) << text(prometheus);
  return ms.value_or(0);
}

// Static mode set the prelude's values literally; Go's expansion turns `$$` into `$`.
std::string literal(const std::string& s) {
  std::string out;
  for (const char c : s) out += c == '$' ? std::string("$$") : std::string(1, c);
  return out;
}

bool label_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

// The labels Prometheus sets before a job's relabeling, where they are empty: job,
// interval, timeout, path, scheme; then the first value of each parameter, unconditionally.
std::vector<object> prelude(const object& job, std::uint64_t si, std::uint64_t st) {
  std::vector<object> out;
  const auto conditional = [&](const std::string& label, const std::string& v) {
    out.push_back(object{{"source_labels", boost::json::array{value(label)}},
                         {"regex", ""},
                         {"target_label", label},
                         {"replacement", literal(v)}});
  };
  conditional("job", text(job.at("job_name")));
  conditional("__scrape_interval__", prometheus_duration_text(si));
  conditional("__scrape_timeout__", prometheus_duration_text(st));
  conditional("__metrics_path__",
              job.contains("metrics_path") ? text(job.at("metrics_path")) : "/metrics");
  conditional("__scheme__", job.contains("scheme") ? text(job.at("scheme")) : "http");
  if (const value* params = job.if_contains("params")) {
    std::vector<std::string> keys;
    for (const auto& kv : params->get_object()) keys.emplace_back(kv.key());
    std::sort(keys.begin(), keys.end());
    for (const auto& k : keys) {
      const auto& list = params->get_object().at(k).get_array();
      if (!label_name("__param_" + k) || list.empty()) continue;
      // A number keeps the value the static agent read from its text.
      out.push_back(
          object{{"target_label", "__param_" + k},
                 {"replacement", list[0].is_string() ? value(literal(text(list[0]))) : list[0]}});
    }
  }
  return out;
}

struct Counts {
  std::size_t jobs = 0;
  std::size_t skipped = 0;
  std::size_t sharded = 0;
  std::size_t rules = 0;
  std::size_t endpoints = 0;
  std::size_t remote_writes = 0;
};

std::vector<std::string> refs(const check::Block& b, std::string_view attribute) {
  const check::Attribute* a = b.attribute(attribute);
  EXPECT_NE(a, nullptr) << b.name << " " << attribute;
  return a != nullptr ? test::references(a->value) : std::vector<std::string>();
}

// One MetricsInstance's remote write: its endpoints (else the GrafanaAgent's), the
// external labels with the replica label per replica group, the WAL settings.
void expect_remote_write(const object& ins, const object& global, const std::string& replica,
                         const check::Block& rw, Counts& n) {
  ASSERT_EQ(rw.name, "prometheus.remote_write");
  const value* own = ins.if_contains("remote_write");
  const value* list =
      own != nullptr && !own->get_array().empty() ? own : global.if_contains("remote_write");
  const auto endpoints = rw.children("endpoint");
  ASSERT_EQ(endpoints.size(), list != nullptr ? list->get_array().size() : 0U);
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    n.rules += test::expect_same_endpoint(list->get_array()[i].get_object(), *endpoints[i],
                                          "endpoint " + std::to_string(i));
    ++n.endpoints;
  }
  const value* el = global.if_contains("external_labels");
  const check::Attribute* labels = rw.attribute("external_labels");
  if (el == nullptr || el->get_object().empty()) {
    EXPECT_EQ(labels, nullptr);
  } else {
    ASSERT_NE(labels, nullptr);
    object want = el->get_object();
    if (want.contains(replica)) {
      // Each replica group sends its own replica label: "replica-" + sys.env(...).
      want.erase(replica);
      const auto& keys = labels->value.keys;
      const auto it = std::find(keys.begin(), keys.end(), replica);
      ASSERT_NE(it, keys.end());
      const check::Value& v = labels->value.items[static_cast<std::size_t>(it - keys.begin())];
      ASSERT_EQ(v.kind, check::Value::Kind::concat);
      ASSERT_EQ(v.items.size(), 2U);
      EXPECT_EQ(v.items[0].text, "replica-");
      EXPECT_EQ(v.items[1].text, "sys.env");
      ASSERT_EQ(v.items[1].items.size(), 1U);
      EXPECT_EQ(v.items[1].items[0].text, "REPLICA_GROUP");
      check::Value rest = labels->value;
      rest.keys.erase(rest.keys.begin() + (it - keys.begin()));
      rest.items.erase(rest.items.begin() + (it - keys.begin()));
      expect_same_value(want, rest, "external_labels");
    } else {
      expect_same_value(want, labels->value, "external_labels");
    }
  }
  // The WAL: the instance's settings, else the static agent's defaults (not Alloy's).
  const auto wal = rw.children("wal");
  ASSERT_EQ(wal.size(), 1U);
  for (const auto& [from, to, fallback] :
       {std::tuple{"wal_truncate_frequency", "truncate_frequency", "60m"},
        std::tuple{"min_wal_time", "min_keepalive_time", "5m"},
        std::tuple{"max_wal_time", "max_keepalive_time", "4h"}}) {
    const check::Attribute* a = wal[0]->attribute(to);
    ASSERT_NE(a, nullptr) << to;
    EXPECT_EQ(check::parse_go_duration(a->value.text),
              check::parse_go_duration(ins.contains(from) ? text(ins.at(from)) : fallback))
        << to;
  }
  ++n.remote_writes;
}

void expect_equivalent(const value& tree, const AlloyConfig& c, const std::string& ns,
                       const std::string& name, const std::string& replica, Counts& n) {
  const test::Graph g(test::written(c.files, ns, name), ns, name);
  const object& metrics = tree.at("metrics").get_object();
  const object empty;
  const value* gv = metrics.if_contains("global");
  const object& global = gv != nullptr ? gv->get_object() : empty;
  const std::uint64_t global_interval =
      global.contains("scrape_interval") ? ms_of(global.at("scrape_interval")) : 60000;
  const std::uint64_t global_timeout =
      global.contains("scrape_timeout") ? ms_of(global.at("scrape_timeout")) : 10000;
  const value* configs = metrics.if_contains("configs");
  if (configs == nullptr) return;
  std::size_t pipelines = 0;
  for (const auto& instance : configs->get_array()) {
    const object& ins = instance.get_object();
    const std::string iname = text(ins.at("name"));
    SCOPED_TRACE(iname);
    // Every instance has its remote write, used by its jobs or not.
    const std::string mi_label =
        ident("mi", iname.substr(0, iname.find('/')) + "_" + iname.substr(iname.find('/') + 1),
              "MetricsInstance/" + iname);
    const check::Block* rw = g.component("prometheus.remote_write", mi_label);
    ASSERT_NE(rw, nullptr) << mi_label;
    expect_remote_write(ins, global, replica, *rw, n);
    const value* jobs = ins.if_contains("scrape_configs");
    if (jobs == nullptr) continue;
    for (const auto& jv : jobs->get_array()) {
      const object& job = jv.get_object();
      const std::string job_name = text(job.at("job_name"));
      SCOPED_TRACE(job_name);
      // Two instances may hold jobs of the same name (a monitor both select): each has its
      // own pipeline, labelled by instance and job.
      const check::Block* found =
          g.component("prometheus.scrape",
                      ident("scrape", job_name, std::string(iname).append("/").append(job_name)));
      if (found == nullptr) {
        // Skipped: a class-A record on its member must say so (a ServiceMonitor,
        // PodMonitor or Probe named in the job name, else the MetricsInstance of an
        // additional scrape config).
        std::vector<std::string> parts;
        for (std::size_t start = 0;;) {
          const auto slash = job_name.find('/', start);
          parts.push_back(job_name.substr(start, slash - start));
          if (slash == std::string::npos) break;
          start = slash + 1;
        }
        const bool generated =
            parts.size() >= 3 &&
            (parts[0] == "serviceMonitor" || parts[0] == "podMonitor" || parts[0] == "probe");
        EXPECT_TRUE(std::any_of(c.problems.begin(), c.problems.end(),
                                [&](const auto& p) {
                                  return p.cls == ProblemClass::a &&
                                         (generated ? p.ns == parts[1] && p.name == parts[2]
                                                    : p.kind == "MetricsInstance");
                                }))
            << "no pipeline and no class-A record\n"
            << test::problems_text(c.problems);
        ++n.skipped;
        continue;
      }
      ++n.jobs;
      ++pipelines;
      const check::Block& scrape = *found;
      EXPECT_EQ(scrape.attribute("job_name")->value.text, job_name);

      // Scrape settings: the static agent's defaults applied (Alloy has no global
      // section), every other key one to one, clustering instead of shard rules.
      std::uint64_t si = global_interval;
      if (const value* v = job.if_contains("scrape_interval")) si = ms_of(*v);
      std::uint64_t st = std::min(global_timeout, si);
      if (const value* v = job.if_contains("scrape_timeout")) st = ms_of(*v);
      EXPECT_EQ(check::parse_go_duration(scrape.attribute("scrape_interval")->value.text),
                static_cast<double>(si) * 1e6);
      EXPECT_EQ(check::parse_go_duration(scrape.attribute("scrape_timeout")->value.text),
                static_cast<double>(st) * 1e6);
      test::expect_fields(job, scrape,
                          {{"job_name", "job_name"},
                           {"honor_labels", "honor_labels"},
                           {"honor_timestamps", "honor_timestamps"},
                           {"params", "params"},
                           {"metrics_path", "metrics_path"},
                           {"scheme", "scheme"},
                           {"sample_limit", "sample_limit"},
                           {"target_limit", "target_limit"},
                           {"label_limit", "label_limit"},
                           {"label_name_length_limit", "label_name_length_limit"},
                           {"label_value_length_limit", "label_value_length_limit"},
                           {"body_size_limit", "body_size_limit"},
                           {"bearer_token", "bearer_token"},
                           {"bearer_token_file", "bearer_token_file"},
                           {"proxy_url", "proxy_url"},
                           {"no_proxy", "no_proxy"},
                           {"proxy_from_environment", "proxy_from_environment"},
                           {"follow_redirects", "follow_redirects"},
                           {"enable_http2", "enable_http2"}},
                          "scrape",
                          {"scrape_interval", "scrape_timeout", "relabel_configs",
                           "metric_relabel_configs", "kubernetes_sd_configs", "static_configs",
                           "basic_auth", "authorization", "oauth2", "tls_config"},
                          4);  // targets, forward_to, scrape_interval, scrape_timeout
      test::expect_client_blocks(job, scrape,
                                 {"basic_auth", "authorization", "oauth2", "tls_config"}, "scrape");
      const auto clustering = scrape.children("clustering");
      ASSERT_EQ(clustering.size(), 1U);
      EXPECT_TRUE(clustering[0]->attribute("enabled")->value.boolean);

      // Targets: discovery.relabel with the prelude then the static rules, fed by the
      // shared discovery.kubernetes components and the inline targets.
      const auto tr = refs(scrape, "targets");
      ASSERT_EQ(tr.size(), 1U);
      const check::Block* relabel = g.at(tr[0]);
      ASSERT_NE(relabel, nullptr) << tr[0];
      ASSERT_EQ(relabel->name, "discovery.relabel");
      test::expect_same_targets(job, relabel->attribute("targets")->value, g, false, "targets");
      const auto rules = relabel->children("rule");
      bool sharded = false;
      const auto want = static_rules(job, sharded);
      n.sharded += sharded ? 1 : 0;
      const auto pre = prelude(job, si, st);
      ASSERT_EQ(rules.size(), pre.size() + want.size());
      for (std::size_t i = 0; i < pre.size(); ++i) {
        test::expect_same_rule(pre[i], *rules[i], "prelude " + std::to_string(i));
      }
      for (std::size_t i = 0; i < want.size(); ++i) {
        test::expect_same_rule(*want[i], *rules[pre.size() + i], "rule " + std::to_string(i));
      }
      n.rules += want.size();

      // Metric relabel rules, then the remote write of the instance.
      auto out = refs(scrape, "forward_to");
      ASSERT_FALSE(out.empty());
      const check::Block* next = g.at(out[0]);
      ASSERT_NE(next, nullptr);
      const value* mr = job.if_contains("metric_relabel_configs");
      if (mr != nullptr && !mr->get_array().empty()) {
        // First a rule that lets the scrape loop's own series (up, scrape_*) around the
        // user's rules, which Prometheus never applied to them; they reach the same remote
        // write through the job's second relabel component.
        ASSERT_EQ(next->name, "prometheus.relabel");
        ASSERT_EQ(out.size(), 2U);
        auto mrules = next->children("rule");
        ASSERT_FALSE(mrules.empty());
        EXPECT_EQ(mrules[0]->attribute("action")->value.text, "drop");
        mrules.erase(mrules.begin());
        test::expect_same_rules(mr, mrules, "metric");
        n.rules += mr->get_array().size();
        const check::Block* report = g.at(out[1]);
        ASSERT_NE(report, nullptr);
        ASSERT_EQ(report->children("rule").size(), 1U);
        EXPECT_EQ(report->children("rule")[0]->attribute("action")->value.text, "keep");
        EXPECT_EQ(refs(*report, "forward_to"), refs(*next, "forward_to"));
        out = refs(*next, "forward_to");
        ASSERT_EQ(out.size(), 1U);
        next = g.at(out[0]);
        ASSERT_NE(next, nullptr);
      } else {
        ASSERT_EQ(out.size(), 1U);
      }
      EXPECT_EQ(next, rw) << "the job sends to another instance's remote write";
    }
  }
  EXPECT_EQ(g.all("prometheus.scrape").size(), pipelines) << "pipelines without a static job";
  EXPECT_EQ(g.all("prometheus.remote_write").size(), configs->get_array().size());
}

// Hostile strings through the whole pipeline: quotes, backslashes, newlines, tabs, `$`
// references that are regex references and environment references, non-ASCII, control
// characters; plus scrape settings the golden inputs lack.
constexpr std::string_view kHostile = R"yaml(
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: agent, namespace: monitoring}
spec:
  metrics:
    shards: 2
    replicas: 2
    scrapeInterval: 1w
    externalLabels: {quote: "a\"b\\c\nd\te ünï ${VAR} $1 \u0001"}
    instanceSelector: {}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: m, namespace: monitoring}
spec:
  serviceMonitorSelector: {}
  probeSelector: {}
  additionalScrapeConfigs: {name: extra, key: scrape.yaml}
  remoteWrite:
    - url: "https://rw/push?q=%22x%22&r=$1"
      headers: {X-Note: "a \\ \"q\" $HOME ünï"}
      basicAuth:
        username: {name: rw, key: user}
        passwordFile: /var/run/pass
      writeRelabelConfigs:
        - {sourceLabels: [__name__], regex: "\\d+\\.\\d+", targetLabel: v, replacement: "${1}\t$2"}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web, namespace: monitoring}
spec:
  selector: {matchLabels: {app: web}}
  endpoints:
    - port: http
      path: "/metrics/$weird"
      scheme: https
      params: {"target": ["a$b", "c"], "bad-key": ["x"], "module": ["http_2xx"]}
      interval: 90s
      scrapeTimeout: 1m
      honorLabels: true
      bearerTokenFile: /var/run/token
      tlsConfig: {insecureSkipVerify: true, serverName: "w\"eb"}
      relabelings:
        - sourceLabels: [__meta_kubernetes_pod_label_app]
          regex: '(\d+)\.(\d+)'
          replacement: "v$1.${2} \"quoted\" \\ tab\there ünïcödé"
          targetLabel: version
      metricRelabelings:
        - {sourceLabels: [__name__], regex: "go_.*", action: Drop}
---
apiVersion: v1
kind: Secret
metadata: {name: rw, namespace: monitoring}
stringData: {user: "al\"ice\n"}
---
apiVersion: v1
kind: Secret
metadata: {name: extra, namespace: monitoring}
stringData:
  scrape.yaml: |
    - job_name: "hostile \"job\" ünï"
      metrics_path: /probe
      params: {module: [icmp]}
      label_name_length_limit: 100
      label_value_length_limit: 200
      body_size_limit: 10MB
      follow_redirects: false
      no_proxy: localhost
      proxy_url: http://proxy
      authorization: {type: Bearer, credentials: "tok\"en"}
      static_configs:
        - targets: ["a:1", "b:2"]
          labels: {env: "pr\nod", __address__: ignored}
      kubernetes_sd_configs:
        - role: endpoints
          api_server: https://kube
          namespaces: {names: [apps]}
          selectors: [{role: endpoints, label: "app=x"}]
          tls_config: {insecure_skip_verify: false, ca_file: /etc/ca}
          bearer_token_file: /var/run/sa
      relabel_configs:
        - {source_labels: [__address__], regex: "(.*)", target_label: __param_target}
    - job_name: oauth
      oauth2:
        client_id: id
        client_secret_file: /var/run/secret
        token_url: https://auth
        scopes: [a, b]
        endpoint_params: {audience: x}
        tls_config: {server_name: auth}
      static_configs: [{targets: ["c:3"]}]
)yaml";

TEST(MetricsEquivalence, EveryStaticInputHasTheSamePipelinesInAlloy) {
  auto inputs = test::static_inputs();
  inputs.emplace_back("hostile strings", std::string(kHostile));
  Counts n;
  std::size_t roots = 0;
  std::size_t failed = 0;
  for (const auto compat : {agent::Compat::upstream, agent::Compat::fixed}) {
    agent::Options options;
    options.compat = compat;
    const bool fixed = compat == agent::Compat::fixed;
    auto each = [&](const std::string& what, const std::string& yaml) {
      for (auto& r : test::roots(yaml, options)) {
        auto tree = test::static_tree(r, agent::ConfigFile::metrics, options);
        if (!tree) continue;
        const auto& ga = r.hierarchy.agent;
        SCOPED_TRACE(what + " " + r.ns() + "/" + r.name() + (fixed ? " fixed" : ""));
        const MetricsRoot root{r.ns(), r.name(),
                               ga.spec.metrics.replica_external_label_name.value_or("__replica__"),
                               fixed};
        const AlloyConfig c = translate_metrics(*tree, root);
        if (translation_failed(c.problems)) {
          // Nothing is applied, and the records say which field made it fail.
          ++failed;
          EXPECT_TRUE(c.files.empty());
          for (const auto& p : c.problems) {
            if (p.cls == ProblemClass::b) {
              EXPECT_EQ(p.message.rfind(p.field, 0), 0U) << p.message;
            }
          }
          continue;
        }
        ++roots;
        expect_equivalent(*tree, c, r.ns(), r.name(), root.replica_label, n);
      }
    };
    for (const auto& [what, yaml] : inputs) each(what, yaml);
  }
  // What was compared, so that a change that compares nothing fails.
  EXPECT_GE(roots, 50U);
  EXPECT_GE(n.jobs, 60U);
  EXPECT_GE(n.rules, 600U);
  EXPECT_GE(n.endpoints, 15U);
  EXPECT_GE(n.sharded, 45U);
  EXPECT_GE(n.remote_writes, 35U);
  std::printf(
      "compared %zu roots (%zu failing as a whole, reported), %zu jobs (%zu skipped, %zu with "
      "shard rules), %zu rules, %zu remote writes with %zu endpoints\n",
      roots, failed, n.jobs, n.skipped, n.sharded, n.rules, n.remote_writes, n.endpoints);
}

}  // namespace
}  // namespace aop::alloy
