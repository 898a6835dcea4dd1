// The API client's verbs against the test cluster (tests/k8s/cluster.hpp: kube-sim, and
// the real kube-apiserver in k8s_sim_tests.kube-apiserver). The fault-injection cases
// (ApiClientKubeSimOnly) run on kube-sim only.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/kubeconfig.hpp"
#include "net/metrics.hpp"
#include "tests/k8s/async_helpers.hpp"
#include "tests/k8s/cluster.hpp"
#include "tests/k8s/sim_fixture.hpp"

namespace json = boost::json;
using namespace aop::k8s;
namespace tst = aop::testing;
namespace net = aop::net;

namespace {

using aop::testing::kConfigMap;

json::value configmap(const std::string& ns, const std::string& name, const std::string& v) {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", {{"namespace", ns}, {"name", name}, {"labels", {{"app", "x"}}}}},
                      {"data", {{"v", v}}}};
}

class ApiClientSim : public ::testing::Test {
 protected:
  ApiClientSim() {
    ApiClientOptions o;
    o.user_agent = "api-client-test";
    o.qps = 0;  // unlimited
    o.retry_backoff.initial = std::chrono::milliseconds(10);
    o.retry_backoff.cap = std::chrono::milliseconds(100);
    client = make_api_client(io.executor(), cluster->client_config(), o);
  }
  ~ApiClientSim() override {
    client.reset();
    io.stop();
  }

  std::unique_ptr<tst::Cluster> cluster = tst::start_cluster({{}, {"--seed", "11"}});
  tst::TestObjects objects{*cluster};
  const std::string ns = objects.test_namespace("api");
  tst::IoThreads io;
  std::unique_ptr<ApiClient> client;
};

// The cases that need kube-sim's fault injection.
class ApiClientKubeSimOnly : public ApiClientSim {
 protected:
  tst::KubeSim& sim = tst::require_kube_sim(*cluster);
};

}  // namespace

TEST_F(ApiClientSim, CreateGetUpdatePatchDelete) {
  auto created = io.run(client->create(configmap(ns, "a", "1")));
  ASSERT_TRUE(created) << created.error().describe();
  const std::string rv1(created->at("metadata").at("resourceVersion").as_string());
  EXPECT_FALSE(created->at("metadata").at("uid").as_string().empty());

  auto dup = io.run(client->create(configmap(ns, "a", "1")));
  ASSERT_FALSE(dup);
  EXPECT_TRUE(dup.error().already_exists()) << dup.error().describe();

  auto got = io.run(client->get(kConfigMap, {ns, "a"}));
  ASSERT_TRUE(got) << got.error().describe();
  EXPECT_EQ(got->at("data").at("v"), "1");

  // Update with the current resourceVersion succeeds; a stale one conflicts.
  json::value next = *got;
  next.at("data").at("v") = "2";
  auto updated = io.run(client->update(next));
  ASSERT_TRUE(updated) << updated.error().describe();
  EXPECT_NE(updated->at("metadata").at("resourceVersion").as_string(), rv1);
  auto stale = io.run(client->update(next));
  ASSERT_FALSE(stale);
  EXPECT_TRUE(stale.error().conflict());
  EXPECT_EQ(stale.error().reason, "Conflict");

  auto merged = io.run(
      client->patch(kConfigMap, {ns, "a"}, PatchType::merge, json::parse(R"({"data":{"w":"3"}})")));
  ASSERT_TRUE(merged) << merged.error().describe();
  EXPECT_EQ(merged->at("data").at("v"), "2");
  EXPECT_EQ(merged->at("data").at("w"), "3");
  auto jp = io.run(client->patch(kConfigMap, {ns, "a"}, PatchType::json,
                                 json::parse(R"([{"op":"remove","path":"/data/w"}])")));
  ASSERT_TRUE(jp) << jp.error().describe();
  EXPECT_FALSE(jp->at("data").as_object().contains("w"));

  // Delete with a wrong uid precondition is refused; then deleted for real.
  DeleteOptions wrong;
  wrong.precondition_uid = "not-the-uid";
  auto refused = io.run(client->remove(kConfigMap, {ns, "a"}, wrong));
  ASSERT_FALSE(refused);
  EXPECT_TRUE(refused.error().conflict()) << refused.error().describe();
  DeleteOptions right;
  right.propagation = PropagationPolicy::background;
  right.precondition_uid = std::string(jp->at("metadata").at("uid").as_string());
  auto removed = io.run(client->remove(kConfigMap, {ns, "a"}, right));
  ASSERT_TRUE(removed) << removed.error().describe();
  auto gone = io.run(client->get(kConfigMap, {ns, "a"}));
  ASSERT_FALSE(gone);
  EXPECT_TRUE(gone.error().not_found());
  EXPECT_EQ(gone.error().reason, "NotFound");
}

