// The Alloy checker itself: it accepts the worked example of the backend specification
// (typed in by hand under golden/worked_example, reviewed line by line against the
// specification; the later translation must reproduce these files), and it rejects one
// broken input per rule, each derived from those files by a single edit.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/alloy/checker/checker.hpp"

namespace aop::alloy::check {
namespace {

namespace fs = std::filesystem;

fs::path golden_dir() {
  return fs::path(AOP_SOURCE_DIR) / "tests" / "alloy" / "golden" / "worked_example";
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << p;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The files of one configuration of the worked example, in the documented file order.
std::vector<SourceFile> config(const std::string& dir, const std::vector<std::string>& keys) {
  std::vector<SourceFile> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back({k, read(golden_dir() / dir / k)});
  return out;
}

std::vector<SourceFile> metrics() {
  return config("metrics", {"main.alloy", "mi_monitoring_primary_7f26355a.alloy", "discovery.alloy",
                            "scrape_serviceMonitor_monitoring_web_0_c5aaffd2.alloy"});
}
std::vector<SourceFile> logs() {
  return config("logs", {"main.alloy", "li_monitoring_logs_af352d97.alloy", "discovery.alloy",
                         "logs_podLogs_monitoring_web_b96d73cb.alloy"});
}
std::vector<SourceFile> integrations() {
  return config("integrations-ds", {"main.alloy", "mi_monitoring_primary_7f26355a.alloy",
                                    "integration_monitoring_node_92957cb5.alloy"});
}

std::vector<Violation> check(const std::vector<SourceFile>& files) {
  return check_config(files, "monitoring", "agent");
}

TEST(CheckerAccepts, WorkedExampleConfigs) {
  for (const auto& [name, files] : {std::pair{"metrics", metrics()}, std::pair{"logs", logs()},
                                    std::pair{"integrations-ds", integrations()}}) {
    const auto v = check(files);
    EXPECT_TRUE(v.empty()) << name << ":\n" << to_string(v);
  }
}

TEST(CheckerAccepts, WorkedExampleSecrets) {
  const std::vector<ConfigSecret> secrets = {{"agent-alloy-config", metrics()}};
  const auto v = check_config_secrets(secrets, "agent-alloy-config", {"agent-alloy-config"},
                                      "monitoring", "agent");
  EXPECT_TRUE(v.empty()) << to_string(v);
}

TEST(CheckerParses, WorkedExampleTree) {
  std::vector<Violation> v;
  const auto files = metrics();
  const auto parsed = parse_file(files[3], v);
  ASSERT_TRUE(v.empty()) << to_string(v);
  ASSERT_EQ(parsed.blocks.size(), 2U);
  const Block& relabel = parsed.blocks[0];
  EXPECT_EQ(relabel.name, "discovery.relabel");
  EXPECT_EQ(relabel.label, "scrape_serviceMonitor_monitoring_web_0_c5aaffd2");
  ASSERT_EQ(relabel.children("rule").size(), 16U);
  const Attribute* sl = relabel.children("rule")[8]->attribute("source_labels");
  ASSERT_NE(sl, nullptr);
  ASSERT_EQ(sl->value.items.size(), 2U);
  EXPECT_EQ(sl->value.items[1].text, "__meta_kubernetes_endpoint_address_target_name");
  const Block& scrape = parsed.blocks[1];
  const Attribute* fwd = scrape.attribute("forward_to");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->value.items.at(0).kind, Value::Kind::reference);
  EXPECT_EQ(fwd->value.items.at(0).text,
            "prometheus.remote_write.mi_monitoring_primary_7f26355a.receiver");
  EXPECT_EQ(fwd->line, 92);
}

TEST(CheckerParses, EscapesDecoded) {
  std::vector<Violation> v;
  const auto parsed = parse_file(
      {"x.alloy", "a {\n  s = \"\\\\d\\\"\\n\\t\\u00e9\\U0001F600\\x41\\101$${1}\"\n}\n"}, v);
  ASSERT_TRUE(v.empty()) << to_string(v);
  EXPECT_EQ(parsed.blocks.at(0).attributes.at(0).value.text,
            "\\d\"\n\t\xC3\xA9\xF0\x9F\x98\x80"
            "AA$${1}");
}

TEST(GoDuration, Parses) {
  EXPECT_EQ(parse_go_duration("0"), 0.0);
  EXPECT_EQ(parse_go_duration("1h30m"), 5400e9);
  EXPECT_EQ(parse_go_duration("1.5s"), 1.5e9);
  EXPECT_EQ(parse_go_duration("500ms"), 5e8);
  EXPECT_EQ(parse_go_duration("2\xC2\xB5s"), 2e3);
  EXPECT_EQ(parse_go_duration("-1s"), -1e9);
  for (const char* bad : {"", "1", "1d", "s", "1x", ".s", "1h 2m"}) {
    EXPECT_EQ(parse_go_duration(bad), std::nullopt) << bad;
  }
}

// ---- One broken input per rule ----------------------------------------------------------

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "fixture does not contain `" << from << "`";
    return text;
  }
  return text.replace(at, from.size(), to);
}

