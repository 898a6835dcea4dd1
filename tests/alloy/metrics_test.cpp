// The metrics translation: static metrics trees (rendered by the static backend's own
// renderer from custom resources, or written by hand as JSON) to Alloy files. Every output
// goes through the Alloy checker; the worked example of the backend specification must
// come out byte for byte as golden/worked_example/metrics (typed in from the
// specification, not generated).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/agent/config.hpp"
#include "reconcile/alloy/labels.hpp"
#include "reconcile/alloy/metrics.hpp"
#include "tests/alloy/support.hpp"

namespace aop::alloy {
namespace {

namespace fs = std::filesystem;
using boost::json::value;
using test::file;
using test::problems_text;
using test::read;

// The static metrics trees of every GrafanaAgent in a multi-document YAML cluster.
std::vector<std::pair<agent::GrafanaAgent, value>> static_trees(
    std::string_view yaml, const agent::Options& options = {}) {
  std::vector<std::pair<agent::GrafanaAgent, value>> out;
  for (auto& r : test::roots(yaml, options)) {
    auto tree = test::static_tree(r, agent::ConfigFile::metrics, options);
    if (tree) out.emplace_back(r.hierarchy.agent, std::move(*tree));
  }
  return out;
}

std::vector<check::SourceFile> written(const AlloyConfig& c, const std::string& ns,
                                       const std::string& name) {
  return test::written(c.files, ns, name);
}

// Translates, writes and checks; returns the written files.
std::vector<check::SourceFile> translate_checked(const value& tree, const MetricsRoot& root,
                                                 AlloyConfig* out = nullptr) {
  AlloyConfig c = translate_metrics(tree, root);
  auto files = written(c, root.ns, root.name);
  const auto v = check::check_config(files, root.ns, root.name);
  EXPECT_TRUE(v.empty()) << check::to_string(v);
  if (out != nullptr) *out = std::move(c);
  return files;
}

// ---- The worked example -------------------------------------------------------------------

TEST(MetricsTranslation, WorkedExampleIsReproducedByteForByte) {
  const auto trees = static_trees(read(test::worked_example() / "input.yaml"));
  ASSERT_EQ(trees.size(), 1U);
  AlloyConfig c;
  const auto files = translate_checked(trees[0].second, {"monitoring", "agent", "__replica__"}, &c);
  EXPECT_TRUE(c.problems.empty()) << problems_text(c.problems);
  const fs::path dir = fs::path(AOP_SOURCE_DIR) / "tests/alloy/golden/worked_example/metrics";
  const std::vector<std::string> keys = {"main.alloy", "mi_monitoring_primary_7f26355a.alloy",
                                         "discovery.alloy",
                                         "scrape_serviceMonitor_monitoring_web_0_c5aaffd2.alloy"};
  ASSERT_EQ(files.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(files[i].key, keys[i]);
    EXPECT_EQ(files[i].text, read(dir / keys[i])) << keys[i];
  }
  std::size_t secrets = 0;
  const auto v = test::check_packed(c.files, "monitoring", "agent", "agent-alloy-config", &secrets);
  EXPECT_TRUE(v.empty()) << check::to_string(v);
  EXPECT_EQ(secrets, 1U);
}

// Every static golden input of the static backend, translated and checked.
TEST(MetricsTranslation, EveryStaticGoldenInputPassesTheChecker) {
  const fs::path root = fs::path(AOP_SOURCE_DIR) / "tests/agent/golden";
  std::size_t translated = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    const auto input = e.path() / "input.yaml";
    if (!fs::exists(input)) continue;
    // The compat mode changes the static tree (and how its numbers read as text).
    const bool fixed = fs::exists(e.path() / "options.yaml") &&
                       read(e.path() / "options.yaml").find("compat: fixed") != std::string::npos;
    agent::Options options;
    options.compat = fixed ? agent::Compat::fixed : agent::Compat::upstream;
    for (const auto& [ga, tree] : static_trees(read(input), options)) {
      SCOPED_TRACE(e.path().filename().string() + " " + ga.metadata.ns + "/" + ga.metadata.name);
      MetricsRoot r{ga.metadata.ns, ga.metadata.name,
                    ga.spec.metrics.replica_external_label_name.value_or("__replica__"), fixed};
      AlloyConfig c = translate_metrics(tree, r);
      const auto files = written(c, ga.metadata.ns, ga.metadata.name);
      const auto v = check::check_config(files, ga.metadata.ns, ga.metadata.name);
      EXPECT_TRUE(v.empty()) << check::to_string(v) << problems_text(c.problems);
      if (!translation_failed(c.problems)) {
        EXPECT_FALSE(files.empty());
        ++translated;
      }
    }
  }
  EXPECT_GE(translated, 15U);
}

// ---- Hand-written static trees ----------------------------------------------------------------

value tree_of(std::string_view json) {
  return boost::json::parse(json);
}

MetricsRoot root_a() {
  return {"ns", "a", "__replica__"};
}

TEST(MetricsTranslation, ReplicaLabelGlobalRemoteWriteAndWalDefaults) {
  const auto files = translate_checked(tree_of(R"j({
    "server": {},
    "metrics": {"wal_directory": "/var/lib/grafana-agent/data", "global": {
      "external_labels": {"cluster": "ns/a", "__replica__": "replica-$(STATEFULSET_ORDINAL_NUMBER)",
                          "team.io/x": "y"},
      "remote_write": [{"url": "https://g", "remote_timeout": "1d", "headers": {"X-A": "b"},
                        "queue_config": {"capacity": 2500.0, "batch_send_deadline": "1m",
                                         "retry_on_rate_limit": true, "max_retries": 3.0},
                        "metadata_config": {"send": false, "send_interval": "1w"}}]
}
, "configs" : [ {"name" : "ns/one"} ]
}
})j"),
                                       root_a());
  ASSERT_EQ(files.size(), 2U);
  EXPECT_EQ(files[0].text, file_header("ns", "a") + "\nlogging {}\n");
  const std::string mi = ident("mi", "ns_one", "MetricsInstance/ns/one");
  ASSERT_EQ(files[1].key, mi + ".alloy");
  EXPECT_EQ(files[1].text, file_header("ns", "a") + "\n" + "prometheus.remote_write \"" + mi +
                               "\" {\n"
                               "  external_labels = {\n"
                               "    __replica__ = \"replica-\" + sys.env(\"REPLICA_GROUP\"),\n"
                               "    cluster = \"ns/a\",\n"
                               "    \"team.io/x\" = \"y\",\n"
                               "  }\n"
                               "  endpoint {\n"
                               "    url = \"https://g\"\n"
                               "    remote_timeout = \"24h\"\n"
                               "    headers = {\n"
                               "      \"X-A\" = \"b\",\n"
                               "    }\n"
                               "    queue_config {\n"
                               "      capacity = 2500\n"
                               "      batch_send_deadline = \"1m\"\n"
                               "      retry_on_http_429 = true\n"
                               "    }\n"
                               "    metadata_config {\n"
                               "      send = false\n"
                               "      send_interval = \"168h\"\n"
                               "    }\n"
                               "  }\n"
                               "  wal {\n"
                               "    truncate_frequency = \"60m\"\n"
                               "    min_keepalive_time = \"5m\"\n"
                               "    max_keepalive_time = \"4h\"\n"
                               "  }\n"
                               "}\n");
  AlloyConfig c;
  translate_checked(tree_of(R"j({"metrics": {"global": {"remote_write": [{"url": "u",
      "queue_config": {"max_retries": 3.0}}]}, "configs": [{"name": "ns/one"}]}})j"),
                    root_a(), &c);
  ASSERT_EQ(c.problems.size(), 1U);
  EXPECT_EQ(c.problems[0].cls, ProblemClass::c);
  EXPECT_EQ(c.problems[0].kind, "GrafanaAgent");
  EXPECT_EQ(c.problems[0].message,
            "spec.metrics.remoteWrite[0].queue_config.max_retries: has no Alloy argument (Alloy "
            "retries recoverable errors without limit)");
}

