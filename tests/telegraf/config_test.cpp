// The generated telegraf.conf: golden files written by hand from telegraf's documented format, and
// hostile annotation content that must either be rejected or come back unchanged when
// the output is parsed with toml++.
#include "reconcile/telegraf/config.hpp"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "reconcile/telegraf/annotation.hpp"
#include "tests/telegraf/fixtures.hpp"

namespace aop::telegraf {
namespace {

using ::testing::HasSubstr;
using testing::read_golden;

std::string config_for(std::string_view app, std::string_view yaml, const TelegrafOptions& o = {}) {
  AnnotationParse p = parse_annotation(yaml);
  EXPECT_TRUE(p.ok()) << p.summary(100);
  return render_telegraf_config(app, p.endpoints, o);
}

TEST(ConfigGolden, ListShape) {
  EXPECT_EQ(config_for("argocd", R"(
- application_controller: "http://argocd-application-controller-metrics.argocd.svc:8082/metrics"
- repo_server: "http://argocd-repo-server-metrics.argocd.svc:8084/metrics"
)"),
            read_golden("list_shape.toml"));
}

TEST(ConfigGolden, MapShapeAndBucketName) {
  EXPECT_EQ(config_for("sasquatch-backend", R"(
kafka-exporter: http://kafka-exporter.sasquatch-backend:9308/metrics
api.v2: "https://api.sasquatch-backend.svc/metrics?format=prometheus"
)"),
            read_golden("map_shape.toml"));
}

TEST(ConfigGolden, PerEndpointOptions) {
  EXPECT_EQ(config_for("nublado", R"(
- hub:
    url: http://hub.nublado.svc:8081/hub/metrics
    interval: 30s
    metric_version: 1
    tags:
      tier: frontend
      component: hub
      team.name: SQuaRE
- controller: http://controller.nublado.svc:8080/metrics
- proxy: {url: "http://proxy.nublado.svc:8001/metrics", interval: 1m30s}
)"),
            read_golden("options_shape.toml"));
}

TEST(ConfigGolden, EveryOption) {
  TelegrafOptions o;
  o.cluster_name = "idfdev";
  o.interval = "60s";
  o.flush_interval = "30s";
  o.collection_jitter = "0s";
  o.metric_batch_size = 500;
  o.metric_buffer_limit = 5000;
  o.influxdb_url = "http://influxdb2.influxdb2.svc:8086";
  o.influxdb_org = "rubin";
  o.token_secret = SecretKeyRef{"telegraf", "influx", "token"};  // never in the config
  EXPECT_EQ(config_for("mobu", "mobu: http://mobu.mobu:8080/metrics\n", o),
            read_golden("custom_options.toml"));
}

TEST(ConfigGolden, GoldenFilesAreTheSpecLayout) {
  // The golden files themselves parse, with the spec's tables and values.
  auto t = toml::parse(read_golden("options_shape.toml"));
  EXPECT_EQ(t["agent"]["omit_hostname"].value<bool>(), true);
  EXPECT_EQ(t["inputs"]["prometheus"].as_array()->size(), 3u);
  EXPECT_EQ(t["inputs"]["prometheus"][0]["tags"]["team.name"].value<std::string>(), "SQuaRE");
  EXPECT_EQ(t["outputs"]["influxdb_v2"][0]["token"].value<std::string>(), "${INFLUX_TOKEN}");
}

TEST(Config, SameInputsSameBytes) {
  const std::string yaml = "- a: http://a/\n- b: {url: 'http://b/', tags: {y: '1', x: '2'}}\n";
  EXPECT_EQ(config_for("app", yaml), config_for("app", yaml));
  EXPECT_EQ(config_for("app", yaml),
            config_for("app", "- a: http://a/\n- b: {url: 'http://b/', tags: {x: '2', y: '1'}}\n"));
}

TEST(Config, BucketName) {
  EXPECT_EQ(bucket_name("sasquatch-backend-2"), "sasquatch_backend_2");
  EXPECT_EQ(bucket_name("argocd"), "argocd");
}

// --- hostile content ------------------------------------------------------------------

// The keys of a TOML table, to prove nothing was added.
std::set<std::string> keys(const toml::table& t) {
  std::set<std::string> out;
  for (const auto& [k, v] : t) out.insert(std::string(k.str()));
  return out;
}

// Parses a generated config and checks its whole structure: exactly the spec's
// tables and keys, one input per endpoint with exactly the expected tags.
void expect_exact_structure(const std::string& config, std::string_view application,
                            const std::vector<Endpoint>& endpoints, const TelegrafOptions& o) {
  toml::table t;
  try {
    t = toml::parse(config);
  } catch (const toml::parse_error& e) {
    FAIL() << "generated TOML does not parse: " << e.description() << "\n" << config;
  }
  using Keys = std::set<std::string>;
  EXPECT_EQ(keys(t), (Keys{"global_tags", "agent", "inputs", "outputs"}));
  EXPECT_EQ(keys(*t["global_tags"].as_table()), (Keys{"cluster", "application"}));
  EXPECT_EQ(t["global_tags"]["cluster"].value<std::string>(), o.cluster_name);
  EXPECT_EQ(t["global_tags"]["application"].value<std::string>(), std::string(application));
  EXPECT_EQ(keys(*t["agent"].as_table()),
            (Keys{"interval", "flush_interval", "collection_jitter", "metric_batch_size",
                  "metric_buffer_limit", "omit_hostname"}));
  EXPECT_EQ(keys(*t["inputs"].as_table()), (Keys{"prometheus"}));
  EXPECT_EQ(keys(*t["outputs"].as_table()), (Keys{"influxdb_v2"}));
  const toml::array& inputs = *t["inputs"]["prometheus"].as_array();
  ASSERT_EQ(inputs.size(), endpoints.size());
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    const Endpoint& ep = endpoints[i];
    const toml::table& in = *inputs[i].as_table();
    Keys expected{"urls", "metric_version", "name_override", "tags"};
    if (ep.interval) expected.insert("interval");
    EXPECT_EQ(keys(in), expected) << ep.name;
    ASSERT_EQ(in["urls"].as_array()->size(), 1u);
    EXPECT_EQ(in["urls"][0].value<std::string>(), ep.url);
    EXPECT_EQ(in["metric_version"].value<int64_t>(), ep.metric_version);
    EXPECT_EQ(in["name_override"].value<std::string>(), "prometheus_" + ep.name);
    if (ep.interval) {
      EXPECT_EQ(in["interval"].value<std::string>(), *ep.interval);
    }
    const toml::table& tags = *in["tags"].as_table();
    EXPECT_EQ(tags.size(), ep.tags.size() + 1) << ep.name;
    EXPECT_EQ(tags["prometheus_app"].value<std::string>(), bucket_name(application));
    for (const auto& [k, v] : ep.tags) {
      ASSERT_TRUE(tags.contains(k)) << "missing tag key " << k;
      EXPECT_EQ(tags[k].value<std::string>(), v) << "tag " << k;
    }
  }
  const toml::array& outputs = *t["outputs"]["influxdb_v2"].as_array();
  ASSERT_EQ(outputs.size(), 1u);
  const toml::table& out = *outputs[0].as_table();
  EXPECT_EQ(keys(out), (Keys{"urls", "token", "organization", "bucket"}));
  EXPECT_EQ(out["urls"][0].value<std::string>(), o.influxdb_url);
  EXPECT_EQ(out["token"].value<std::string>(), "${INFLUX_TOKEN}");
  EXPECT_EQ(out["bucket"].value<std::string>(), bucket_name(application));
  EXPECT_EQ(out["organization"].value<std::string>(), o.influxdb_org);
}

TEST(ConfigHostile, AcceptedTagContentIsEscapedAndReadsBackExactly) {
  const std::string long_value(20000, 'L');
  // Each value (and key) is hostile; YAML single quotes keep them literal. (Newlines
  // and other control characters are rejected: see the next test.)
  const std::vector<std::pair<std::string, std::string>> hostile{
      {"quote", "say \"hi\" and 'bye'"},
      {"brackets", "]]"},
      {"triple", "\"\"\""},
      {"literal", "'''"},
      {"header", "[outputs.file]"},
      {"array_header", "\" [[outputs.file]]"},
      {"assign", "x\" = \"y"},
      {"backslash", "C:\\temp\\"},
      {"comment", "# not a comment"},
      {"unicode", "caf\xC3\xA9 \xF0\x9F\x9A\x80 \xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D \xE2\x80\xAE"},
      {"[outputs.file]", "key that looks like a table header"},
      {"a.b", "dotted key"},
      {"\" = 1 [x]", "key breaking out"},
      {"long", long_value},
  };
  std::string yaml = "- hostile:\n    url: http://h:8080/metrics\n    tags:\n";
  std::vector<std::pair<std::string, std::string>> accepted;
  auto single_quoted = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
    return q + "'";
  };
  for (const auto& [k, v] : hostile) {
    yaml += "      " + single_quoted(k) + ": " + single_quoted(v) + "\n";
    accepted.emplace_back(k, v);
  }
  const std::string long_url = "http://h/" + std::string(30000, 'p') + "?q='a'&r=(b)";
  yaml += "- long_url: " + single_quoted(long_url) + "\n";
  AnnotationParse p = parse_annotation(yaml);
  ASSERT_TRUE(p.ok()) << p.summary(100);
  ASSERT_EQ(p.endpoints.size(), 2u);
  EXPECT_EQ(p.endpoints[1].url, long_url);
  std::sort(accepted.begin(), accepted.end());
  EXPECT_EQ(p.endpoints[0].tags, accepted);

