// The annotation value: the three shapes, every validation rule, and the technote's
// own (mis-indented) example.
#include "reconcile/telegraf/annotation.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace aop::telegraf {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

std::vector<Endpoint> ok(std::string_view yaml) {
  AnnotationParse p = parse_annotation(yaml);
  EXPECT_TRUE(p.ok()) << p.summary(100);
  return p.endpoints;
}

// The one error the annotation produces (asserting there is exactly one).
std::string error(std::string_view yaml) {
  AnnotationParse p = parse_annotation(yaml);
  EXPECT_TRUE(p.endpoints.empty());
  EXPECT_THAT(p.errors, SizeIs(1)) << p.summary(100);
  return p.errors.empty() ? std::string{} : p.errors.front();
}

Endpoint plain(std::string name, std::string url) {
  Endpoint e;
  e.name = std::move(name);
  e.url = std::move(url);
  return e;
}

// --- shapes -------------------------------------------------------------------------

TEST(AnnotationShapes, ListOfSingleKeyMapsAsInTheTechnote) {
  auto eps = ok(
      R"(- application_controller: "http://argocd-application-controller-metrics.argocd.svc:8082/metrics"
- repo_server: "http://argocd-repo-server-metrics.argocd.svc:8084/metrics"
)");
  EXPECT_THAT(
      eps, ElementsAre(
               plain("application_controller",
                     "http://argocd-application-controller-metrics.argocd.svc:8082/metrics"),
               plain("repo_server", "http://argocd-repo-server-metrics.argocd.svc:8084/metrics")));
}

TEST(AnnotationShapes, UrlOnTheNextLineIndentedUnderTheName) {
  // The technote writes each URL on its own line, indented under its name.
  auto eps =
      ok("- application_controller:\n    \"http://a.argocd.svc:8082/metrics\"\n"
         "- notifications_controller:\n   \"http://n.argocd.svc:9001/metrics\"\n");
  EXPECT_THAT(eps,
              ElementsAre(plain("application_controller", "http://a.argocd.svc:8082/metrics"),
                          plain("notifications_controller", "http://n.argocd.svc:9001/metrics")));
}

TEST(AnnotationShapes, OneMapKeepsDocumentOrder) {
  auto eps = ok("zeta: http://z/metrics\nalpha: http://a/metrics\nmid: 'http://m/metrics'\n");
  EXPECT_THAT(eps,
              ElementsAre(plain("zeta", "http://z/metrics"), plain("alpha", "http://a/metrics"),
                          plain("mid", "http://m/metrics")));
}

TEST(AnnotationShapes, FlowStyleWorksToo) {
  EXPECT_THAT(ok("{a: 'http://a/', b: 'http://b/'}"), SizeIs(2));
  EXPECT_THAT(ok("[{a: 'http://a/'}, {b: 'http://b/'}]"), SizeIs(2));
}

TEST(AnnotationShapes, OptionMapsInAListOrAMap) {
  auto eps = ok(R"(
- hub:
    url: http://hub:8081/hub/metrics
    interval: 30s
    metric_version: 1
    tags: {tier: frontend, component: hub}
- plain: http://plain/metrics
)");
  ASSERT_THAT(eps, SizeIs(2));
  EXPECT_EQ(eps[0].name, "hub");
  EXPECT_EQ(eps[0].url, "http://hub:8081/hub/metrics");
  EXPECT_EQ(eps[0].interval, "30s");
  EXPECT_EQ(eps[0].metric_version, 1);
  using Tag = std::pair<std::string, std::string>;
  EXPECT_THAT(eps[0].tags, ElementsAre(Tag{"component", "hub"}, Tag{"tier", "frontend"}));
  EXPECT_EQ(eps[1], plain("plain", "http://plain/metrics"));
  EXPECT_EQ(eps[1].metric_version, 2);  // the default

  auto map = ok("hub: {url: 'http://hub/', metric_version: 2}\nother: http://o/\n");
  ASSERT_THAT(map, SizeIs(2));
  EXPECT_EQ(map[0].interval, std::nullopt);
}

TEST(AnnotationShapes, TagOrderInTheAnnotationDoesNotMatter) {
  auto a = ok("x: {url: 'http://x/', tags: {b: '2', a: '1'}}");
  auto b = ok("x: {url: 'http://x/', tags: {a: '1', b: '2'}}");
  EXPECT_EQ(a, b);
}

TEST(AnnotationShapes, CommentsAndExplicitStringTags) {
  auto eps = ok(
      "# endpoints\n- a: http://a/ # the API\n- b: {url: !!str http://b/, tags: {v: !!str 1}}\n");
  ASSERT_THAT(eps, SizeIs(2));
  EXPECT_EQ(eps[1].tags.front().second, "1");
}

// --- the document ---------------------------------------------------------------------