TEST(MetricsTranslation, InstanceRemoteWriteAuthAndTls) {
  const auto files = translate_checked(tree_of(R"j({"metrics": {"global": {
      "remote_write": [{"url": "https://global"}]},
    "configs": [{"name": "ns/one", "wal_truncate_frequency": "30m", "min_wal_time": "1m",
      "max_wal_time": "2h", "remote_write": [
        {"url": "https://a", "name": "a", "proxy_url": "http://proxy",
         "authorization": {"type": "Bearer", "credentials_file": "/var/lib/grafana-agent/secrets/t"},
         "tls_config": {"ca_file": "/ca", "cert_file": "/c", "key_file": "/k", "server_name": "s",
                        "insecure_skip_verify": true},
         "write_relabel_configs": [{"source_labels": ["__name__"], "regex": "go_.*", "action": "Drop"}]},
        {"url": "https://b", "oauth2": {"client_id": "id", "client_secret_file": "/s",
         "scopes": ["x"], "token_url": "https://t", "endpoint_params": {"a": "b"}}},
        {"url": "https://c", "sigv4": {"region": "eu", "access_key": "AK", "secret_key": "SK"}}]}]}})j"),
                                       root_a());
  const auto& text = files.at(1).text;
  EXPECT_EQ(text.find("https://global"), std::string::npos)
      << "own remote writes replace the global ones";
  for (
      const char* want :
      {"  endpoint {\n    url = \"https://a\"\n    name = \"a\"\n    proxy_url = \"http://proxy\"\n"
       "    authorization {\n      type = \"Bearer\"\n      credentials_file = "
       "\"/var/lib/grafana-agent/secrets/t\"\n    }\n"
       "    tls_config {\n      ca_file = \"/ca\"\n      cert_file = \"/c\"\n      key_file = "
       "\"/k\"\n"
       "      server_name = \"s\"\n      insecure_skip_verify = true\n    }\n"
       "    write_relabel_config {\n      source_labels = [\"__name__\"]\n      regex = \"go_.*\"\n"
       "      action = \"drop\"\n    }\n  }\n",
       "    oauth2 {\n      client_id = \"id\"\n      client_secret_file = \"/s\"\n      scopes = "
       "[\"x\"]\n"
       "      token_url = \"https://t\"\n      endpoint_params = {\n        a = \"b\",\n      }\n  "
       "  }\n",
       "    sigv4 {\n      region = \"eu\"\n      access_key = \"AK\"\n      secret_key = \"SK\"\n "
       "   }\n",
       "  wal {\n    truncate_frequency = \"30m\"\n    min_keepalive_time = \"1m\"\n    "
       "max_keepalive_time = \"2h\"\n  }\n"}) {
    EXPECT_NE(text.find(want), std::string::npos) << "missing:\n" << want << "\nin:\n" << text;
  }
}