  TelegrafOptions o;
  const std::string config = render_telegraf_config("app", p.endpoints, o);
  expect_exact_structure(config, "app", p.endpoints, o);
  // Nothing reached the file unescaped.
  EXPECT_THAT(config, ::testing::Not(HasSubstr("\n[outputs.file]")));
  EXPECT_THAT(config, ::testing::Not(HasSubstr("\xC3\xA9")));  // non-ASCII is escaped
}

TEST(ConfigHostile, NewlinesAndControlCharactersInTagsAreRejected) {
  for (std::string_view tags :
       {"{k: \"x\\\"\\n[outputs.file]\\nfiles = [\\\"stdout\\\"]\"}", "{\"k\\n[x]\": v}",
        "{k: \"a\\tb\"}", "{k: \"nul\\0\"}", "{k: \"\\r\"}"}) {
    AnnotationParse p = parse_annotation("a: {url: 'http://a/', tags: " + std::string(tags) + "}");
    EXPECT_FALSE(p.ok()) << tags;
    EXPECT_THAT(p.summary(), HasSubstr("control character")) << tags;
  }
}

TEST(ConfigHostile, HostileNamesAndUrlsAreRejected) {
  for (std::string_view yaml :
       {"'a\"]]': http://a/", "\"a\\n[outputs.file]\": http://a/", "'\"\"\"': http://a/",
        "'caf\xC3\xA9': http://a/", "a: 'http://a/\"]]\\n[outputs.file]'",
        "a: \"http://a/\\n[outputs.file]\"", "a: 'http://a/\"\"\"'",
        "a: 'http://a/${INFLUX_TOKEN}'", "a: 'http://a/caf\xC3\xA9'"}) {
    AnnotationParse p = parse_annotation(yaml);
    EXPECT_FALSE(p.ok()) << yaml;
    EXPECT_THAT(p.summary(), HasSubstr("endpoint \"")) << yaml;
  }
}

