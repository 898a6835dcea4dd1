// The render entry and the options: everything from a list of objects, problems and
// notes for stderr, and the option checks start-up relies on.
#include "reconcile/telegraf/render.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reconcile/telegraf/options.hpp"
#include "tests/telegraf/fixtures.hpp"

namespace aop::telegraf {
namespace {

namespace json = boost::json;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::make_application;
using testing::make_namespace;
using testing::read_golden;
using ::testing::SizeIs;

std::vector<std::string> kinds_and_places(const RenderResult& r) {
  std::vector<std::string> out;
  for (const auto& o : r.objects) {
    const auto& meta = o.at("metadata").as_object();
    out.push_back(std::string(o.at("kind").as_string()) + " " +
                  std::string(meta.at("namespace").as_string()) + "/" +
                  std::string(meta.at("name").as_string()));
  }
  return out;
}

TEST(Render, TechnoteApplicationGivesTheGoldenConfig) {
  std::vector<json::value> in{make_application("argocd", "argocd", "argocd", R"(
- application_controller: "http://argocd-application-controller-metrics.argocd.svc:8082/metrics"
- repo_server: "http://argocd-repo-server-metrics.argocd.svc:8084/metrics"
)")};
  RenderResult r = render(in, {});
  EXPECT_THAT(r.problems, IsEmpty());
  ASSERT_THAT(r.objects, SizeIs(2));  // no token Secret configured
  EXPECT_EQ(r.objects[0].at("data").at("telegraf.conf").as_string(),
            read_golden("list_shape.toml"));
}

TEST(Render, EverythingValidIsPrintedAndEveryProblemReported) {
  TelegrafOptions o;
  o.token_secret = SecretKeyRef{"telegraf", "influx", "token"};
  std::vector<json::value> in{
      make_namespace("zeta", "z: http://z/"),
      make_namespace("quiet", std::nullopt),
      make_application("argocd", "lost", std::nullopt, "l: http://l/"),
      make_application("argocd", "broken", "alpha", "- bad name: http://x/"),
      make_namespace("alpha", "- a: http://a/\n- dup: http://one/\n"),
      make_application("argocd", "alpha", "alpha", "dup: http://two/"),
      make_application("elsewhere", "x", "x", "x: http://x/"),
      json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}})"),
  };
  RenderResult r = render(in, o);
  EXPECT_THAT(kinds_and_places(r),
              ElementsAre("ConfigMap alpha/rubin-telegraf", "Secret alpha/rubin-telegraf-token",
                          "Deployment alpha/rubin-telegraf", "ConfigMap zeta/rubin-telegraf",
                          "Secret zeta/rubin-telegraf-token", "Deployment zeta/rubin-telegraf"));
  std::vector<std::string> problems;
  for (const auto& p : r.problems)
    problems.push_back(std::string(reason_name(p.reason)) + " " + p.source.str());
  EXPECT_THAT(problems, ElementsAre("MissingDestination Application/argocd/lost",
                                    "InvalidAnnotation Application/argocd/broken",
                                    "EndpointConflict Namespace/alpha",
                                    "EndpointConflict Application/argocd/alpha"));
  // alpha: held by the broken Application in a cluster, but render shows the valid part.
  const auto& alpha_conf = r.objects[0].at("data").at("telegraf.conf").as_string();
  EXPECT_THAT(std::string(alpha_conf),
              AllOf(HasSubstr("prometheus_a\""), ::testing::Not(HasSubstr("dup"))));
  EXPECT_THAT(r.notes, SizeIs(2));
  EXPECT_THAT(r.notes[0], HasSubstr("Application/elsewhere/x"));
  EXPECT_THAT(r.notes[1], HasSubstr("Deployment"));
}

TEST(Render, NothingAnnotatedNothingPrinted) {
  std::vector<json::value> in{make_namespace("a", std::nullopt)};
  RenderResult r = render(in, {});
  EXPECT_THAT(r.objects, IsEmpty());
  EXPECT_THAT(r.problems, IsEmpty());
}

TEST(Render, ProblemsNeverCarryTheToken) {
  TelegrafOptions o;
  o.token_secret = SecretKeyRef{"telegraf", "influx", "token"};
  std::vector<json::value> in{make_namespace("a", "- x: http://x/\n- bad: ftp://y/\n"),
                              make_namespace("b", "x: http://x/")};
  RenderResult r = render(in, o, "TOKEN-VALUE-123");
  ASSERT_THAT(r.problems, SizeIs(1));
  for (const auto& p : r.problems)
    EXPECT_THAT(p.message, ::testing::Not(HasSubstr("TOKEN-VALUE-123")));
  for (const auto& n : r.notes) EXPECT_THAT(n, ::testing::Not(HasSubstr("TOKEN-VALUE-123")));
}

TEST(Options, DefaultsAreValid) {
  EXPECT_THAT(validate_options({}), IsEmpty());
}

TEST(Options, EveryCheckNamesItsOption) {
  TelegrafOptions o;
  o.application_namespaces = {"Bad_NS"};
  o.cluster_name = "";
  o.interval = "2 minutes";
  o.flush_interval = "0s";
  o.collection_jitter = "-1s";
  o.metric_batch_size = 0;
  o.metric_buffer_limit = -1;
  o.influxdb_url = "influx:8086";
  o.influxdb_org = "org${X}";
  o.image = "";
  o.resources.cpu_limit = "";
  o.run_as_user = 0;
  o.managed_by = "";
  auto errors = validate_options(o);
  auto has = [&](std::string_view s) {
    return std::any_of(errors.begin(), errors.end(),
                       [&](const std::string& e) { return e.find(s) != std::string::npos; });
  };
  for (std::string_view option :
       {"application namespace \"Bad_NS\"", "cluster name is empty", "interval: unknown unit",
        "flush interval: \"0s\" must be positive",
        "collection jitter: \"-1s\" must be zero or positive", "metric batch size",
        "metric buffer limit", "InfluxDB URL", "InfluxDB organization", "image", "resource",
        "run-as user", "managed-by"}) {
    EXPECT_TRUE(has(option)) << option << "\n" << ::testing::PrintToString(errors);
  }
  TelegrafOptions all;
  all.all_application_namespaces = true;
  all.application_namespaces = {"Bad_NS"};  // ignored
  EXPECT_THAT(validate_options(all), IsEmpty());
}

TEST(Options, SecretKeyRef) {
  auto ref = parse_secret_key_ref("telegraf/influxdb-token:admin-token");
  ASSERT_TRUE(ref);
  EXPECT_EQ(*ref, (SecretKeyRef{"telegraf", "influxdb-token", "admin-token"}));
  EXPECT_EQ(ref->str(), "telegraf/influxdb-token:admin-token");
  for (std::string_view bad :
       {"", "name:key", "ns/name", "ns/:key", "ns/name:", "NS/name:key", ":/x"}) {
    auto r = parse_secret_key_ref(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_THAT(r.error().message, HasSubstr("namespace")) << bad;
    }
  }
}

}  // namespace
}  // namespace aop::telegraf