TEST(MetricsTranslation, RootAndInstanceFailuresAreClassB) {
  const struct {
    const char* json;
    const char* kind;
    const char* message;
  } cases[] = {
      {R"j({"server": {"log_level": "verbose"}, "metrics": {"configs": []}})j", "GrafanaAgent",
       "spec.logLevel: is not one of the values Alloy accepts (the Alloy configuration was not "
       "applied)"},
      {R"j({"metrics": {"configs": [{"name": "ns/i", "min_wal_time": "4h"}]}})j", "MetricsInstance",
       "spec.minWALTime: must be less than spec.maxWALTime (Alloy requires min < max) (the Alloy "
       "configuration was not applied)"},
      {R"j({"metrics": {"configs": [{"name": "ns/i", "remote_write": [{"url": "u",
          "basic_auth": {"username": "x", "password_file": "/p"},
          "authorization": {"type": "Bearer", "credentials": "t"}}]}]}})j",
       "MetricsInstance",
       "spec.remoteWrite[0]: more than one authentication method is set (the Alloy configuration "
       "was not applied)"},
      {R"j({"metrics": {"configs": [{"name": "ns/i", "remote_write": [{"url": "u",
          "sigv4": {"access_key": "AK"}}]}]}})j",
       "MetricsInstance",
       "spec.remoteWrite[0].sigv4: access_key and secret_key must be set together (the Alloy "
       "configuration was not applied)"},
      {R"j({"metrics": {"configs": [{"name": "ns/i", "remote_write": [{"url": "u",
          "remote_timeout": "30 s"}]}]}})j",
       "MetricsInstance",
       "spec.remoteWrite[0].remote_timeout: not a Prometheus duration (the Alloy configuration "
       "was not applied)"},
      {R"j({"metrics": {"configs": [{"name": "ns/i", "remote_write": [{"url": "u",
          "write_relabel_configs": [{"action": "hashmod", "target_label": "x"}]}]}]}})j",
       "MetricsInstance",
       "spec.remoteWrite[0].write_relabel_configs[0]: action hashmod needs a non-zero modulus (the "
       "Alloy configuration was not applied)"},
      {R"j({"metrics": {"configs": [{"name": "ns/i", "scrape_configs": [{"job_name": "x",
          "consul_sd_configs": [{"server": "c"}]}]}]}})j",
       "MetricsInstance",
       "spec.additionalScrapeConfigs[0].consul_sd_configs: no Alloy translation (the Alloy "
       "configuration was not applied)"},
      {R"j({"metrics": {"configs": [{"name": "ns/i", "scrape_configs": [{"job_name": "x",
          "scrape_protocols": ["PrometheusProto"]}]}]}})j",
       "MetricsInstance",
       "spec.additionalScrapeConfigs[0].scrape_protocols: has no Alloy translation (the Alloy "
       "configuration was not applied)"},
  };
  for (const auto& c : cases) {
    const AlloyConfig out = translate_metrics(tree_of(c.json), root_a());
    EXPECT_TRUE(out.files.empty()) << c.json;
    EXPECT_TRUE(translation_failed(out.problems));
    const bool found =
        std::any_of(out.problems.begin(), out.problems.end(), [&](const TranslationProblem& p) {
          return p.cls == ProblemClass::b && p.kind == c.kind && p.message == c.message;
        });
    EXPECT_TRUE(found) << c.json << "\n" << problems_text(out.problems);
  }
}