// One edit in one file of a configuration.
std::vector<SourceFile> edit(std::vector<SourceFile> files, std::string_view key,
                             const std::string& from, const std::string& to) {
  for (auto& f : files) {
    if (f.key == key) f.text = replaced(f.text, from, to);
  }
  return files;
}

std::vector<SourceFile> with_file(std::vector<SourceFile> files, std::string key,
                                  std::string blocks) {
  files.push_back({std::move(key),
                   "// Generated by agent-operator for GrafanaAgent monitoring/agent. DO NOT "
                   "EDIT.\n\n" +
                       std::move(blocks)});
  return files;
}

constexpr std::string_view kScrape = "scrape_serviceMonitor_monitoring_web_0_c5aaffd2.alloy";
constexpr std::string_view kMi = "mi_monitoring_primary_7f26355a.alloy";
constexpr std::string_view kLogsJob = "logs_podLogs_monitoring_web_b96d73cb.alloy";
constexpr std::string_view kIntegration = "integration_monitoring_node_92957cb5.alloy";

// A logs config with one extra stage inserted after `stage.cri {}`.
std::vector<SourceFile> with_stage(const std::string& stage) {
  return edit(logs(), kLogsJob, "  stage.cri {}\n", "  stage.cri {}\n" + stage);
}

// A metrics config with extra lines at the start of the scrape component's body.
std::vector<SourceFile> scrape_with(const std::string& lines) {
  return edit(metrics(), kScrape, "  honor_labels = false\n", "  honor_labels = false\n" + lines);
}

// A metrics config with extra blocks before the scrape component's clustering block.
std::vector<SourceFile> scrape_block(const std::string& lines) {
  return edit(metrics(), kScrape, "  clustering {\n", lines + "  clustering {\n");
}

// The metrics remote write endpoint with extra attributes/blocks after its url.
std::vector<SourceFile> endpoint_with(const std::string& lines) {
  return edit(metrics(), kMi, "    url = \"https://mimir.example.com/api/v1/push\"\n",
              "    url = \"https://mimir.example.com/api/v1/push\"\n" + lines);
}

// The first relabel rule of the metrics scrape job replaced.
std::vector<SourceFile> rule_is(const std::string& body) {
  return edit(metrics(), kScrape,
              "  rule {\n    source_labels = [\"job\"]\n    regex = \"\"\n    target_label = "
              "\"job\"\n    replacement = \"serviceMonitor/monitoring/web/0\"\n  }\n",
              "  rule {\n" + body + "  }\n");
}

struct Broken {
  std::string name;
  std::vector<SourceFile> files;
  std::string expected;  // a substring of one violation's message
};