TEST_F(ApiClientSim, ListPagesAndMetadataOnly) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(io.run(client->create(configmap(ns, "cm" + std::to_string(i), "v"))));
  }
  ListOptions o;
  o.limit = 2;
  auto first = io.run(client->list_page(kConfigMap, ns, o, ""));
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_EQ(first->items.size(), 2u);
  EXPECT_FALSE(first->continue_token.empty());

  auto all = io.run(client->list(kConfigMap, ns, o));
  ASSERT_TRUE(all) << all.error().describe();
  EXPECT_EQ(all->items.size(), 7u);
  EXPECT_FALSE(all->resource_version.empty());

  o.metadata_only = true;
  o.label_selector = "app=x";
  auto md = io.run(client->list(kConfigMap, "", o));
  ASSERT_TRUE(md) << md.error().describe();
  ASSERT_EQ(md->items.size(), 7u);
  EXPECT_FALSE(md->items[0].as_object().contains("data"));
  EXPECT_TRUE(md->items[0].at("metadata").as_object().contains("name"));

  o.label_selector = "app=nothing";
  EXPECT_TRUE(io.run(client->list(kConfigMap, "", o))->items.empty());
}

TEST_F(ApiClientSim, WatchDeliversEventsFromAResourceVersion) {
  auto list = io.run(client->list(kConfigMap, ns, {}));
  ASSERT_TRUE(list);
  WatchOptions w;
  w.resource_version = list->resource_version;
  w.timeout = std::chrono::seconds(30);
  auto stream = io.run(client->watch(kConfigMap, ns, w));
  ASSERT_TRUE(stream) << stream.error().describe();
  ASSERT_TRUE(io.run(client->create(configmap(ns, "w", "1"))));
  ASSERT_TRUE(io.run(client->remove(kConfigMap, {ns, "w"})));
  auto e1 = io.run((*stream)->next());
  ASSERT_TRUE(e1) << e1.error().describe();
  EXPECT_EQ(e1->type, WatchEvent::Type::added);
  EXPECT_EQ(e1->object.at("metadata").at("name"), "w");
  auto e2 = io.run((*stream)->next());
  ASSERT_TRUE(e2) << e2.error().describe();
  EXPECT_EQ(e2->type, WatchEvent::Type::deleted);
  (*stream)->close();
  auto after = io.run((*stream)->next());
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().transport, boost::asio::error::operation_aborted);
}

TEST_F(ApiClientKubeSimOnly, WatchFromAnExpiredResourceVersionIsGone) {
  sim.set_faults(R"({"gone_next_watch": 1})");
  WatchOptions w;
  w.resource_version = "1";
  auto stream = io.run(client->watch(kConfigMap, ns, w));
  ASSERT_FALSE(stream);
  EXPECT_TRUE(stream.error().gone()) << stream.error().describe();
}