TEST(MetricsTranslation, ApiServerConflictsBelongToTheRoot) {
  const AlloyConfig out = translate_metrics(tree_of(R"j({"metrics": {"configs": [{"name": "ns/i",
      "scrape_configs": [{"job_name": "serviceMonitor/ns/m/0", "kubernetes_sd_configs": [
        {"role": "endpoints", "basic_auth": {"username": "u", "password": "p"},
         "authorization": {"type": "Bearer", "credentials": "t"}}]}]}]}})j"),
                                            root_a());
  EXPECT_TRUE(out.files.empty());
  ASSERT_EQ(out.problems.size(), 1U) << problems_text(out.problems);
  EXPECT_EQ(out.problems[0].cls, ProblemClass::b);
  EXPECT_EQ(out.problems[0].kind, "GrafanaAgent");
  EXPECT_EQ(out.problems[0].field, "spec.apiServer");
  EXPECT_EQ(
      out.problems[0].message,
      "spec.apiServer: more than one authentication method is set (the Alloy configuration was "
      "not applied)");
}

// The fixed compat mode shards probes on their target; clustering replaces that too.
TEST(MetricsTranslation, ProbeShardRulesGiveWayToClustering) {
  const auto files = translate_checked(tree_of(R"j({"metrics": {
    "global": {"remote_write": [{"url": "https://g"}]},
    "configs": [{"name": "ns/one", "scrape_configs": [
      {"job_name": "probe/ns/p", "metrics_path": "/probe", "params": {"module": ["http"]},
       "static_configs": [{"targets": ["https://example.com"], "labels": {"namespace": "ns"}}],
       "relabel_configs": [
         {"source_labels": ["__address__"], "target_label": "__param_target"},
         {"target_label": "__address__", "replacement": "bb:9115"},
         {"source_labels": ["__param_target"], "target_label": "__tmp_hash", "modulus": 3.0, "action": "hashmod"},
         {"source_labels": ["__tmp_hash"], "regex": "$(SHARD)", "action": "keep"}]}]}]
}
})j"),
                                       root_a());
  bool probe_file = false;
  for (const auto& f : files) {
    EXPECT_EQ(f.text.find("__tmp_hash"), std::string::npos) << f.key << "\n" << f.text;
    EXPECT_EQ(f.text.find("SHARD"), std::string::npos) << f.key;
    probe_file = probe_file || f.text.find("bb:9115") != std::string::npos;
  }
  EXPECT_TRUE(probe_file) << "the probe's own rules are kept";
}

