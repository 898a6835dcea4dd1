// Unit tests of the consumer rules (reconcile/validation): each rule against values its
// consumer accepts and refuses. Expected outcomes come from the consumers' documented
// behaviour (Prometheus configuration reference, Go's time.ParseDuration, RE2 syntax,
// Loki's pipeline stage reference, RFC 9110 tokens).
#include <gtest/gtest.h>

#include "reconcile/validation/durations.hpp"
#include "reconcile/validation/loki.hpp"
#include "reconcile/validation/prometheus.hpp"
#include "reconcile/validation/regex.hpp"
#include "reconcile/validation/text.hpp"
#include "reconcile/validation/url.hpp"

namespace aop::validation {
namespace {

// The complaint's text, or "" when there is none.
std::string text(const Complaint& c) {
  return c ? *c : std::string();
}

::testing::AssertionResult refused(const Complaint& c, std::string_view phrase) {
  if (!c) return ::testing::AssertionFailure() << "accepted";
  if (c->find(phrase) == std::string::npos) {
    return ::testing::AssertionFailure() << "message lacks \"" << phrase << "\": " << *c;
  }
  return ::testing::AssertionSuccess();
}

std::vector<Violation> relabel(RelabelRule r) {
  Checker c("spec.relabelings[0]");
  check_relabel_rule(c, r);
  return c.take();
}

}  // namespace

TEST(Durations, PrometheusSyntax) {
  for (const char* ok :
       {"0", "1ms", "30s", "1m30s", "1h", "1d", "2w", "1y", "1y2w3d4h5m6s7ms", "90m", "0s"}) {
    EXPECT_FALSE(check_prometheus_duration(ok))
        << ok << ": " << text(check_prometheus_duration(ok));
  }
  EXPECT_EQ(parse_prometheus_duration("1h30m").value().count(), 5'400'000);
  EXPECT_EQ(parse_prometheus_duration("1d").value().count(), 86'400'000);
  for (const char* bad :
       {"1.5h", "30m1h", "1h1h", "5", "-1s", "1 s", "1H", "1us", "1sec", "s", "1s ", "PT1S"}) {
    EXPECT_TRUE(refused(check_prometheus_duration(bad), "not a valid duration string")) << bad;
  }
  EXPECT_TRUE(refused(check_prometheus_duration("300y"), "out of range"));
  EXPECT_TRUE(refused(check_prometheus_duration("99999999999999999999999s"), "out of range"));
  EXPECT_FALSE(check_prometheus_duration(""));  // unset
}

TEST(Durations, GoSyntax) {
  for (const char* ok : {"1.5h", "300ms", "1h30m", "2us", "0"}) {
    EXPECT_FALSE(check_go_duration(ok)) << ok;
  }
  EXPECT_TRUE(refused(check_go_duration("1d"), "has no d, w or y"));
  EXPECT_TRUE(refused(check_go_duration("5"), "missing unit"));
  EXPECT_TRUE(refused(check_go_duration("-1s"), "negative"));
  EXPECT_TRUE(refused(check_go_duration("0s", {.allow_zero = false}), "must be positive"));
  EXPECT_TRUE(refused(check_go_duration("500ms", {.minimum = std::chrono::seconds(1)}),
                      "shorter than the minimum of 1s"));
  EXPECT_TRUE(refused(check_go_duration("9999999999h"), "invalid duration"));
}

TEST(Regex, Re2SemanticsAsTheAgentCompilesThem) {
  // Go accepts these (std::regex's ECMAScript would refuse the first two).
  for (const char* ok : {"(?i)web", "(?P<name>x)", "a{2,5}", "[[:alpha:]]+", "\\d+\\.\\d+", ""}) {
    EXPECT_FALSE(check_regex(ok, RegexUse::prometheus_anchored)) << ok;
  }
  EXPECT_TRUE(refused(check_regex("foo(?=bar)", RegexUse::as_written), "no lookahead"));
  EXPECT_TRUE(refused(check_regex("(a)\\1", RegexUse::as_written), "does not compile"));
  EXPECT_TRUE(refused(check_regex("a{1001}", RegexUse::as_written), "does not compile"));
  EXPECT_TRUE(refused(check_regex("(unclosed", RegexUse::as_written), "missing )"));
  // Prometheus compiles ^(?:regex)$, so `a)|(b` becomes ^(?:a)|(b)$, which compiles: it
  // is accepted there, while a Loki stage would refuse it.
  EXPECT_FALSE(check_regex("a)|(b", RegexUse::prometheus_anchored));
  EXPECT_TRUE(refused(check_regex("a)|(b", RegexUse::as_written), "does not compile"));
  // Bounded before compiling: a 10 MiB expression is refused, not compiled.
  EXPECT_FALSE(check_regex(std::string(kMaxRegexBytes, 'x'), RegexUse::as_written));
  EXPECT_TRUE(refused(check_regex(std::string(10u << 20, 'x'), RegexUse::prometheus_anchored),
                      "is 10485760 bytes long; at most 65536 are accepted"));
  // Cached results stay right.
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(check_regex("(?<=x)", RegexUse::as_written).has_value());
    EXPECT_FALSE(check_regex("x+", RegexUse::as_written).has_value());
  }
  EXPECT_TRUE(has_named_group("(?P<level>\\w+)"));
  EXPECT_FALSE(has_named_group("(\\w+)"));
}