TEST_F(ApiClientKubeSimOnly, ReadsRetryServerErrorsAndThrottlingWritesDoNot) {
  sim.set_faults(R"({"http_500": 1.0})");
  auto failed = io.run(client->get(kConfigMap, {ns, "nope"}));
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, 500);
  const auto faults_after_get = sim.stats().at("faults").at("http_500").to_number<int>();
  EXPECT_EQ(faults_after_get, 6) << "a GET is tried once and retried five times";
  auto create = io.run(client->create(configmap(ns, "x", "1")));
  ASSERT_FALSE(create);
  EXPECT_EQ(sim.stats().at("faults").at("http_500").to_number<int>(), faults_after_get + 1)
      << "a POST that failed with 500 is not retried";

  // 429 with Retry-After: retried for every verb, and honoured. (Six 429s in a row
  // would exhaust the retries: at 30 % that is rare, and kube-sim's seeded fault
  // draws make this sequential run repeatable.)
  sim.set_faults(R"({"reset": true, "http_429": 0.3, "retry_after_seconds": 0})");
  for (int i = 0; i < 10; ++i) {
    auto r = io.run(client->create(configmap(ns, "t" + std::to_string(i), "1")));
    ASSERT_TRUE(r) << "create " << i << ": " << r.error().describe();
  }
  EXPECT_GT(sim.stats().at("faults").at("http_429").to_number<int>(), 0);
  sim.clear_faults();

  // Metrics were recorded with client-go's names.
  const auto text = net::metrics::registry().expose();
  EXPECT_NE(text.find("rest_client_requests_total{code=\"500\",method=\"GET\""), std::string::npos);
  EXPECT_NE(text.find("rest_client_requests_total{code=\"429\",method=\"POST\""),
            std::string::npos);
  EXPECT_NE(text.find("rest_client_request_duration_seconds_bucket{verb=\"GET\""),
            std::string::npos);
  EXPECT_NE(text.find("rest_client_rate_limiter_duration_seconds"), std::string::npos);
}

TEST_F(ApiClientSim, DiscoveryFindsCustomResourcesInstalledLater) {
  const GroupVersionKind widget{"example.com", "v1", "Widget"};
  EXPECT_FALSE(client->registry().find(widget));
  auto crd = json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
      "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
      "versions": [{"name": "v1", "served": true, "storage": true,
        "subresources": {"status": {}},
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})");
  ASSERT_TRUE(io.run(client->create(crd)));
  ASSERT_TRUE(tst::wait_until([&] {
    auto r = io.run(client->discover());
    return r && client->registry().find(widget).has_value();
  })) << "the CRD's kind never appeared in discovery";
  const auto info = client->registry().find(widget);
  EXPECT_EQ(info->resource, "widgets");
  EXPECT_TRUE(info->namespaced);
  EXPECT_TRUE(info->has_status);

  auto w = io.run(client->create(json::parse(
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":")" +
      ns + R"("},"spec":{"size":1}})")));
  ASSERT_TRUE(w) << w.error().describe();
  json::value with_status = *w;
  with_status.as_object()["status"] = json::object{{"ready", true}};
  auto st = io.run(client->update_status(with_status));
  ASSERT_TRUE(st) << st.error().describe();
  EXPECT_EQ(st->at("status").at("ready"), true);

  auto unknown = io.run(client->get({"nope.io", "v1", "Thing"}, {ns, "x"}));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, 0);
  EXPECT_NE(unknown.error().message.find("is its CustomResourceDefinition installed"),
            std::string::npos);
}

TEST(ApiClientAuth, RotatedTokenFileIsPickedUp) {
  // With authentication required (kube-sim: --rbac and an administrator token).
  auto cluster = tst::start_cluster({{}, {}, true});
  tst::IoThreads io(1);
  char tmpl[] = "/tmp/aop-token-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/token";
  { std::ofstream(path) << "first-token\n"; }
  net::FakeClock clock;
  auto config = cluster->client_config();
  const std::string good = config.token->token().value();
  config.token = make_file_token_source(path, clock);
  auto client = make_api_client(io.executor(), config, {});

  auto denied = io.run(client->get(kConfigMap, {"default", "x"}));
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code, 401) << denied.error().describe();

  // The token is rotated on disk; the client uses it once the refresh period passed.
  { std::ofstream(path) << good << "\n"; }
  auto still = io.run(client->get(kConfigMap, {"default", "x"}));
  EXPECT_EQ(still.error().code, 401) << "re-read before the refresh period";
  clock.advance(std::chrono::seconds(61));
  auto allowed = io.run(client->get(kConfigMap, {"default", "x"}));
  ASSERT_FALSE(allowed);
  EXPECT_TRUE(allowed.error().not_found()) << allowed.error().describe();
  std::filesystem::remove_all(tmpl);
}