// A job with everything: prelude with params and `$`, interval/timeout defaults, shard rules
// removed, lower-cased actions, shared discovery, static targets, metric relabel split.
TEST(MetricsTranslation, ScrapeJobPipeline) {
  AlloyConfig c;
  const auto files = translate_checked(tree_of(R"j({"metrics": {
    "global": {"scrape_interval": "15s", "scrape_timeout": "20s",
               "remote_write": [{"url": "https://g"}]},
    "configs": [{"name": "ns/one", "scrape_configs": [
      {"job_name": "serviceMonitor/ns/web/0", "honor_labels": false, "honor_timestamps": true,
       "params": {"module": ["http_$2xx"], "bad-name": ["x"], "empty": []},
       "metrics_path": "/m", "scheme": "https", "sample_limit": 100.0,
       "bearer_token_file": "/t", "enable_http2": false,
       "kubernetes_sd_configs": [{"role": "endpoints", "namespaces": {"names": ["ns"]}}],
       "static_configs": [{"targets": ["a:1", "b:2"], "labels": {"env": "p", "__address__": "x"}},
                          {"labels": {"ignored": "no targets"}}],
       "relabel_configs": [
         {"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"},
         {"source_labels": ["__meta_x"], "regex": "(.*)", "action": "LabelMap", "replacement": "${1}"
},
         {"source_labels": ["__address__"], "target_label": "__tmp_hash", "modulus": 2.0, "action": "hashmod"},
         {"source_labels": ["__tmp_hash"], "regex": "$(SHARD)", "action": "keep"}],
       "metric_relabel_configs": [{"source_labels": ["__name__"], "regex": "cart_.*", "action": "Keep"}]
},
      {"job_name": "podMonitor/ns/web/0", "scrape_interval": "1w",
       "kubernetes_sd_configs": [{"role": "endpoints", "namespaces": {"names": ["ns"]}}]}]
},
     {"name": "ns/two", "scrape_configs": [
      {"job_name": "probe/ns/p", "scrape_interval": "5s",
       "kubernetes_sd_configs": [{"role": "endpoints", "namespaces": {"names": ["ns"]}}]}]}]
}
})j"),
                                       root_a(), &c);
  // sample_limit with metric relabeling is a documented difference.
  ASSERT_EQ(c.problems.size(), 1U) << problems_text(c.problems);
  EXPECT_EQ(c.problems[0].cls, ProblemClass::c);
  EXPECT_EQ(c.problems[0].kind, "ServiceMonitor");
  EXPECT_EQ(c.problems[0].field, "spec.endpoints[0]");

  // One shared discovery component for the three identical SD entries of two instances.
  const std::string sd =
      ident("sd", "endpoints_ns", R"j({"namespaces":{"names":["ns"]},"role":"endpoints"})j");
  const auto* d = file(files, "discovery.alloy");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->text,
            file_header("ns", "a") + "\ndiscovery.kubernetes \"" + sd +
                "\" {\n  role = \"endpoints\"\n  namespaces {\n    names = [\"ns\"]\n  }\n}\n");
  // Order: main, mi one, mi two, discovery, the three jobs in static order.
  const std::string mi1 = ident("mi", "ns_one", "MetricsInstance/ns/one");
  const std::string mi2 = ident("mi", "ns_two", "MetricsInstance/ns/two");
  const std::string sm =
      ident("scrape", "serviceMonitor/ns/web/0", "ns/one/serviceMonitor/ns/web/0");
  const std::string pm = ident("scrape", "podMonitor/ns/web/0", "ns/one/podMonitor/ns/web/0");
  const std::string pr = ident("scrape", "probe/ns/p", "ns/two/probe/ns/p");
  std::vector<std::string> keys;
  keys.reserve(files.size());
  for (const auto& f : files) keys.push_back(f.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"main.alloy", mi1 + ".alloy", mi2 + ".alloy",
                                            "discovery.alloy", sm + ".alloy", pm + ".alloy",
                                            pr + ".alloy"}));

  const std::string rw1 = "prometheus.remote_write." + mi1 + ".receiver";
  EXPECT_EQ(
      file(files, sm + ".alloy")->text,
      file_header("ns", "a") + "\n" + "discovery.relabel \"" + sm +
          "\" {\n"
          "  targets = array.concat(discovery.kubernetes." +
          sd +
          ".targets, [\n"
          "    {\n      __address__ = \"a:1\",\n      env = \"p\",\n    },\n"
          "    {\n      __address__ = \"b:2\",\n      env = \"p\",\n    },\n"
          "  ])\n"
          "  rule {\n    source_labels = [\"job\"]\n    regex = \"\"\n    target_label = \"job\"\n"
          "    replacement = \"serviceMonitor/ns/web/0\"\n  }\n"
          "  rule {\n    source_labels = [\"__scrape_interval__\"]\n    regex = \"\"\n"
          "    target_label = \"__scrape_interval__\"\n    replacement = \"15s\"\n  }\n"
          "  rule {\n    source_labels = [\"__scrape_timeout__\"]\n    regex = \"\"\n"
          "    target_label = \"__scrape_timeout__\"\n    replacement = \"15s\"\n  }\n"
          "  rule {\n    source_labels = [\"__metrics_path__\"]\n    regex = \"\"\n"
          "    target_label = \"__metrics_path__\"\n    replacement = \"/m\"\n  }\n"
          "  rule {\n    source_labels = [\"__scheme__\"]\n    regex = \"\"\n"
          "    target_label = \"__scheme__\"\n    replacement = \"https\"\n  }\n"
          "  rule {\n    target_label = \"__param_module\"\n    replacement = \"http_$$2xx\"\n  }\n"
          "  rule {\n    source_labels = [\"job\"]\n    target_label = "
          "\"__tmp_prometheus_job_name\"\n  }\n"
          "  rule {\n    source_labels = [\"__meta_x\"]\n    regex = \"(.*)\"\n    replacement = "
          "\"${1}\"\n"
          "    action = \"labelmap\"\n  }\n"
          "}\n"
          "\n"
          "prometheus.scrape \"" +
          sm +
          "\" {\n"
          "  targets = discovery.relabel." +
          sm +
          ".output\n"
          "  forward_to = [prometheus.relabel." +
          sm + ".receiver, prometheus.relabel." + sm +
          "_report.receiver]\n"
          "  job_name = \"serviceMonitor/ns/web/0\"\n"
          "  honor_labels = false\n"
          "  honor_timestamps = true\n"
          "  params = {\n    \"bad-name\" = [\"x\"],\n    empty = [],\n    module = "
          "[\"http_$2xx\"],\n  }\n"
          "  scrape_interval = \"15s\"\n"
          "  scrape_timeout = \"15s\"\n"
          "  metrics_path = \"/m\"\n"
          "  scheme = \"https\"\n"
          "  sample_limit = 100\n"
          "  bearer_token_file = \"/t\"\n"
          "  enable_http2 = false\n"
          "  clustering {\n    enabled = true\n  }\n"
          "}\n"
          "\n"
          "prometheus.relabel \"" +
          sm +
          "\" {\n"
          "  forward_to = [" +
          rw1 +
          "]\n"
          "  rule {\n    source_labels = [\"__name__\"]\n"
          "    regex = \"up|scrape_duration_seconds|scrape_samples_scraped|"
          "scrape_samples_post_metric_relabeling|scrape_series_added\"\n    action = \"drop\"\n  "
          "}\n"
          "  rule {\n    source_labels = [\"__name__\"]\n    regex = \"cart_.*\"\n    action = "
          "\"keep\"\n  }\n"
          "}\n"
          "\n"
          "prometheus.relabel \"" +
          sm +
          "_report\" {\n"
          "  forward_to = [" +
          rw1 +
          "]\n"
          "  rule {\n    source_labels = [\"__name__\"]\n"
          "    regex = \"up|scrape_duration_seconds|scrape_samples_scraped|"
          "scrape_samples_post_metric_relabeling|scrape_series_added\"\n    action = \"keep\"\n  "
          "}\n"
          "}\n");

  // 1w interval: Go text for Alloy, Prometheus text in the prelude; timeout = global 20s.
  const auto& pmt = file(files, pm + ".alloy")->text;
  EXPECT_NE(pmt.find("  scrape_interval = \"168h\"\n  scrape_timeout = \"20s\"\n"),
            std::string::npos)
      << pmt;
  EXPECT_NE(pmt.find("target_label = \"__scrape_interval__\"\n    replacement = \"1w\""),
            std::string::npos);
  // 5s interval caps the 20s global timeout.
  const auto& prt = file(files, pr + ".alloy")->text;
  EXPECT_NE(prt.find("  scrape_interval = \"5s\"\n  scrape_timeout = \"5s\"\n"), std::string::npos)
      << prt;
  EXPECT_NE(prt.find("forward_to = [prometheus.remote_write." + mi2 + ".receiver]"),
            std::string::npos);
}