TEST(Prometheus, LabelAndMetricNames) {
  EXPECT_FALSE(check_label_name("__meta_kubernetes_pod_name"));
  EXPECT_FALSE(check_label_name("_x1"));
  EXPECT_TRUE(refused(check_label_name("1abc"), "not a valid Prometheus label name"));
  EXPECT_TRUE(refused(check_label_name("app.kubernetes.io/name"), "not a valid"));
  EXPECT_TRUE(refused(check_label_name(""), "empty"));
  EXPECT_FALSE(check_metric_name("http:requests_total"));
  EXPECT_TRUE(refused(check_metric_name("http-requests"), "metric name"));
  EXPECT_TRUE(refused(check_label_value("\xff"), "UTF-8"));
  EXPECT_FALSE(check_label_value(std::string(kMaxLabelValueBytes, 'v')));
  EXPECT_TRUE(refused(check_label_value(std::string(10u << 20, 'v')),
                      "is 10485760 bytes long; at most 65536 are accepted"));
}

TEST(Prometheus, RelabelActionsInEitherSpelling) {
  for (const char* ok : {"", "replace", "Replace", "LabelMap", "labelmap", "HashMod", "keepequal",
                         "DropEqual", "REPLACE"}) {
    EXPECT_FALSE(check_relabel_action(ok)) << ok;
  }
  EXPECT_TRUE(refused(check_relabel_action("rename"), "unknown relabel action \"rename\""));
}

