// The desired objects: labels, sources annotation, owner references, the Deployment's
// contents, the configuration hash, the token, and byte-stable output.
#include "reconcile/telegraf/objects.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reconcile/telegraf/config.hpp"
#include "reconcile/telegraf/render.hpp"
#include "tests/telegraf/fixtures.hpp"

namespace aop::telegraf {
namespace {

namespace json = boost::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::make_application;
using testing::make_namespace;
using ::testing::Not;

constexpr std::string_view kToken = "s3cr3t-InfluxDB-t0ken==";

TargetPlan plan_of(const std::vector<json::value>& objects, std::string_view ns,
                   const TelegrafOptions& o = {}) {
  std::vector<Source> sources;
  for (const auto& obj : objects) {
    SourceRead r = read_source(obj, o);
    EXPECT_TRUE(r.problems.empty()) << r.problems.front().message;
    if (r.source) sources.push_back(*r.source);
  }
  return plan_target(ns, sources);
}

TelegrafOptions with_token() {
  TelegrafOptions o;
  o.token_secret = SecretKeyRef{"telegraf", "influxdb-token", "token"};
  return o;
}

const json::value& at(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* v = nullptr;
  const json::object* cur = &o;
  for (auto key : path) {
    v = &cur->at(key);
    if (v->is_object()) cur = &v->as_object();
  }
  return *v;
}

TEST(Objects, ThreeObjectsWithLabelsAndSources) {
  auto plan = plan_of({make_namespace("nublado", "hub: http://hub/", "ns-uid"),
                       make_application("argocd", "nublado", "nublado", "proxy: http://proxy/")},
                      "nublado");
  auto built = build_objects(plan, with_token(), kToken);
  ASSERT_TRUE(built);
  auto all = built->all();
  ASSERT_EQ(all.size(), 3u);
  const std::vector<std::pair<std::string_view, std::string_view>> expected{
      {"ConfigMap", "rubin-telegraf"},
      {"Secret", "rubin-telegraf-token"},
      {"Deployment", "rubin-telegraf"}};
  for (std::size_t i = 0; i < all.size(); ++i) {
    const json::object& obj = all[i];
    EXPECT_EQ(obj.at("kind").as_string(), expected[i].first);
    EXPECT_EQ(at(obj, {"metadata", "name"}).as_string(), expected[i].second);
    EXPECT_EQ(at(obj, {"metadata", "namespace"}), "nublado");
    EXPECT_EQ(at(obj, {"metadata", "labels"}),
              json::parse(R"({"app.kubernetes.io/managed-by":"rubin-telegraf-operator",
                              "app.kubernetes.io/name":"telegraf",
                              "app.kubernetes.io/instance":"rubin-telegraf"})"));
    EXPECT_EQ(
        at(obj, {"metadata", "annotations", "telegraf.influxdata.com/rubin-telegraf-sources"}),
        "Namespace/nublado,Application/argocd/nublado");
    EXPECT_EQ(
        at(obj, {"metadata", "ownerReferences"}),
        json::parse(R"([{"apiVersion":"v1","kind":"Namespace","name":"nublado","uid":"ns-uid"}])"));
  }
  EXPECT_EQ(all[0].at("apiVersion"), "v1");
  EXPECT_EQ(all[1].at("apiVersion"), "v1");
  EXPECT_EQ(all[2].at("apiVersion"), "apps/v1");
  EXPECT_EQ(at(all[0], {"data", "telegraf.conf"}).as_string(), built->config);
}

TEST(Objects, ApplicationOnlyTargetHasNoOwnerReference) {
  auto plan = plan_of({make_application("argocd", "app", "target", "a: http://a/")}, "target");
  auto built = build_objects(plan, with_token(), kToken);
  ASSERT_TRUE(built);
  for (const auto& obj : built->all()) {
    EXPECT_FALSE(obj.at("metadata").as_object().contains("ownerReferences"));
    EXPECT_EQ(
        at(obj, {"metadata", "annotations", "telegraf.influxdata.com/rubin-telegraf-sources"}),
        "Application/argocd/app");
  }
}

TEST(Objects, DeploymentMatchesTheSpec) {
  TelegrafOptions o = with_token();
  o.image = "registry.example/telegraf:1.31.0";
  o.resources = {"100m", "128Mi", "1", "1Gi"};
  o.managed_by = "my-operator";
  auto built = build_objects(plan_of({make_namespace("ns", "a: http://a/")}, "ns", o), o, kToken);
  ASSERT_TRUE(built);
  const json::object& d = built->deployment;
  EXPECT_EQ(at(d, {"spec", "replicas"}), 1);
  EXPECT_EQ(at(d, {"spec", "selector"}),
            json::parse(R"({"matchLabels":{"app.kubernetes.io/name":"telegraf",
                                           "app.kubernetes.io/instance":"rubin-telegraf"}})"));
  EXPECT_EQ(at(d, {"spec", "template", "metadata", "labels", "app.kubernetes.io/managed-by"}),
            "my-operator");
  const json::object& pod = at(d, {"spec", "template", "spec"}).as_object();
  EXPECT_EQ(pod.at("automountServiceAccountToken"), false);
  EXPECT_EQ(pod.at("securityContext"),
            json::parse(R"({"runAsNonRoot":true,"runAsUser":999,"runAsGroup":999,
                            "seccompProfile":{"type":"RuntimeDefault"}})"));
  EXPECT_EQ(pod.at("volumes"),
            json::parse(R"([{"name":"config","configMap":{"name":"rubin-telegraf"}}])"));
  ASSERT_EQ(pod.at("containers").as_array().size(), 1u);
  const json::object& c = pod.at("containers").as_array()[0].as_object();
  EXPECT_EQ(c.at("name"), "telegraf");
  EXPECT_EQ(c.at("image"), "registry.example/telegraf:1.31.0");
  EXPECT_EQ(c.at("args"), json::parse(R"(["--config","/etc/telegraf/telegraf.conf"])"));
  EXPECT_EQ(c.at("env"), json::parse(R"([{"name":"INFLUX_TOKEN","valueFrom":{"secretKeyRef":
                                           {"name":"rubin-telegraf-token","key":"token"}}}])"));
  EXPECT_EQ(c.at("resources"), json::parse(R"({"requests":{"cpu":"100m","memory":"128Mi"},
                                                "limits":{"cpu":"1","memory":"1Gi"}})"));
  EXPECT_EQ(c.at("securityContext"),
            json::parse(R"({"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,
                            "runAsNonRoot":true,"capabilities":{"drop":["ALL"]}})"));
  EXPECT_EQ(c.at("volumeMounts"),
            json::parse(R"([{"name":"config","mountPath":"/etc/telegraf","readOnly":true}])"));
}