TEST(AnnotationRules, EmptyValueExplainsTheIndentation) {
  // What a manifest's `annotation: |` yields when the list under it is not indented
  // (the technote's example as printed): an empty block scalar.
  for (std::string_view empty : {"", "   ", "\n\n", "# only a comment\n"}) {
    auto e = error(empty);
    EXPECT_THAT(e, HasSubstr("empty")) << empty;
    EXPECT_THAT(e, HasSubstr("indent the list further than the annotation key")) << empty;
  }
}

TEST(AnnotationRules, TechnoteExampleWithTabsGivesAClearError) {
  // The technote's lines, with a tab where it used tabs for indentation.
  auto e = error(
      "- application_controller:\n\t\"http://a.argocd.svc:8082/metrics\"\n"
      "- redis:\n   \"http://argocd-redis-metrics.argocd.svc:9121/metrics\"\n");
  EXPECT_THAT(e, AllOf(HasSubstr("not valid YAML"), HasSubstr("line 2"), HasSubstr("tab")));
}

TEST(AnnotationRules, UrlNotIndentedUnderItsNameIsNotGuessed) {
  AnnotationParse p =
      parse_annotation("- redis:\n\"http://argocd-redis-metrics.argocd.svc:9121/metrics\"\n");
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(p.endpoints.empty());
  EXPECT_THAT(p.summary(), AllOf(HasSubstr("not valid YAML"), HasSubstr("line 2"),
                                 HasSubstr("indented further than its name")));
}

TEST(AnnotationRules, SyntaxErrorsCarryLineAndColumn) {
  EXPECT_THAT(error("- a: http://a/\nkey: value: other\n"),
              AllOf(HasSubstr("not valid YAML"), HasSubstr("line 2")));
  EXPECT_THAT(error("a: [unclosed\n"), HasSubstr("not valid YAML"));
}

TEST(AnnotationRules, OneDocumentOnly) {
  EXPECT_THAT(error("a: http://a/\n---\nb: http://b/\n"), HasSubstr("2 YAML documents"));
  // yaml-cpp 0.7 reads endless empty documents from this (LoadAll never returned and
  // filled memory: one annotation took the operator down). Found by fuzzing.
  EXPECT_THAT(error(",- app a"), HasSubstr("is not valid YAML: line 1 does not belong"));
  EXPECT_THAT(error(",- a\n"), HasSubstr("not valid YAML"));
}

TEST(AnnotationRules, OtherShapesAreNamed) {
  EXPECT_THAT(error("http://just-a-url/"),
              AllOf(HasSubstr("a string"), HasSubstr("expected a YAML list")));
  EXPECT_THAT(error("42"), HasSubstr("an integer"));
  EXPECT_THAT(error("- http://a/\n"),
              AllOf(HasSubstr("list item 1 (line 1)"), HasSubstr("single-key map")));
  EXPECT_THAT(error("- [a, b]\n"), HasSubstr("found a list"));
  EXPECT_THAT(error("- a: http://a/\n  b: http://b/\n"),
              AllOf(HasSubstr("list item 1"), HasSubstr("2 keys")));
  EXPECT_THAT(error("a: [http://a/]\n"), HasSubstr("not a list"));
  EXPECT_THAT(error("? [a, b]\n: http://a/\n"), HasSubstr("name must be a string"));
}

TEST(AnnotationRules, NoEndpointsIsAnError) {
  EXPECT_THAT(error("[]"), HasSubstr("lists no endpoints"));
  EXPECT_THAT(error("{}"), HasSubstr("lists no endpoints"));
}

TEST(AnnotationRules, EndpointNames) {
  EXPECT_THAT(error("- bad name: http://a/\n"),
              AllOf(HasSubstr("endpoint \"bad name\" (line 1)"), HasSubstr("^[A-Za-z0-9_]")));
  EXPECT_THAT(error("'[outputs.file]': http://a/\n"), HasSubstr("endpoint \"[outputs.file]\""));
  EXPECT_THAT(error("\"a\\\"]]\": http://a/\n"), HasSubstr("^[A-Za-z0-9_]"));
  EXPECT_THAT(error(std::string(64, 'n') + ": http://a/\n"), HasSubstr("64 characters"));
  EXPECT_THAT(ok(std::string(63, 'n') + ": http://a/\n"), SizeIs(1));
}

TEST(AnnotationRules, NamesAreUniqueInListAndMap) {
  EXPECT_THAT(error("- a: http://a/\n- b: http://b/\n- a: http://c/\n"),
              AllOf(HasSubstr("endpoint \"a\" (line 3)"), HasSubstr("already used on line 1"),
                    HasSubstr("unique")));
  // A YAML map with a repeated key: a JSON conversion would silently keep one.
  EXPECT_THAT(error("a: http://a/\na: http://b/\n"), HasSubstr("already used on line 1"));
}

