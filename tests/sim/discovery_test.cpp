// Discovery documents (legacy and aggregated) and the OpenAPI v3 index kubectl reads.
#include "tests/sim/sim_fixture.hpp"

namespace aop::sim::testing {
namespace {

class Discovery : public SimTest {};

TEST_F(Discovery, LegacyDocuments) {
  auto version = get("/version");
  EXPECT_EQ(version.at("major"), "1");
  EXPECT_EQ(version.at("gitVersion"), "v1.32.0");
  auto api = get("/api");
  EXPECT_EQ(api.at("kind"), "APIVersions");
  EXPECT_EQ(api.at("versions"), json::array{"v1"});
  auto core = get("/api/v1");
  EXPECT_EQ(core.at("kind"), "APIResourceList");
  EXPECT_EQ(core.at("groupVersion"), "v1");
  std::set<std::string> names;
  for (const auto& r : core.at("resources").as_array())
    names.insert(std::string(r.at("name").as_string()));
  for (const char* r : {"namespaces", "namespaces/status", "secrets", "configmaps", "services",
                        "endpoints", "events", "pods", "pods/status", "nodes"}) {
    EXPECT_TRUE(names.contains(r)) << r;
  }
  auto groups = get("/apis");
  std::set<std::string> gnames;
  for (const auto& g : groups.at("groups").as_array())
    gnames.insert(std::string(g.at("name").as_string()));
  for (const char* g : {"apps", "coordination.k8s.io", "events.k8s.io", "apiextensions.k8s.io"}) {
    EXPECT_TRUE(gnames.contains(g)) << g;
  }
  auto apps = get("/apis/apps/v1");
  EXPECT_EQ(apps.at("groupVersion"), "apps/v1");
  auto group = get("/apis/coordination.k8s.io");
  EXPECT_EQ(group.at("kind"), "APIGroup");
  EXPECT_EQ(group.at("preferredVersion").at("groupVersion"), "coordination.k8s.io/v1");
}

TEST_F(Discovery, AggregatedWhenAsked) {
  auto r =
      call("GET", "/apis", "", "",
           "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  auto doc = body(r);
  EXPECT_EQ(doc.at("kind"), "APIGroupDiscoveryList");
  bool saw_deployments = false;
  for (const auto& g : doc.at("items").as_array()) {
    if (g.at("metadata").at("name") != "apps") continue;
    for (const auto& res : g.at("versions").at(0).at("resources").as_array()) {
      if (res.at("resource") == "deployments") {
        saw_deployments = true;
        EXPECT_EQ(res.at("scope"), "Namespaced");
        EXPECT_EQ(res.at("responseKind").at("kind"), "Deployment");
        EXPECT_EQ(res.at("subresources").at(0).at("subresource"), "status");
      }
    }
  }
  EXPECT_TRUE(saw_deployments);
  auto core = body(call("GET", "/api", "", "",
                        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"));
  EXPECT_EQ(core.at("items").as_array().size(), 1u);
}

TEST_F(Discovery, OpenApiV3AdvertisesServerSideFieldValidation) {
  auto index = get("/openapi/v3");
  const auto& paths = index.at("paths").as_object();
  ASSERT_TRUE(paths.contains("api/v1"));
  ASSERT_TRUE(paths.contains("apis/apps/v1"));
  const std::string url(paths.at("apis/apps/v1").at("serverRelativeURL").as_string());
  EXPECT_TRUE(url.starts_with("/openapi/v3/apis/apps/v1?hash="));
  auto doc = get(url);
  const auto& op =
      doc.at("paths").at("/apis/apps/v1/namespaces/{namespace}/deployments/{name}").at("patch");
  EXPECT_EQ(op.at("x-kubernetes-group-version-kind").at("kind"), "Deployment");
  bool has_param = false;
  for (const auto& p : op.at("parameters").as_array()) {
    if (p.at("name") == "fieldValidation" && p.at("in") == "query") has_param = true;
  }
  EXPECT_TRUE(has_param);
  EXPECT_EQ(call("GET", "/openapi/v2").status, 404);
}

TEST_F(Discovery, HealthEndpoints) {
  auto r = call("GET", "/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body_string(), "ok");
}

}  // namespace
}  // namespace aop::sim::testing