TEST(Objects, DefaultResources) {
  TelegrafOptions o;
  auto built =
      build_objects(plan_of({make_namespace("ns", "a: http://a/")}, "ns"), o, std::nullopt);
  ASSERT_TRUE(built);
  EXPECT_EQ(at(built->deployment, {"spec", "template", "spec", "containers"})
                .as_array()[0]
                .at("resources"),
            json::parse(R"({"requests":{"cpu":"50m","memory":"64Mi"},
                            "limits":{"cpu":"500m","memory":"256Mi"}})"));
}

TEST(Objects, TokenGoesOnlyIntoTheSecret) {
  auto plan = plan_of({make_namespace("ns", "a: http://a/")}, "ns");
  auto built = build_objects(plan, with_token(), kToken);
  ASSERT_TRUE(built);
  ASSERT_TRUE(built->secret);
  EXPECT_EQ(built->secret->at("type"), "Opaque");
  // base64("s3cr3t-InfluxDB-t0ken==")
  EXPECT_EQ(at(*built->secret, {"data", "token"}), "czNjcjN0LUluZmx1eERCLXQwa2VuPT0=");
  EXPECT_THAT(json::serialize(built->config_map), Not(HasSubstr(kToken)));
  EXPECT_THAT(json::serialize(built->deployment), Not(HasSubstr(kToken)));
  EXPECT_THAT(built->config, Not(HasSubstr(kToken)));
  EXPECT_THAT(built->config, HasSubstr("token = \"${INFLUX_TOKEN}\""));
}

TEST(Objects, Base64Padding) {
  auto plan = plan_of({make_namespace("ns", "a: http://a/")}, "ns");
  using namespace std::string_literals;
  for (const auto& [token, encoded] :
       std::vector<std::pair<std::string, std::string>>{{"", ""},
                                                        {"f", "Zg=="},
                                                        {"fo", "Zm8="},
                                                        {"foo", "Zm9v"},
                                                        {"foob", "Zm9vYg=="},
                                                        {"\xff\xfe\x00"s, "//4A"}}) {
    auto built = build_objects(plan, with_token(), token);
    ASSERT_TRUE(built);
    EXPECT_EQ(at(*built->secret, {"data", "token"}).as_string(), encoded) << token;
  }
}

TEST(Objects, NoTokenSecretConfiguredMeansNoSecretAndNoEnv) {
  TelegrafOptions o;
  auto built = build_objects(plan_of({make_namespace("ns", "a: http://a/")}, "ns"), o, kToken);
  ASSERT_TRUE(built);
  EXPECT_FALSE(built->secret);
  EXPECT_EQ(built->all().size(), 2u);
  const auto& c = at(built->deployment, {"spec", "template", "spec", "containers"}).as_array()[0];
  EXPECT_FALSE(c.as_object().contains("env"));
  EXPECT_THAT(json::serialize(built->deployment), Not(HasSubstr(kToken)));
}

TEST(Objects, TokenSecretWithoutTokenHasNoData) {
  auto built = build_objects(plan_of({make_namespace("ns", "a: http://a/")}, "ns"), with_token(),
                             std::nullopt);
  ASSERT_TRUE(built && built->secret);
  EXPECT_FALSE(built->secret->contains("data"));
}