TEST(AnnotationRules, Urls) {
  EXPECT_THAT(error("- redis:\n"),
              AllOf(HasSubstr("endpoint \"redis\" (line 1)"), HasSubstr("has no URL")));
  EXPECT_THAT(error("- redis: ~\n"), HasSubstr("has no URL"));
  EXPECT_THAT(error("- redis: 8080\n"),
              AllOf(HasSubstr("must be a string"), HasSubstr("an integer"), HasSubstr("quote it")));
  EXPECT_THAT(error("- redis: yes\n"), HasSubstr("a boolean"));
  EXPECT_THAT(error("- redis: ftp://r/\n"),
              AllOf(HasSubstr("endpoint \"redis\""), HasSubstr("url \"ftp://r/\""),
                    HasSubstr("use http or https")));
  EXPECT_THAT(error("- redis: redis.argocd.svc:9121/metrics\n"),
              HasSubstr("scheme \"redis.argocd.svc\""));
  EXPECT_THAT(error("- redis: /metrics\n"), HasSubstr("not an absolute URL"));
  EXPECT_THAT(error("- redis: http:///metrics\n"), HasSubstr("no host"));
  // Credentials are refused, and the error quotes the URL without them.
  EXPECT_THAT(error("- redis: http://u:p4ss@r/\n"),
              AllOf(HasSubstr("url \"http://REDACTED@r/\""), HasSubstr("password"),
                    Not(HasSubstr("p4ss"))));
  EXPECT_THAT(error("- redis: http://u@r/\n"), HasSubstr("the URL contains a user"));
  EXPECT_THAT(
      error("- redis: {url: 'http://r/m?token=t0k'}\n"),
      AllOf(HasSubstr("url \"http://r/m?token=REDACTED\""),
            HasSubstr("query parameter \"token\" looks like a credential"), Not(HasSubstr("t0k"))));
  EXPECT_THAT(error("- redis: {url: http://r:99999/}\n"), HasSubstr("port 99999"));
  EXPECT_THAT(error("- redis: \"http://r/${INFLUX_TOKEN}\"\n"), HasSubstr("`$`"));
}

TEST(AnnotationRules, Intervals) {
  EXPECT_EQ(ok("a: {url: 'http://a/', interval: 1m30s}")[0].interval, "1m30s");
  EXPECT_EQ(ok("a: {url: 'http://a/', interval: 500ms}")[0].interval, "500ms");
  EXPECT_THAT(error("a: {url: 'http://a/', interval: 30}"),
              AllOf(HasSubstr("endpoint \"a\""), HasSubstr("interval must be a string"),
                    HasSubstr("integer")));
  EXPECT_THAT(error("a: {url: 'http://a/', interval: '30'}"), HasSubstr("missing unit"));
  EXPECT_THAT(error("a: {url: 'http://a/', interval: 5x}"), HasSubstr("unknown unit \"x\""));
  EXPECT_THAT(error("a: {url: 'http://a/', interval: 0s}"), HasSubstr("must be positive"));
  EXPECT_THAT(error("a: {url: 'http://a/', interval: -5s}"), HasSubstr("must be positive"));
  EXPECT_THAT(error("a: {url: 'http://a/', interval: [30s]}"), HasSubstr("found a list"));
}

TEST(AnnotationRules, MetricVersion) {
  EXPECT_EQ(ok("a: {url: 'http://a/', metric_version: 1}")[0].metric_version, 1);
  EXPECT_EQ(ok("a: {url: 'http://a/', metric_version: 2}")[0].metric_version, 2);
  for (std::string_view bad : {"3", "0", "'2'", "2.0", "two", "[2]"}) {
    EXPECT_THAT(
        error("a: {url: 'http://a/', metric_version: " + std::string(bad) + "}"),
        AllOf(HasSubstr("endpoint \"a\""), HasSubstr("metric_version must be the number 1 or 2")))
        << bad;
  }
}

