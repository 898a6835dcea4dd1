// Lists: label and field selectors, pagination with consistent snapshots, list
// resourceVersion semantics, metadata-only lists.
#include "tests/sim/sim_fixture.hpp"

namespace aop::sim::testing {
namespace {

class Lists : public SimTest {
 protected:
  void SetUp() override {
    make_cm("a", {{"app", "web"}, {"tier", "front"}});
    make_cm("b", {{"app", "web"}, {"tier", "back"}});
    make_cm("c", {{"app", "db"}});
    make_cm("d", {});
  }
  std::vector<std::string> select(const std::string& selector) {
    auto r = call("GET", "/api/v1/namespaces/default/configmaps?labelSelector=" + selector);
    EXPECT_EQ(r.status, 200) << selector << ": " << r.body_string();
    return r.status == 200 ? names(body(r)) : std::vector<std::string>{};
  }
  using V = std::vector<std::string>;
};

TEST_F(Lists, LabelSelectorFullSyntax) {
  EXPECT_EQ(select("app%3Dweb"), (V{"a", "b"}));
  EXPECT_EQ(select("app%3D%3Dweb"), (V{"a", "b"}));
  EXPECT_EQ(select("app!%3Dweb"), (V{"c", "d"}));  // != also matches objects without the label
  EXPECT_EQ(select("app+in+(web,db)"), (V{"a", "b", "c"}));
  EXPECT_EQ(select("app%20notin%20(web)"), (V{"c", "d"}));
  EXPECT_EQ(select("tier"), (V{"a", "b"}));
  EXPECT_EQ(select("!tier"), (V{"c", "d"}));
  EXPECT_EQ(select("app%3Dweb,tier%3Dback"), (V{"b"}));
  auto bad = call("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%3D%3D%3D");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(body(bad).at("reason"), "BadRequest");
}

TEST_F(Lists, FieldSelectors) {
  auto byname = get("/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Db");
  EXPECT_EQ(names(byname), (V{"b"}));
  auto notname =
      get("/api/v1/configmaps?fieldSelector=metadata.name!%3Db,metadata.namespace%3Ddefault");
  EXPECT_EQ(names(notname), (V{"a", "c", "d"}));
  post("/api/v1/namespaces/default/secrets",
       json::parse(R"({"metadata":{"name":"tls"},"type":"kubernetes.io/tls","data":{}})"));
  post("/api/v1/namespaces/default/secrets", json::parse(R"({"metadata":{"name":"plain"}})"));
  auto tls = get("/api/v1/secrets?fieldSelector=type%3Dkubernetes.io/tls");
  EXPECT_EQ(names(tls), (V{"tls"}));
  // Worded as kube-apiserver v1.24 words them: the generic registry for ConfigMaps, the
  // field conversion of Secrets.
  auto r = call("GET", "/api/v1/namespaces/default/configmaps?fieldSelector=data.k%3Dv");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r).at("message"),
            "\"data.k\" is not a known field selector: only \"metadata.name\", "
            "\"metadata.namespace\"");
  r = call("GET", "/api/v1/namespaces/default/secrets?fieldSelector=data.k%3Dv");
  EXPECT_EQ(body(r).at("message"), "field label not supported: data.k");
}