TEST(Objects, NothingToRunNoObjects) {
  // Every endpoint conflicting leaves nothing to run.
  auto plan = plan_of({make_namespace("ns", "x: http://a/"),
                       make_application("argocd", "ns", "ns", "x: http://b/")},
                      "ns");
  EXPECT_FALSE(build_objects(plan, {}, std::nullopt));
}

TEST(ConfigHash, IsTheSha256OfTheConfig) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto built =
      build_objects(plan_of({make_namespace("ns", "a: http://a/")}, "ns"), {}, std::nullopt);
  ASSERT_TRUE(built);
  EXPECT_EQ(built->config_hash, sha256_hex(built->config));
  EXPECT_EQ(at(built->deployment, {"spec", "template", "metadata", "annotations",
                                   "telegraf.influxdata.com/rubin-telegraf-config-hash"}),
            json::value(built->config_hash));
}

std::string pod_template(const DesiredObjects& d) {
  return json::serialize(at(d.deployment, {"spec", "template"}));
}

TEST(ConfigHash, ChangesExactlyWhenTheConfigChanges) {
  const auto base = build_objects(
      plan_of({make_namespace("ns", "a: http://a/\nb: {url: 'http://b/', tags: {x: '1', y: '2'}}",
                              "u")},
              "ns"),
      with_token(), kToken);
  ASSERT_TRUE(base);

  // Endpoint order is annotation order, and it is part of the configuration.
  const auto reordered_endpoints = build_objects(
      plan_of({make_namespace("ns", "b: {url: 'http://b/', tags: {y: '2', x: '1'}}\na: http://a/",
                              "other-uid"),
               make_application("argocd", "ns", "ns", "a: http://a/")},
              "ns"),
      with_token(), "another-token");
  ASSERT_TRUE(reordered_endpoints);
  EXPECT_NE(reordered_endpoints->config, base->config);

  // A second source adding nothing new, a different token, tag order, another uid:
  // metadata may change, the pod template must not.
  const auto reordered_tags = build_objects(
      plan_of({make_namespace("ns", "a: http://a/\nb: {url: 'http://b/', tags: {y: '2', x: '1'}}",
                              "u2"),
               make_application("argocd", "ns", "ns", "a: http://a/")},
              "ns"),
      with_token(), "another-token");
  ASSERT_TRUE(reordered_tags);
  EXPECT_EQ(reordered_tags->config, base->config);
  EXPECT_EQ(pod_template(*reordered_tags), pod_template(*base));
  EXPECT_NE(json::serialize(reordered_tags->deployment.at("metadata")),
            json::serialize(base->deployment.at("metadata")));  // sources and owner changed

  // Any change of the configuration rolls the Deployment.
  for (std::string_view changed :
       {"a: http://a2/\nb: {url: 'http://b/', tags: {x: '1', y: '2'}}",
        "a: http://a/\nb: {url: 'http://b/', tags: {x: '1', y: '3'}}",
        "a: http://a/\nb: {url: 'http://b/', tags: {x: '1', y: '2'}, interval: 5s}",
        "a: http://a/\nb: {url: 'http://b/', tags: {x: '1', y: '2'}, metric_version: 1}",
        "a: http://a/\nc: {url: 'http://b/', tags: {x: '1', y: '2'}}", "a: http://a/"}) {
    auto other =
        build_objects(plan_of({make_namespace("ns", changed, "u")}, "ns"), with_token(), kToken);
    ASSERT_TRUE(other);
    EXPECT_NE(other->config_hash, base->config_hash) << changed;
    EXPECT_NE(pod_template(*other), pod_template(*base)) << changed;
  }
  TelegrafOptions flush = with_token();
  flush.flush_interval = "10s";
  auto by_option = build_objects(
      plan_of({make_namespace("ns", "a: http://a/\nb: {url: 'http://b/', tags: {x: '1', y: '2'}}",
                              "u")},
              "ns"),
      flush, kToken);
  EXPECT_NE(by_option->config_hash, base->config_hash);
}

TEST(Objects, SameInputsByteIdenticalOutput) {
  auto inputs = [] {
    return std::vector<json::value>{
        make_namespace("b", "- x: http://x/\n- y: {url: 'http://y/', tags: {k: v, a: z}}\n", "u-b"),
        make_application("argocd", "b", "b", "w: http://w/"),
        make_namespace("a", "q: http://q/", "u-a"),
    };
  };
  auto first = inputs();
  auto second = inputs();
  std::reverse(second.begin(), second.end());
  RenderResult r1 = render(first, with_token(), kToken);
  RenderResult r2 = render(second, with_token(), kToken);
  ASSERT_EQ(r1.objects.size(), r2.objects.size());
  for (std::size_t i = 0; i < r1.objects.size(); ++i) {
    EXPECT_EQ(json::serialize(r1.objects[i]), json::serialize(r2.objects[i]));
  }
}

}  // namespace
}  // namespace aop::telegraf