std::vector<Broken> broken_inputs() {
  std::vector<Broken> b;
  // Lexical and grammar.
  b.push_back({"escape \\'", edit(metrics(), kScrape, "regex = \"web\"", "regex = \"we\\'b\""),
               "unknown escape sequence \\'"});
  b.push_back({"escape \\z", edit(metrics(), kScrape, "regex = \"web\"", "regex = \"\\z\""),
               "unknown escape sequence \\z"});
  b.push_back({"raw newline in string",
               edit(metrics(), kScrape, "regex = \"web\"", "regex = \"w\neb\""),
               "newline in string"});
  b.push_back({"invalid UTF-8", edit(metrics(), kScrape, "regex = \"web\"", "regex = \"w\xFF\""),
               "illegal UTF-8 encoding"});
  b.push_back({"surrogate escape",
               edit(metrics(), kScrape, "regex = \"web\"", "regex = \"\\uD800\""),
               "invalid Unicode code point"});
  b.push_back({"short \\x escape", edit(metrics(), kScrape, "regex = \"web\"", "regex = \"\\x4\""),
               "needs 2 hex digits"});
  b.push_back({"backtick string", edit(metrics(), kScrape, "regex = \"web\"", "regex = `web`"),
               "raw (backtick) strings"});
  b.push_back(
      {"missing comma in multi-line object",
       edit(metrics(), kMi, "cluster = \"monitoring/agent\",", "cluster = \"monitoring/agent\""),
       "missing ',' before newline in object"});
  b.push_back({"two statements on one line",
               edit(metrics(), kScrape, "  honor_labels = false\n",
                    "  honor_labels = false job_name = \"x\"\n"),
               "expected newline after statement"});
  b.push_back({"unclosed block", edit(metrics(), "main.alloy", "}\n", ""), "not closed"});
  b.push_back({"top-level attribute", with_file(metrics(), "x.alloy", "level = \"info\"\n"),
               "attribute level at top level"});
  b.push_back(
      {"keyword as name", with_file(metrics(), "x.alloy", "true {}\n"), "keyword true used as"});
  b.push_back({"label not an identifier",
               edit(metrics(), kMi, "\"mi_monitoring_primary_7f26355a\" {", "\"mi-monitoring\" {"),
               "is not an identifier"});
  // Top level.
  b.push_back({"unknown component",
               with_file(metrics(), "x.alloy", "prometheus.operator.servicemonitors \"x\" {}\n"),
               "unknown top-level block prometheus.operator.servicemonitors"});
  b.push_back({"component without label",
               with_file(metrics(), "x.alloy", "discovery.kubernetes {\n  role = \"pod\"\n}\n"),
               "component discovery.kubernetes needs a label"});
  b.push_back({"duplicate component",
               with_file(metrics(), "copy.alloy",
                         "discovery.kubernetes \"sd_endpoints_monitoring_f7258a06\" {\n"
                         "  role = \"endpoints\"\n}\n"),
               "duplicate component discovery.kubernetes \"sd_endpoints_monitoring_f7258a06\""});
  b.push_back({"logging twice", with_file(metrics(), "again.alloy", "logging {}\n"),
               "logging block appears more than once"});
  b.push_back({"logging with a label",
               edit(metrics(), "main.alloy", "logging {", "logging \"x\" {"),
               "the logging block takes no label"});
  b.push_back({"bad log level", edit(metrics(), "main.alloy", "\"info\"", "\"verbose\""),
               "\"verbose\" is not one of debug, info, warn, error"});
  // Schema.
  b.push_back({"unknown attribute", scrape_with("  scrape_protocols = [\"PrometheusText0.0.4\"]\n"),
               "unknown attribute scrape_protocols"});
  b.push_back({"unknown block", edit(metrics(), kScrape, "  clustering {", "  clustring {"),
               "unknown block clustring"});
  b.push_back({"missing required attribute",
               edit(metrics(), "discovery.alloy", "  role = \"endpoints\"\n", ""),
               "missing required attribute role"});
  b.push_back(
      {"missing forward_to",
       edit(metrics(), kScrape,
            "  forward_to = [prometheus.remote_write.mi_monitoring_primary_7f26355a.receiver]\n",
            ""),
       "missing required attribute forward_to"});
  b.push_back(
      {"missing clustering.enabled",
       edit(metrics(), kScrape, "  clustering {\n    enabled = true\n  }\n", "  clustering {}\n"),
       "missing required attribute enabled"});
  b.push_back({"missing endpoint url",
               edit(metrics(), kMi, "    url = \"https://mimir.example.com/api/v1/push\"\n", ""),
               "missing required attribute url"});
  b.push_back({"missing stage.regex expression",
               edit(logs(), kLogsJob, "    expression = \"^(?P<level>[a-z]+)\\\\s\"\n",
                    "    source = \"x\"\n"),
               "missing required attribute expression"});
  b.push_back({"wrong kind: bool as string",
               edit(metrics(), kScrape, "honor_labels = false", "honor_labels = \"false\""),
               "honor_labels: expected a bool"});
  b.push_back(
      {"wrong kind: list of strings",
       edit(metrics(), "discovery.alloy", "names = [\"monitoring\"]", "names = \"monitoring\""),
       "names: expected a list of strings"});
  b.push_back({"non-Go duration",
               edit(metrics(), kScrape, "scrape_interval = \"30s\"", "scrape_interval = \"1d\""),
               "\"1d\" is not a Go duration"});
  b.push_back({"bad enum role",
               edit(metrics(), "discovery.alloy", "role = \"endpoints\"", "role = \"endpoint\""),
               "\"endpoint\" is not one of"});
  b.push_back({"null value", scrape_with("  metrics_path = null\n"), "null is never written"});
  b.push_back({"attribute set twice", scrape_with("  honor_labels = true\n"),
               "attribute honor_labels set twice"});
  b.push_back({"block twice", edit(metrics(), kMi, "  wal {", "  wal {}\n  wal {"),
               "block wal appears more than once"});
  b.push_back({"attribute out of order",
               edit(metrics(), kScrape,
                    "  job_name = \"serviceMonitor/monitoring/web/0\"\n  honor_labels = false\n",
                    "  honor_labels = false\n  job_name = \"serviceMonitor/monitoring/web/0\"\n"),
               "attribute job_name is out of order"});
  b.push_back({"block out of order",
               edit(metrics(), kScrape, "  clustering {\n    enabled = true\n  }\n",
                    "  clustering {\n    enabled = true\n  }\n  tls_config {}\n"),
               "block tls_config is out of order"});
  b.push_back({"attribute after block",
               edit(metrics(), kScrape, "  clustering {\n    enabled = true\n  }\n",
                    "  clustering {\n    enabled = true\n  }\n  metrics_path = \"/m\"\n"),
               "attributes must come before blocks"});
  b.push_back({"exporter arguments not bytewise",
               edit(integrations(), kIntegration,
                    "  procfs_path = \"/host/proc\"\n  rootfs_path = \"/host/root\"\n",
                    "  rootfs_path = \"/host/root\"\n  procfs_path = \"/host/proc\"\n"),
               "attribute procfs_path is out of order"});
  b.push_back({"label on a block that takes none",
               edit(metrics(), kScrape, "  clustering {", "  clustering \"x\" {"),
               "block clustering takes no label"});
  // References.
  b.push_back(
      {"dangling reference",
       edit(metrics(), kScrape, "discovery.kubernetes.sd_endpoints_monitoring_f7258a06.targets",
            "discovery.kubernetes.sd_missing_00000000.targets"),
       "reference to undeclared component discovery.kubernetes \"sd_missing_00000000\""});
  b.push_back({"wrong export",
               edit(metrics(), kScrape,
                    "discovery.relabel.scrape_serviceMonitor_monitoring_web_0_c5aaffd2.output",
                    "discovery.relabel.scrape_serviceMonitor_monitoring_web_0_c5aaffd2.receiver"),
               "discovery.relabel has no export receiver"});
  b.push_back(
      {"receiver where targets go",
       edit(metrics(), kScrape,
            "targets = discovery.relabel.scrape_serviceMonitor_monitoring_web_0_c5aaffd2.output",
            "targets = prometheus.remote_write.mi_monitoring_primary_7f26355a.receiver"),
       "targets: expected a target list"});
  b.push_back(
      {"targets where a string goes",
       scrape_with(
           "  metrics_path = discovery.kubernetes.sd_endpoints_monitoring_f7258a06.targets\n"),
       "metrics_path: expected a string"});
  {
    auto files = logs();
    files.push_back(metrics()[1]);
    b.push_back(
        {"metric receiver in a loki forward_to",
         edit(files, kLogsJob, "forward_to = [loki.write.loki_monitoring_logs_0_ac7adbe7.receiver]",
              "forward_to = [prometheus.remote_write.mi_monitoring_primary_7f26355a.receiver]"),
         "is a metric receiver, not a log receiver"});
  }
  {
    auto files = metrics();
    files.push_back(logs()[1]);
    b.push_back(
        {"log receiver in a prometheus.scrape forward_to",
         edit(files, kScrape,
              "forward_to = [prometheus.remote_write.mi_monitoring_primary_7f26355a.receiver]",
              "forward_to = [loki.write.loki_monitoring_logs_0_ac7adbe7.receiver]"),
         "is a log receiver, not a metric receiver"});
  }
  b.push_back(
      {"cycle",
       with_file(metrics(), "cycle.alloy",
                 "prometheus.relabel \"a\" {\n  forward_to = [prometheus.relabel.b.receiver]\n}\n\n"
                 "prometheus.relabel \"b\" {\n  forward_to = [prometheus.relabel.a.receiver]\n}\n"),
       "reference cycle: prometheus.relabel.a -> prometheus.relabel.b -> prometheus.relabel.a"});
  b.push_back(
      {"function not generated",
       edit(logs(), "discovery.alloy", "sys.env(\"NODE_NAME\")", "string.format(\"%s\", \"x\")"),
       "function string.format is not one the operator uses"});
  b.push_back(
      {"other reference than constants.hostname",
       edit(integrations(), kIntegration,
            "constants.hostname) + \":8080\"\n  }\n  rule {\n    target_label = \"instance\"",
            "constants.os) + \":8080\"\n  }\n  rule {\n    target_label = \"instance\""),
       "constants.os is not a component export"});
  // Relabel rules.
  b.push_back({"unknown action (not lower-cased)",
               rule_is("    source_labels = [\"a\"]\n    action = \"Keep\"\n"),
               "unknown relabel action \"Keep\""});
  b.push_back({"replace without target_label", rule_is("    source_labels = [\"a\"]\n"),
               "relabel action replace requires target_label"});
  b.push_back({"invalid target_label", rule_is("    target_label = \"1abc\"\n"),
               "\"1abc\" is invalid target_label for replace action"});
  b.push_back({"hashmod modulus 0",
               rule_is("    source_labels = [\"__address__\"]\n    target_label = \"__tmp_hash\"\n "
                       "   action = \"hashmod\"\n"),
               "hashmod requires a non-zero modulus"});
  b.push_back(
      {"labeldrop with source_labels",
       rule_is("    source_labels = [\"a\"]\n    regex = \"x\"\n    action = \"labeldrop\"\n"),
       "labeldrop action requires only regex"});
  b.push_back({"lowercase with replacement",
               rule_is("    source_labels = [\"a\"]\n    target_label = \"b\"\n    replacement = "
                       "\"x\"\n    action = \"lowercase\"\n"),
               "lowercase action requires no replacement"});
  b.push_back({"keepequal with regex",
               rule_is("    source_labels = [\"a\"]\n    regex = \"x\"\n    target_label = \"b\"\n "
                       "   action = \"keepequal\"\n"),
               "keepequal action requires only source_labels and target_label"});
  b.push_back({"labelmap bad replacement",
               rule_is("    regex = \"x\"\n    replacement = \"1-2\"\n    action = \"labelmap\"\n"),
               "invalid replacement for labelmap"});
  b.push_back({"write_relabel_config checked too",
               endpoint_with("    write_relabel_config {\n      action = \"hashmod\"\n    }\n"),
               "relabel action hashmod requires target_label"});
  // HTTP client rules.
  b.push_back({"two auth methods",
               edit(metrics(), kMi, "    }\n  }\n  wal {",
                    "    }\n    authorization {\n      credentials = \"t\"\n    }\n  }\n  wal {"),
               "at most one of basic_auth"});
  b.push_back({"password and password_file",
               edit(metrics(), kMi, "      username = \"12345\"\n",
                    "      username = \"12345\"\n      password = \"p\"\n"),
               "at most one of password and password_file"});
  b.push_back(
      {"authorization type basic",
       scrape_block("  authorization {\n    type = \"Basic\"\n    credentials = \"x\"\n  }\n"),
       "authorization type \"basic\" is not allowed"});
  b.push_back({"oauth2 without token_url",
               scrape_block("  oauth2 {\n    client_id = \"c\"\n    client_secret = \"s\"\n  }\n"),
               "token_url is required"});
  b.push_back(
      {"oauth2 without secret",
       scrape_block("  oauth2 {\n    client_id = \"c\"\n    token_url = \"https://t\"\n  }\n"),
       "exactly one of client_secret and client_secret_file"});
  b.push_back({"tls cert without key",
               scrape_block("  tls_config {\n    cert_file = \"/c\"\n  }\n"),
               "a client certificate needs both cert and key"});
  b.push_back({"tls ca twice",
               scrape_block("  tls_config {\n    ca_pem = \"x\"\n    ca_file = \"/c\"\n  }\n"),
               "at most one of ca_pem and ca_file"});
  b.push_back(
      {"sigv4 half keys",
       edit(metrics(), kMi,
            "    basic_auth {\n      username = \"12345\"\n      password_file = "
            "\"/var/lib/grafana-agent/secrets/_secrets_monitoring_rw_auth_password\"\n    }\n",
            "    sigv4 {\n      access_key = \"a\"\n    }\n"),
       "access_key and secret_key must be set together"});
  b.push_back({"scrape_timeout above scrape_interval",
               edit(metrics(), kScrape, "scrape_timeout = \"10s\"", "scrape_timeout = \"45s\""),
               "scrape_timeout is greater than scrape_interval"});
  b.push_back({"WAL min equal to max",
               edit(metrics(), kMi, "min_keepalive_time = \"5m\"", "min_keepalive_time = \"4h\""),
               "min_keepalive_time must be less than max_keepalive_time"});
  b.push_back({"WAL truncate 0",
               edit(metrics(), kMi, "truncate_frequency = \"60m\"", "truncate_frequency = \"0s\""),
               "truncate_frequency must be greater than 0"});
  // Stage rules.
  b.push_back({"limit.rate = 0",
               with_stage("  stage.limit {\n    rate = 0\n    burst = 10\n    drop = false\n  }\n"),
               "rate must be greater than 0"});
  b.push_back({"limit.burst missing", with_stage("  stage.limit {\n    rate = 5\n  }\n"),
               "missing required attribute burst"});
  b.push_back({"limit by_label_name without drop",
               with_stage("  stage.limit {\n    rate = 5\n    burst = 10\n    drop = false\n    "
                          "by_label_name = \"app\"\n  }\n"),
               "by_label_name requires drop = true"});
  b.push_back({"tenant with two sources",
               with_stage("  stage.tenant {\n    label = \"a\"\n    value = \"b\"\n  }\n"),
               "exactly one of label, source and value"});
  b.push_back({"match drop with stages",
               with_stage("  stage.match {\n    selector = \"{app=\\\"x\\\"}\"\n    action = "
                          "\"drop\"\n    stage.docker {}\n  }\n"),
               "a drop match takes no nested stages"});
  b.push_back({"match keep without stages",
               with_stage("  stage.match {\n    selector = \"{app=\\\"x\\\"}\"\n  }\n"),
               "a keep match needs at least one nested stage"});
  b.push_back({"match bad action",
               with_stage("  stage.match {\n    selector = \"{a=\\\"b\\\"}\"\n    action = "
                          "\"pass\"\n    stage.docker {}\n  }\n"),
               "action must be keep or drop"});
  b.push_back({"drop without condition",
               with_stage("  stage.drop {\n    drop_counter_reason = \"x\"\n  }\n"),
               "at least one of source, expression, older_than and longer_than"});
  b.push_back({"drop value without source",
               with_stage("  stage.drop {\n    value = \"x\"\n    older_than = \"1h\"\n  }\n"),
               "value requires source"});
  b.push_back(
      {"drop value and expression",
       with_stage(
           "  stage.drop {\n    source = \"a\"\n    expression = \"x\"\n    value = \"x\"\n  }\n"),
       "value and expression are exclusive"});
  b.push_back({"timestamp action_on_failure",
               with_stage("  stage.timestamp {\n    source = \"t\"\n    format = \"RFC3339\"\n    "
                          "action_on_failure = \"panic\"\n  }\n"),
               "action_on_failure must be fudge or skip"});
  b.push_back({"labels with an invalid label name",
               edit(logs(), kLogsJob, "      level = \"\",",
                    "      level = \"\",\n      \"bad-name\" = \"\","),
               "\"bad-name\" is not a valid label name"});
  b.push_back({"counter bad action",
               with_stage("  stage.metrics {\n    metric.counter {\n      name = \"c\"\n      "
                          "action = \"set\"\n    }\n  }\n"),
               "counter action must be inc or add"});
  b.push_back({"counter count_entry_bytes without match_all",
               with_stage("  stage.metrics {\n    metric.counter {\n      name = \"c\"\n      "
                          "action = \"add\"\n      count_entry_bytes = true\n    }\n  }\n"),
               "count_entry_bytes requires match_all = true"});
  b.push_back(
      {"counter match_all and value",
       with_stage("  stage.metrics {\n    metric.counter {\n      name = \"c\"\n      value = "
                  "\"v\"\n      action = \"inc\"\n      match_all = true\n    }\n  }\n"),
       "match_all and value are exclusive"});
  b.push_back({"gauge bad action",
               with_stage("  stage.metrics {\n    metric.gauge {\n      name = \"g\"\n      action "
                          "= \"inc_by\"\n    }\n  }\n"),
               "gauge action must be"});
  b.push_back(
      {"histogram without buckets",
       with_stage("  stage.metrics {\n    metric.histogram {\n      name = \"h\"\n    }\n  }\n"),
       "missing required attribute buckets"});
  b.push_back({"max_idle_duration below 1s",
               with_stage("  stage.metrics {\n    metric.gauge {\n      name = \"g\"\n      "
                          "max_idle_duration = \"500ms\"\n      action = \"set\"\n    }\n  }\n"),
               "max_idle_duration must be at least 1s"});
  b.push_back(
      {"multiline max_wait_time 0",
       with_stage("  stage.multiline {\n    firstline = \"^x\"\n    max_wait_time = \"0s\"\n  }\n"),
       "max_wait_time must be greater than 0"});
  b.push_back({"cri max_partial_lines 0",
               edit(logs(), kLogsJob, "  stage.cri {}\n",
                    "  stage.cri {\n    max_partial_lines = 0\n  }\n"),
               "max_partial_lines must be greater than 0"});
  b.push_back({"json without expressions", with_stage("  stage.json {\n    source = \"\"\n  }\n"),
               "expressions is required"});
  b.push_back({"unknown stage", with_stage("  stage.geoip {}\n"), "unknown block stage.geoip"});
  b.push_back({"logfmt without mapping", with_stage("  stage.logfmt {\n    source = \"x\"\n  }\n"),
               "missing required attribute mapping"});
  b.push_back({"limit burst not an integer",
               with_stage("  stage.limit {\n    rate = 5\n    burst = 1.5\n  }\n"),
               "burst: expected an integer"});
  // Exporter argument types.
  b.push_back({"exporter list argument given a string",
               edit(integrations(), kIntegration, "  procfs_path = \"/host/proc\"\n",
                    "  enable_collectors = \"cpu,meminfo\"\n  procfs_path = \"/host/proc\"\n"),
               "enable_collectors: expected a list of strings"});
  b.push_back(
      {"exporter string argument given a bool",
       edit(integrations(), kIntegration, "rootfs_path = \"/host/root\"", "rootfs_path = true"),
       "rootfs_path: expected a string"});
  b.push_back({"exporter block argument of the wrong type",
               edit(integrations(), kIntegration, "  sysfs_path = \"/host/sys\"\n",
                    "  sysfs_path = \"/host/sys\"\n  ntp {\n    ip_ttl = \"1\"\n  }\n"),
               "ip_ttl: expected an integer"});
  // Layout.
  b.push_back({"tab indentation", edit(metrics(), "main.alloy", "  level", "\tlevel"),
               "expected `  level = \"info\"`, found `\\tlevel = \"info\"`"});
  b.push_back({"no final newline", edit(metrics(), "main.alloy", "}\n", "}"),
               "the file must end with exactly one newline"});
  b.push_back({"two empty lines between blocks",
               edit(metrics(), kScrape, "}\n\nprometheus.scrape", "}\n\n\nprometheus.scrape"),
               "layout differs"});
  b.push_back({"wrong header",
               edit(metrics(), "main.alloy", "monitoring/agent", "monitoring/other"),
               "layout differs"});
  b.push_back({"unsorted object keys",
               edit(metrics(), kMi,
                    "    __replica__ = \"replica-\" + sys.env(\"REPLICA_GROUP\"),\n    cluster = "
                    "\"monitoring/agent\",\n",
                    "    cluster = \"monitoring/agent\",\n    __replica__ = \"replica-\" + "
                    "sys.env(\"REPLICA_GROUP\"),\n"),
               "layout differs"});
  b.push_back({"lowercase \\u escape",
               edit(metrics(), kScrape, "regex = \"web\"", "regex = \"\\u001b\""),
               "expected `    regex = \"\\u001B\"`"});
  b.push_back({"octal escape instead of the writer's",
               edit(metrics(), kScrape, "regex = \"web\"", "regex = \"\\101\""),
               "expected `    regex = \"A\"`"});
  b.push_back({"multi-line list of scalars",
               edit(metrics(), "discovery.alloy", "names = [\"monitoring\"]",
                    "names = [\n      \"monitoring\",\n    ]"),
               "layout differs"});
  b.push_back({"empty body over two lines",
               edit(logs(), kLogsJob, "  stage.cri {}\n", "  stage.cri {\n  }\n"),
               "expected `  stage.cri {}`"});
  b.push_back({"number with exponent",
               with_stage("  stage.limit {\n    rate = 2e+03\n    burst = 1\n  }\n"),
               "expected `    rate = 2000`"});
  b.push_back({"CRLF line ends", edit(metrics(), "main.alloy", "logging {\n", "logging {\r\n"),
               "expected `logging {`, found `logging {\\r`"});
  return b;
}

