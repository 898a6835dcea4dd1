// Deletion semantics: finalizers, ownerReference garbage collection (Background,
// Foreground, Orphan, dangling owners) and namespace termination.
#include "tests/sim/sim_fixture.hpp"

namespace aop::sim::testing {
namespace {

class Gc : public SimTest {
 protected:
  json::value owner(const std::string& name) { return make_cm(name); }

  json::value dependent(const std::string& name, const json::value& own,
                        json::array extra_refs = {}, json::array finalizers = {}) {
    auto obj = configmap(name);
    json::array refs{json::object{{"apiVersion", "v1"},
                                  {"kind", "ConfigMap"},
                                  {"name", own.at("metadata").at("name")},
                                  {"uid", own.at("metadata").at("uid")}}};
    for (auto& r : extra_refs) refs.push_back(r);
    obj["metadata"].as_object()["ownerReferences"] = std::move(refs);
    if (!finalizers.empty()) obj["metadata"].as_object()["finalizers"] = std::move(finalizers);
    return post("/api/v1/namespaces/default/configmaps", obj);
  }

  bool exists(const std::string& name) {
    return call("GET", "/api/v1/namespaces/default/configmaps/" + name).status == 200;
  }
};

TEST_F(Gc, BackgroundDeletionDeletesDependents) {
  auto o = owner("owner");
  dependent("dep1", o);
  dependent("dep2", o);
  del("/api/v1/namespaces/default/configmaps/owner");
  EXPECT_FALSE(exists("owner"));
  EXPECT_FALSE(exists("dep1"));
  EXPECT_FALSE(exists("dep2"));
}

TEST_F(Gc, ADependentWithAnotherLiveOwnerSurvives) {
  auto o1 = owner("o1");
  auto o2 = owner("o2");
  json::array extra{json::object{{"apiVersion", "v1"},
                                 {"kind", "ConfigMap"},
                                 {"name", "o2"},
                                 {"uid", o2.at("metadata").at("uid")}}};
  dependent("dep", o1, extra);
  del("/api/v1/namespaces/default/configmaps/o1");
  ASSERT_TRUE(exists("dep"));
  // The dangling reference is removed, as the garbage collector does.
  auto d = get("/api/v1/namespaces/default/configmaps/dep");
  ASSERT_EQ(d.at("metadata").at("ownerReferences").as_array().size(), 1u);
  EXPECT_EQ(d.at("metadata").at("ownerReferences").at(0).at("name"), "o2");
}

TEST_F(Gc, DanglingOwnerOnCreateDeletesTheDependent) {
  auto o = owner("o");
  auto fake = o;
  fake.as_object()["metadata"].as_object()["uid"] = "00000000-0000-4000-8000-000000000000";
  dependent("orphaned", fake);
  EXPECT_FALSE(exists("orphaned"));
}

TEST_F(Gc, ForegroundKeepsTheOwnerUntilDependentsAreGone) {
  auto o = owner("owner");
  dependent("dep", o, {}, json::array{"example.com/hold"});
  auto r = del("/api/v1/namespaces/default/configmaps/owner", 200,
               R"({"propagationPolicy":"Foreground"})");
  auto own = get("/api/v1/namespaces/default/configmaps/owner");
  EXPECT_TRUE(own.at("metadata").as_object().contains("deletionTimestamp"));
  EXPECT_EQ(own.at("metadata").at("finalizers"), json::array{"foregroundDeletion"});
  auto d = get("/api/v1/namespaces/default/configmaps/dep");
  EXPECT_TRUE(d.at("metadata").as_object().contains("deletionTimestamp"));  // being deleted, held
  // Releasing the dependent's finalizer lets both go.
  patch("/api/v1/namespaces/default/configmaps/dep", "application/merge-patch+json",
        json::parse(R"({"metadata":{"finalizers":null}})"));
  EXPECT_FALSE(exists("dep"));
  EXPECT_FALSE(exists("owner"));
}

TEST_F(Gc, OrphanRemovesOwnerReferences) {
  auto o = owner("owner");
  dependent("dep", o);
  del("/api/v1/namespaces/default/configmaps/owner?propagationPolicy=Orphan");
  EXPECT_FALSE(exists("owner"));
  ASSERT_TRUE(exists("dep"));
  auto d = get("/api/v1/namespaces/default/configmaps/dep");
  EXPECT_FALSE(d.at("metadata").as_object().contains("ownerReferences"));
}

TEST_F(Gc, FinalizersDelayDeletion) {
  auto obj = configmap("f");
  obj["metadata"].as_object()["finalizers"] = json::array{"example.com/a", "example.com/b"};
  post("/api/v1/namespaces/default/configmaps", obj);
  auto w = call("GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" +
                           std::to_string(api_.store().rv()))
               .watch;
  auto deleted = del("/api/v1/namespaces/default/configmaps/f");
  EXPECT_TRUE(deleted.at("metadata").as_object().contains("deletionTimestamp"));
  ASSERT_TRUE(exists("f"));
  // A second delete changes nothing.
  del("/api/v1/namespaces/default/configmaps/f");
  // No new finalizers while deleting.
  auto cur = get("/api/v1/namespaces/default/configmaps/f");
  cur.as_object()["metadata"].as_object()["finalizers"].as_array().push_back("example.com/c");
  auto r = call("PUT", "/api/v1/namespaces/default/configmaps/f", json::serialize(cur));
  EXPECT_EQ(r.status, 422);
  patch("/api/v1/namespaces/default/configmaps/f", "application/json-patch+json",
        json::parse(R"([{"op":"remove","path":"/metadata/finalizers/0"}])"));
  ASSERT_TRUE(exists("f"));
  patch("/api/v1/namespaces/default/configmaps/f", "application/json-patch+json",
        json::parse(R"([{"op":"remove","path":"/metadata/finalizers"}])"));
  EXPECT_FALSE(exists("f"));
  EXPECT_EQ(types_and_names(drain(w)),
            (std::vector<std::string>{"MODIFIED f", "MODIFIED f", "MODIFIED f", "DELETED f"}));
}

TEST_F(Gc, DeletePreconditions) {
  auto a = make_cm("a");
  auto r = call("DELETE", "/api/v1/namespaces/default/configmaps/a",
                R"({"preconditions":{"uid":"wrong"}})");
  EXPECT_EQ(r.status, 409);
  r = call("DELETE", "/api/v1/namespaces/default/configmaps/a",
           R"({"preconditions":{"resourceVersion":")" + rv_of(a) + R"("}})");
  EXPECT_EQ(r.status, 200);
}

TEST_F(Gc, NamespaceDeletionRemovesItsObjectsThenItself) {
  post("/api/v1/namespaces", json::parse(R"({"metadata":{"name":"doomed"}})"));
  make_cm("a", {}, "doomed");
  auto held = configmap("held", "doomed");
  held["metadata"].as_object()["finalizers"] = json::array{"example.com/hold"};
  post("/api/v1/namespaces/doomed/configmaps", held);
  post("/api/v1/namespaces/doomed/secrets", json::parse(R"({"metadata":{"name":"s"}})"));
  del("/api/v1/namespaces/doomed");
  auto ns = get("/api/v1/namespaces/doomed");
  EXPECT_EQ(ns.at("status").at("phase"), "Terminating");
  get("/api/v1/namespaces/doomed/configmaps/a", 404);
  get("/api/v1/namespaces/doomed/secrets/s", 404);
  // New content is refused while terminating.
  auto r = call("POST", "/api/v1/namespaces/doomed/configmaps",
                json::serialize(configmap("new", "doomed")));
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(body(r).at("message").as_string().find("because it is being terminated"),
            std::string::npos);
  patch("/api/v1/namespaces/doomed/configmaps/held", "application/merge-patch+json",
        json::parse(R"({"metadata":{"finalizers":null}})"));
  get("/api/v1/namespaces/doomed", 404);
}

}  // namespace
}  // namespace aop::sim::testing