TEST(ConfigHostile, LibraryEscapingHoldsForAnyStringEvenUnvalidated) {
  // render_telegraf_config on its own, with values no validation would let through
  // (newlines, NUL, control characters): the library still escapes them.
  TelegrafOptions o;
  o.cluster_name = "c\"\n[outputs.file]\nfiles = [\"stdout\"]\n";
  o.influxdb_org = "org'''\"\"\"\\";
  Endpoint ep;
  ep.name = "n";
  ep.url = "http://h/\"]]\n[[outputs.file]]";
  ep.interval = "30s\"\ninterval = \"1s";
  ep.tags = {{"\n[outputs.file]\n", std::string("nul\0byte\x01\x1f\x7f", 11)}, {"k", "\r\n\t\b\f"}};
  const std::string app = "app\"\n[agent]\nomit_hostname = false";
  const std::string config = render_telegraf_config(app, std::vector<Endpoint>{ep}, o);
  expect_exact_structure(config, app, {ep}, o);
}

TEST(ConfigHostile, AReservedTagIsNeverDuplicated) {
  Endpoint ep;
  ep.name = "n";
  ep.url = "http://h/";
  ep.tags = {{"prometheus_app", "other"}};  // the annotation parser rejects this
  const std::string config = render_telegraf_config("app", std::vector<Endpoint>{ep}, {});
  auto t = toml::parse(config);
  EXPECT_EQ(t["inputs"]["prometheus"][0]["tags"]["prometheus_app"].value<std::string>(), "app");
}

}  // namespace
}  // namespace aop::telegraf