TEST(CheckerRejects, OneBrokenInputPerRule) {
  const auto cases = broken_inputs();
  EXPECT_GE(cases.size(), 90U);
  for (const auto& c : cases) {
    const auto v = check(c.files);
    const bool found = std::any_of(v.begin(), v.end(), [&](const Violation& x) {
      return x.message.find(c.expected) != std::string::npos;
    });
    EXPECT_TRUE(found) << c.name << ": expected a violation containing `" << c.expected
                       << "`, got:\n"
                       << to_string(v);
    for (const auto& x : v) EXPECT_GT(x.line, 0) << c.name << ": " << to_string(x);
  }
}

TEST(CheckerRejects, ViolationsNameFileAndLine) {
  const auto v =
      check(edit(metrics(), kScrape, "scrape_timeout = \"10s\"", "scrape_timeout = \"1d\""));
  ASSERT_EQ(v.size(), 1U) << to_string(v);
  EXPECT_EQ(to_string(v[0]),
            std::string(kScrape) +
                ":96: prometheus.scrape "
                "\"scrape_serviceMonitor_monitoring_web_0_c5aaffd2\".scrape_timeout: "
                "\"1d\" is not a Go duration");
}

TEST(CheckerRejects, EveryViolationReported) {
  // Three independent problems in three files: all three reported.
  auto files = edit(metrics(), "discovery.alloy", "role = \"endpoints\"", "role = \"x\"");
  files = edit(files, kScrape, "honor_labels = false", "honor_labels = 1");
  files = edit(files, kMi, "truncate_frequency = \"60m\"", "truncate_frequency = \"0s\"");
  const auto v = check(files);
  EXPECT_EQ(v.size(), 3U) << to_string(v);
}