TEST(Prometheus, RelabelRuleConsistency) {
  // Defaults: replace with a target.
  EXPECT_TRUE(relabel({.target_label = "x"}).empty());
  // replace needs a target; its target may reference capture groups.
  auto v = relabel({.source_labels = {"a"}});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].field, "spec.relabelings[0].targetLabel");
  EXPECT_TRUE(relabel({.target_label = "${1}_x"}).empty());
  EXPECT_TRUE(relabel({.target_label = "pre_$1"}).empty());
  EXPECT_EQ(relabel({.target_label = "a-b"}).size(), 1u);
  EXPECT_EQ(relabel({.target_label = "${1"}).size(), 1u);
  EXPECT_EQ(relabel({.target_label = "$"}).size(), 1u);
  // hashmod: target and modulus.
  v = relabel({.source_labels = {"__address__"}, .target_label = "__tmp", .action = "hashmod"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].field, "spec.relabelings[0].modulus");
  EXPECT_EQ(relabel({.target_label = "$1", .modulus = 2, .action = "hashmod"}).size(), 1u);
  // lowercase/uppercase: no replacement (the default $1 is fine).
  EXPECT_EQ(relabel({.target_label = "x", .replacement = "y", .action = "lowercase"}).size(), 1u);
  EXPECT_TRUE(relabel({.target_label = "x", .replacement = "$1", .action = "Uppercase"}).empty());
  // keepequal/dropequal: only sourceLabels and targetLabel.
  v = relabel({.source_labels = {"a"}, .target_label = "b", .regex = "x", .action = "keepequal"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].field, "spec.relabelings[0].regex");
  EXPECT_EQ(relabel({.source_labels = {"a"}, .action = "dropequal"}).size(), 1u);
  // labeldrop/labelkeep: only regex.
  EXPECT_TRUE(relabel({.regex = "tmp_.*", .action = "labeldrop"}).empty());
  v = relabel({.source_labels = {"a"}, .target_label = "b", .regex = "x", .action = "LabelKeep"});
  EXPECT_EQ(v.size(), 2u);
  // labelmap replacement is a label-name pattern.
  EXPECT_TRUE(
      relabel({.regex = "__meta_(.+)", .replacement = "k8s_$1", .action = "labelmap"}).empty());
  EXPECT_EQ(relabel({.regex = "(.+)", .replacement = "a b", .action = "labelmap"}).size(), 1u);
  // Source labels and regexes.
  v = relabel({.source_labels = {"ok", "not ok"}, .target_label = "x"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].field, "spec.relabelings[0].sourceLabels[1]");
  v = relabel({.target_label = "x", .regex = "(?!x)"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].field, "spec.relabelings[0].regex");
  // An unknown action stops there.
  v = relabel({.action = "Rename"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].field, "spec.relabelings[0].action");
}

TEST(Prometheus, RemoteWriteHeaders) {
  EXPECT_FALSE(check_remote_write_header("X-Scope-OrgID", "tenant-1"));
  EXPECT_TRUE(refused(check_remote_write_header("Authorization", "Bearer x"), "basicAuth"));
  EXPECT_TRUE(refused(check_remote_write_header("content-type", "x"), "reserved"));
  EXPECT_TRUE(refused(check_remote_write_header("User-Agent", "x"), "reserved"));
  EXPECT_TRUE(refused(check_remote_write_header("X Tenant", "x"), "not an HTTP token"));
  EXPECT_TRUE(refused(check_remote_write_header("X-Tenant:", "x"), "not an HTTP token"));
  EXPECT_TRUE(refused(check_remote_write_header("X-Tenant", "a\r\nInjected: 1"), "line break"));
}

TEST(Prometheus, SchemesAndPaths) {
  EXPECT_FALSE(check_scheme("https"));
  EXPECT_TRUE(refused(check_scheme("HTTPS"), "use http or https"));
  EXPECT_TRUE(refused(check_scheme("ftp"), "use http or https"));
  EXPECT_FALSE(check_metrics_path("/metrics"));
  EXPECT_TRUE(refused(check_metrics_path("metrics"), "must start with /"));
  EXPECT_TRUE(refused(check_metrics_path("/a\nb"), "control character"));
}

TEST(Text, ControlCharactersHeadersAndTheReloader) {
  EXPECT_FALSE(check_single_line("caf\xC3\xA9"));
  EXPECT_TRUE(refused(check_single_line("a\tb"), "control character"));
  EXPECT_TRUE(refused(check_single_line("a\xC2\x85"), "control character"));
  EXPECT_TRUE(refused(check_single_line("\xC3"), "UTF-8"));
  EXPECT_FALSE(check_text("line 1\nline 2\ttab"));
  EXPECT_TRUE(refused(check_text("bell\x07"), "control character"));
  EXPECT_TRUE(refused(check_no_reloader_reference("a-$(POD_NAME)"), "\"$(POD_NAME)\""));
  EXPECT_FALSE(check_no_reloader_reference("$1 and ${1} and $(not a name) and $()"));
  EXPECT_EQ(describe("a\"b\n"), "\"a\\\"b\\n\"");
  EXPECT_EQ(describe(std::string(100, 'x')).size(), 80u + 2 + 3);
}