TEST(MetricsTranslation, InvalidMembersAreSkippedOthersKept) {
  AlloyConfig c;
  const auto files = translate_checked(tree_of(R"j({"metrics": {"configs": [{"name": "ns/one",
    "scrape_configs": [
      {"job_name": "serviceMonitor/ns/a/0", "scrape_interval": "10s", "scrape_timeout": "30s"},
      {"job_name": "serviceMonitor/ns/b/1", "relabel_configs": [{"source_labels": ["a"], "action": "Replace"}]},
      {"job_name": "podMonitor/ns/c/0", "basic_auth": {"username": "u", "password": "p"}, "bearer_token": "t"},
      {"job_name": "probe/ns/d", "tls_config": {"cert_file": "/c"}},
      {"job_name": "ok"},
      {"job_name": "ok", "metrics_path": "/again"},
      {"job_name": "labeldrop", "relabel_configs": [{"source_labels": ["a"], "regex": "x", "action": "labeldrop"}]}
    ]}]}})j"),
                                       root_a(), &c);
  EXPECT_EQ(
      problems_text(c.problems),
      "A ServiceMonitor ns/a spec.endpoints[0].scrape_timeout: is greater than scrape_interval "
      "(skipped in the Alloy configuration)\n"
      "A ServiceMonitor ns/b spec.endpoints[1].relabel_configs[0]: action replace needs "
      "target_label (skipped in the Alloy configuration)\n"
      "A PodMonitor ns/c spec.podMetricsEndpoints[0]: more than one authentication method is "
      "set (skipped in the Alloy configuration)\n"
      "A Probe ns/d spec.tls_config: a client certificate needs both cert and key (skipped in "
      "the Alloy configuration)\n"
      "A MetricsInstance ns/one spec.additionalScrapeConfigs[1]: job_name \"ok\" is used by an "
      "earlier job of this instance (skipped in the Alloy configuration)\n"
      "A MetricsInstance ns/one spec.additionalScrapeConfigs[2].relabel_configs[0]: action "
      "labeldrop takes only regex (skipped in the Alloy configuration)\n");
  ASSERT_EQ(files.size(), 3U);  // main, mi, the first `ok` job
  EXPECT_EQ(files[2].key, ident("scrape", "ok", "ns/one/ok") + ".alloy");
  EXPECT_EQ(files[2].text.find("/again"), std::string::npos);
}