// ---- Objects ----------------------------------------------------------------------------

TEST(CheckerRejects, SecretRules) {
  const auto files = metrics();
  const std::vector<SourceFile> first(files.begin(), files.begin() + 2);
  const std::vector<SourceFile> second(files.begin() + 2, files.end());
  const std::vector<ConfigSecret> good = {{"agent-alloy-config", first},
                                          {"agent-alloy-config-1", second}};
  const std::vector<std::string> sources = {"agent-alloy-config", "agent-alloy-config-1"};
  EXPECT_TRUE(
      check_config_secrets(good, "agent-alloy-config", sources, "monitoring", "agent").empty());

  const auto expect = [](const std::vector<Violation>& v, const std::string& what) {
    EXPECT_TRUE(
        std::any_of(v.begin(), v.end(),
                    [&](const Violation& x) { return x.message.find(what) != std::string::npos; }))
        << what << "\n"
        << to_string(v);
  };
  auto renamed = good;
  renamed[1].name = "agent-alloy-config-2";
  expect(
      check_config_secrets(renamed, "agent-alloy-config",
                           {"agent-alloy-config", "agent-alloy-config-2"}, "monitoring", "agent"),
      "is named agent-alloy-config-2, expected agent-alloy-config-1");
  expect(check_config_secrets(good, "agent-alloy-config", {"agent-alloy-config"}, "monitoring",
                              "agent"),
         "projected volume sources");
  auto dup = good;
  dup[1].data.push_back(first[0]);
  expect(check_config_secrets(dup, "agent-alloy-config", sources, "monitoring", "agent"),
         "key in both Secret agent-alloy-config and Secret agent-alloy-config-1");
  auto badkey = good;
  badkey[1].data[0].key = "discovery.yaml";
  expect(check_config_secrets(badkey, "agent-alloy-config", sources, "monitoring", "agent"),
         "must end in .alloy");
  auto big = good;
  big[1].data.push_back(
      {"pad.alloy",
       "// Generated by agent-operator for GrafanaAgent monitoring/agent. DO NOT "
       "EDIT.\n\nlocal.file_match \"pad\" {\n  path_targets = []\n  sync_period = \"" +
           std::string(786432, '1') + "s\"\n}\n"});
  expect(check_config_secrets(big, "agent-alloy-config", sources, "monitoring", "agent"),
         "above 786432");
}

}  // namespace
}  // namespace aop::alloy::check