TEST(Urls, SchemesHostsAndPorts) {
  EXPECT_FALSE(check_url("https://prometheus.example.com/api/v1/write"));
  EXPECT_FALSE(check_url("http://[::1]:9090/push"));
  EXPECT_TRUE(refused(check_url("prometheus:9090/api/v1/write"), "not allowed here"));
  EXPECT_TRUE(refused(check_url("ftp://x/y"), "use http or https"));
  EXPECT_TRUE(refused(check_url("http:///path"), "has no host"));
  EXPECT_TRUE(refused(check_url("not a url"), "contains a space"));
  EXPECT_TRUE(refused(check_url("http://x:99999/"), "not in 1..65535"));
  EXPECT_TRUE(refused(check_url(""), "empty"));
  EXPECT_TRUE(refused(check_url("http://u:p@x/", {.refuse_password = true}), "password"));
  EXPECT_FALSE(check_url("socks5://proxy:1080", {.schemes = kProxySchemes}));
  EXPECT_FALSE(check_host_port("blackbox-exporter.monitoring.svc:9115"));
  EXPECT_FALSE(check_host_port("10.0.0.1"));
  EXPECT_FALSE(check_host_port("[fe80::1]:9115"));
  EXPECT_TRUE(refused(check_host_port("http://blackbox:9115"), "without a scheme or path"));
  EXPECT_TRUE(refused(check_host_port("blackbox:0"), "not in 1..65535"));
  EXPECT_TRUE(refused(check_host_port(":9115"), "has no host"));
  EXPECT_FALSE(check_url_or_host_port("kubernetes.default.svc:443"));
  EXPECT_FALSE(check_url_or_host_port("https://10.0.0.1:6443"));
}

TEST(Loki, LevelsFormatsSelectorsSizes) {
  EXPECT_FALSE(check_log_level("warn"));
  EXPECT_TRUE(refused(check_log_level("warning"), "debug, info, warn or error"));
  EXPECT_TRUE(refused(check_log_format("text"), "logfmt or json"));
  EXPECT_FALSE(check_logql_selector("{app=\"web\"}"));
  EXPECT_FALSE(check_logql_selector("{app=\"web\", level=~\"warn|error\"} |= \"timeout\" != `x`"));
  EXPECT_FALSE(check_logql_selector("{app=\"web\"} | json | level=\"error\""));
  EXPECT_TRUE(refused(check_logql_selector("app=web"), "must start with {"));
  EXPECT_TRUE(refused(check_logql_selector("{}"), "at least one matcher"));
  EXPECT_TRUE(refused(check_logql_selector("{app=web}"), "quoted value"));
  EXPECT_TRUE(refused(check_logql_selector("{app=~\"(?=x)\"}"), "does not compile"));
  EXPECT_TRUE(refused(check_logql_selector("{app=\"x\"} |= "), "quoted string"));
  EXPECT_TRUE(refused(check_logql_selector("{app=\"x\"} |"), "empty pipeline stage"));
  EXPECT_FALSE(check_byte_size("10KB"));
  EXPECT_FALSE(check_byte_size("1 MiB"));
  EXPECT_FALSE(check_byte_size("1024"));
  EXPECT_TRUE(refused(check_byte_size("10 apples"), "not a size"));
  EXPECT_TRUE(refused(check_template_text("{{ .Value "), "unclosed {{"));
  EXPECT_FALSE(check_template_text("{{ ToUpper .Value }}"));
}

}  // namespace aop::validation