TEST_F(Lists, ListCarriesKindApiVersionAndResourceVersion) {
  auto l = get("/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(l.at("kind"), "ConfigMapList");
  EXPECT_EQ(l.at("apiVersion"), "v1");
  EXPECT_EQ(l.at("metadata").at("resourceVersion"), json::value(std::to_string(api_.store().rv())));
  EXPECT_FALSE(l.at("metadata").as_object().contains("continue"));
  // Items carry their own kind and apiVersion.
  EXPECT_EQ(l.at("items").at(0).at("kind"), "ConfigMap");
  auto empty = get("/api/v1/namespaces/kube-public/configmaps");
  EXPECT_TRUE(empty.at("items").as_array().empty());
  auto all = get("/api/v1/configmaps");
  EXPECT_EQ(names(all).size(), 4u);
}

TEST_F(Lists, ContinueTokensServeAConsistentSnapshot) {
  for (int i = 0; i < 6; ++i) make_cm("p" + std::to_string(i));
  // 10 objects: a b c d p0..p5
  auto page1 = get("/api/v1/namespaces/default/configmaps?limit=4");
  EXPECT_EQ(names(page1), (V{"a", "b", "c", "d"}));
  const auto snapshot_rv = page1.at("metadata").at("resourceVersion");
  const std::string cont(page1.at("metadata").at("continue").as_string());
  EXPECT_EQ(page1.at("metadata").at("remainingItemCount"), 6);

  // Changes after the first page: delete p0, add p9 and "e", modify p1.
  del("/api/v1/namespaces/default/configmaps/p0");
  make_cm("p9");
  make_cm("e");
  patch("/api/v1/namespaces/default/configmaps/p1", "application/merge-patch+json",
        json::parse(R"({"data":{"k":"new"}})"));

  auto page2 = get("/api/v1/namespaces/default/configmaps?limit=4&continue=" + cont);
  EXPECT_EQ(names(page2), (V{"p0", "p1", "p2", "p3"}));  // as of the first page
  EXPECT_EQ(page2.at("metadata").at("resourceVersion"), snapshot_rv);
  EXPECT_EQ(page2.at("items").at(1).at("data").at("k"), "v");  // p1 before the patch
  EXPECT_EQ(page2.at("metadata").at("remainingItemCount"), 2);
  const std::string cont2(page2.at("metadata").at("continue").as_string());
  auto page3 = get("/api/v1/namespaces/default/configmaps?limit=4&continue=" + cont2);
  EXPECT_EQ(names(page3), (V{"p4", "p5"}));
  EXPECT_FALSE(page3.at("metadata").as_object().contains("continue"));

  // A fresh list sees the new state.
  auto now = get("/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(names(now), (V{"a", "b", "c", "d", "e", "p1", "p2", "p3", "p4", "p5", "p9"}));
}

TEST_F(Lists, PaginationWithSelectorsHasNoRemainingCount) {
  auto page = get("/api/v1/namespaces/default/configmaps?limit=1&labelSelector=app");
  EXPECT_EQ(names(page), (V{"a"}));
  EXPECT_TRUE(page.at("metadata").as_object().contains("continue"));
  EXPECT_FALSE(page.at("metadata").as_object().contains("remainingItemCount"));
  auto rest = get("/api/v1/namespaces/default/configmaps?limit=5&labelSelector=app&continue=" +
                  std::string(page.at("metadata").at("continue").as_string()));
  EXPECT_EQ(names(rest), (V{"b", "c"}));
  EXPECT_FALSE(rest.at("metadata").as_object().contains("continue"));
}

TEST_F(Lists, InvalidContinueAndResourceVersionCombination) {
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/configmaps?continue=garbage").status, 400);
  auto page = get("/api/v1/namespaces/default/configmaps?limit=1");
  const std::string cont(page.at("metadata").at("continue").as_string());
  auto r = call("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=1&continue=" + cont);
  EXPECT_EQ(r.status, 400);
}

TEST_F(Lists, ResourceVersionZeroIgnoresLimit) {
  auto l = get("/api/v1/namespaces/default/configmaps?resourceVersion=0&limit=2");
  EXPECT_EQ(names(l).size(), 4u);
  EXPECT_FALSE(l.at("metadata").as_object().contains("continue"));
}

TEST_F(Lists, ExactResourceVersion) {
  auto before = get("/api/v1/namespaces/default/configmaps");
  const std::string rv(before.at("metadata").at("resourceVersion").as_string());
  make_cm("z");
  del("/api/v1/namespaces/default/configmaps/a");
  auto exact = get("/api/v1/namespaces/default/configmaps?resourceVersion=" + rv +
                   "&resourceVersionMatch=Exact");
  EXPECT_EQ(names(exact), (V{"a", "b", "c", "d"}));
  EXPECT_EQ(exact.at("metadata").at("resourceVersion"), json::value(rv));
  auto newer = get("/api/v1/namespaces/default/configmaps?resourceVersion=" + rv +
                   "&resourceVersionMatch=NotOlderThan");
  EXPECT_EQ(names(newer), (V{"b", "c", "d", "z"}));
  auto future = call("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=99999");
  EXPECT_EQ(future.status, 504);
  EXPECT_EQ(body(future).at("details").at("causes").at(0).at("reason"), "ResourceVersionTooLarge");
}

TEST_F(Lists, MetadataOnlyList) {
  const std::string accept =
      "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
  auto r =
      call("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dweb", "", "", accept);
  ASSERT_EQ(r.status, 200);
  auto l = body(r);
  EXPECT_EQ(l.at("kind"), "PartialObjectMetadataList");
  EXPECT_EQ(l.at("apiVersion"), "meta.k8s.io/v1");
  ASSERT_EQ(l.at("items").as_array().size(), 2u);
  const auto& item = l.at("items").at(0).as_object();
  EXPECT_EQ(item.at("kind"), "PartialObjectMetadata");
  EXPECT_EQ(item.at("apiVersion"), "meta.k8s.io/v1");
  EXPECT_EQ(item.at("metadata").at("name"), "a");
  EXPECT_EQ(item.at("metadata").at("labels").at("tier"), "front");
  EXPECT_FALSE(item.contains("data"));
  auto one = body(call("GET", "/api/v1/namespaces/default/configmaps/a", "", "",
                       "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"));
  EXPECT_EQ(one.at("kind"), "PartialObjectMetadata");
  EXPECT_FALSE(one.as_object().contains("data"));
  // Only protobuf offered: 406.
  auto pb = call("GET", "/api/v1/namespaces/default/configmaps", "", "",
                 "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(pb.status, 406);
}

TEST_F(Lists, ExpiredContinueTokenIsGone) {
  FakeTime t;
  ApiServer small(fake_options(t, /*history=*/3));
  auto create = [&](const std::string& name) {
    Request r;
    r.method = "POST";
    r.target = "/api/v1/namespaces/default/configmaps";
    r.body = json::serialize(configmap(name));
    ASSERT_EQ(small.handle(r).status, 201);
  };
  for (const char* n : {"a", "b", "c"}) create(n);
  Request list;
  list.method = "GET";
  list.target = "/api/v1/namespaces/default/configmaps?limit=1";
  auto first = json::parse(small.handle(list).body_string());
  for (const char* n : {"d", "e", "f", "g"}) create(n);  // pushes the snapshot out of history
  list.target += "&continue=" + std::string(first.at("metadata").at("continue").as_string());
  auto r = small.handle(list);
  ASSERT_EQ(r.status, 410);
  auto s = json::parse(r.body_string());
  EXPECT_EQ(s.at("reason"), "Expired");
  EXPECT_TRUE(
      s.at("message").as_string().starts_with("The provided continue parameter is too old"));
}

TEST_F(Lists, DeleteCollectionWithSelector) {
  auto r = call("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dweb");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(names(body(r)), (V{"a", "b"}));
  EXPECT_EQ(names(get("/api/v1/namespaces/default/configmaps")), (V{"c", "d"}));
}

}  // namespace
}  // namespace aop::sim::testing