TEST(MetricsTranslation, EnvironmentReferencesAreReportedWithoutValues) {
  AlloyConfig c;
  translate_checked(tree_of(R"j({"metrics": {"configs": [{"name": "ns/one", "scrape_configs": [
      {"job_name": "x", "relabel_configs": [
        {"target_label": "a", "replacement": "${HOSTNAME}"},
        {"target_label": "b", "replacement": "$1 ${2} $$"},
        {"target_label": "c", "replacement": "$(POD_NAME)"
}]
}]
}]
}
})j"),
                    root_a(), &c);
  EXPECT_EQ(
      problems_text(c.problems),
      "C MetricsInstance ns/one spec.additionalScrapeConfigs[0].relabel_configs[0].replacement: "
      "contains an environment reference that static mode expanded (Alloy keeps the text "
      "literally)\n"
      "C MetricsInstance ns/one spec.additionalScrapeConfigs[0].relabel_configs[2].replacement: "
      "contains an environment reference that static mode expanded (Alloy keeps the text "
      "literally)\n");
}

TEST(MetricsTranslation, HostileStringsSurviveTheWriterAndChecker) {
  // Strings that would end a literal or a block if they were pasted into the text.
  const std::string hostile = "\"}\nevil \"x\" {\n\\d+\\.\\d+ \x01 \xFF ${1} ü";
  boost::json::object rule{{"source_labels", boost::json::array{hostile}},
                           {"regex", hostile},
                           {"target_label", "t"},
                           {"replacement", hostile}};
  boost::json::object job{{"job_name", hostile},
                          {"metrics_path", hostile},
                          {"relabel_configs", boost::json::array{rule}}};
  const value tree = {
      {"metrics",
       {{"global", {{"external_labels", {{hostile, hostile}}}}},
        {"configs",
         boost::json::array{{{"name", "ns/one"}, {"scrape_configs", boost::json::array{job}}}}}}}};
  AlloyConfig c;
  const auto files = translate_checked(tree, root_a(), &c);
  ASSERT_EQ(files.size(), 3U);
  std::vector<check::Violation> v;
  const auto parsed = check::parse_file(files[2], v);
  ASSERT_TRUE(v.empty()) << check::to_string(v);
  const auto& scrape = parsed.blocks.at(1);
  EXPECT_EQ(scrape.attribute("job_name")->value.text, hostile);
  EXPECT_EQ(scrape.attribute("metrics_path")->value.text, hostile);
  const auto rules = parsed.blocks.at(0).children("rule");
  ASSERT_EQ(rules.size(), 6U);
  EXPECT_EQ(rules[5]->attribute("regex")->value.text, hostile);
  EXPECT_EQ(rules[5]->attribute("replacement")->value.text, hostile);
  // The prelude writes every `$` as `$$` in constant replacements.
  std::string doubled;
  for (const char ch : hostile) doubled += ch == '$' ? std::string("$$") : std::string(1, ch);
  EXPECT_EQ(rules[0]->attribute("replacement")->value.text, doubled);
  EXPECT_EQ(rules[3]->attribute("replacement")->value.text, doubled);
  const auto mi = check::parse_file(files[1], v);
  ASSERT_TRUE(v.empty());
  const auto& labels = mi.blocks.at(0).attribute("external_labels")->value;
  ASSERT_EQ(labels.keys.size(), 1U);
  EXPECT_EQ(labels.keys[0], hostile);
  EXPECT_EQ(labels.items[0].text, hostile);
}

TEST(MetricsTranslation, Deterministic) {
  const fs::path input = fs::path(AOP_SOURCE_DIR) / "tests/agent/golden/sm-relabel-all/input.yaml";
  const auto trees = static_trees(read(input));
  ASSERT_FALSE(trees.empty());
  for (const auto& [ga, tree] : trees) {
    const MetricsRoot root{ga.metadata.ns, ga.metadata.name, "__replica__"};
    const auto a = written(translate_metrics(tree, root), root.ns, root.name);
    const auto b = written(translate_metrics(tree, root), root.ns, root.name);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].key, b[i].key);
      EXPECT_EQ(a[i].text, b[i].text);
    }
  }
}

}  // namespace
}  // namespace aop::alloy