TEST(AnnotationRules, Tags) {
  auto tag_error = [](std::string_view tags) {
    return error("a: {url: 'http://a/', tags: " + std::string(tags) + "}");
  };
  EXPECT_THAT(tag_error("[x]"), HasSubstr("tags must be a map"));
  EXPECT_THAT(tag_error("{'': v}"), AllOf(HasSubstr("tag \"\""), HasSubstr("key is empty")));
  EXPECT_THAT(tag_error("{k: ''}"), AllOf(HasSubstr("tag \"k\""), HasSubstr("value is empty")));
  EXPECT_THAT(tag_error("{k: }"),
              AllOf(HasSubstr("tag \"k\""), HasSubstr("must be a string"), HasSubstr("null")));
  EXPECT_THAT(tag_error("{replicas: 3}"), AllOf(HasSubstr("an integer"), HasSubstr("quote it")));
  EXPECT_THAT(tag_error("{enabled: on}"), HasSubstr("a boolean"));
  EXPECT_THAT(tag_error("{ratio: 0.5}"), HasSubstr("floating-point"));
  EXPECT_THAT(tag_error("{k: [v]}"), HasSubstr("found a list"));
  EXPECT_THAT(tag_error("{prometheus_app: other}"), HasSubstr("cannot be overridden"));
  EXPECT_THAT(tag_error("{k: \"line\\nbreak\"}"), HasSubstr("control character"));
  EXPECT_THAT(tag_error("{k: \"${INFLUX_TOKEN}\"}"), HasSubstr("`$`"));
  EXPECT_THAT(tag_error("{k: a, k: b}"), HasSubstr("given twice"));
  EXPECT_THAT(ok("a: {url: 'http://a/', tags: }"), SizeIs(1));  // null: no tags
  EXPECT_THAT(ok("a: {url: 'http://a/', tags: {'3': '3'}}")[0].tags, SizeIs(1));
  // Keys are taken as written (a value `y` would be a YAML 1.1 boolean).
  using Tag = std::pair<std::string, std::string>;
  EXPECT_THAT(ok("a: {url: 'http://a/', tags: {y: 'v', 3: 'w'}}")[0].tags,
              ElementsAre(Tag{"3", "w"}, Tag{"y", "v"}));
  EXPECT_THAT(tag_error("{[k]: v}"), HasSubstr("a tag key must be a string, found a list"));
}

TEST(AnnotationRules, OptionMaps) {
  EXPECT_THAT(error("a: {interval: 30s}"),
              AllOf(HasSubstr("endpoint \"a\""), HasSubstr("has no url")));
  EXPECT_THAT(error("a: {url: 'http://a/', intervall: 30s}"),
              AllOf(HasSubstr("unknown option \"intervall\""),
                    HasSubstr("url, interval, metric_version and tags")));
  EXPECT_THAT(error("a: {url: 'http://a/', url: 'http://b/'}"),
              HasSubstr("option \"url\" is given twice"));
}

TEST(AnnotationRules, AtMost256Endpoints) {
  auto list = [](int n) {
    std::string yaml;
    for (int i = 0; i < n; ++i)
      yaml += "- e" + std::to_string(i) + ": http://h/" + std::to_string(i) + "\n";
    return yaml;
  };
  EXPECT_THAT(ok(list(256)), SizeIs(256));
  EXPECT_THAT(error(list(257)), HasSubstr("lists 257 endpoints; at most 256"));
}

TEST(AnnotationRules, AtMost64KiB) {
  // One endpoint with a long tag value, padded to exactly 64 KiB.
  auto doc = [](std::size_t size) {
    std::string head = "a: {url: 'http://a/', tags: {k: '";
    std::string tail = "'}}";
    return head + std::string(size - head.size() - tail.size(), 'v') + tail;
  };
  EXPECT_THAT(ok(doc(kMaxAnnotationBytes)), SizeIs(1));
  EXPECT_THAT(error(doc(kMaxAnnotationBytes + 1)), HasSubstr("65537 bytes; at most 65536"));
}

TEST(AnnotationRules, AliasesCannotExpandPastTheLimit) {
  // 200 endpoints each referring to one 300-byte tag map: 60 KB written as ~4 KB.
  std::string yaml = "- e0: {url: 'http://h/', tags: &t {k: '" + std::string(300, 'x') + "'}}\n";
  for (int i = 1; i < 256; ++i) {
    yaml += "- e" + std::to_string(i) + ": {url: 'http://h/', tags: *t}\n";
  }
  ASSERT_LT(yaml.size(), 64u * 1024);
  EXPECT_THAT(parse_annotation(yaml).summary(), HasSubstr("expands (through YAML aliases)"));
}

TEST(AnnotationRules, InvalidUtf8) {
  EXPECT_THAT(error("a: \"http://a/\xFF\""), HasSubstr("not valid UTF-8"));
}

TEST(AnnotationRules, EveryErrorIsReportedAndNothingIsKept) {
  AnnotationParse p = parse_annotation(R"(- good: http://good/
- bad name: http://x/
- worse: ftp://x/
- good: http://dup/
- opts: {url: 'http://o/', metric_version: 7, interval: soon}
)");
  EXPECT_TRUE(p.endpoints.empty());  // all or nothing
  EXPECT_THAT(p.errors, SizeIs(5));
  EXPECT_THAT(p.errors[0], HasSubstr("\"bad name\" (line 2)"));
  EXPECT_THAT(p.errors[1], HasSubstr("\"worse\" (line 3)"));
  EXPECT_THAT(p.errors[2], HasSubstr("\"good\" (line 4)"));
  EXPECT_THAT(p.summary(2), HasSubstr("(and 3 more)"));
}

}  // namespace
}  // namespace aop::telegraf
