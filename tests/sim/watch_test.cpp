// Watches: initial state, resuming, the 410 window, selector transitions, bookmarks,
// sendInitialEvents, timeouts, metadata-only events.
#include "tests/sim/sim_fixture.hpp"

namespace aop::sim::testing {
namespace {

class Watches : public SimTest {
 protected:
  Watches() : SimTest(/*history=*/5) {}

  WatcherPtr watch(const std::string& target, const std::string& accept = {}) {
    auto r = call("GET", target, "", "", accept);
    EXPECT_EQ(r.status, 200) << r.body_string();
    EXPECT_TRUE(r.watch) << target;
    return r.watch;
  }
  using V = std::vector<std::string>;
};

TEST_F(Watches, WithoutResourceVersionStartsWithTheCurrentState) {
  make_cm("a");
  make_cm("b");
  auto w = watch("/api/v1/namespaces/default/configmaps?watch=true");
  EXPECT_EQ(types_and_names(drain(w)), (V{"ADDED a", "ADDED b"}));
  make_cm("c");
  patch("/api/v1/namespaces/default/configmaps/a", "application/merge-patch+json",
        json::parse(R"({"data":{"x":"1"}})"));
  del("/api/v1/namespaces/default/configmaps/b");
  auto events = drain(w);
  EXPECT_EQ(types_and_names(events), (V{"ADDED c", "MODIFIED a", "DELETED b"}));
  // The DELETED object carries the deletion's resourceVersion.
  EXPECT_EQ(rv_of(events[2].at("object")), std::to_string(api_.store().rv()));
  api_.end_watch(w);
  EXPECT_EQ(api_.stats_json().at("watches"), 0);
}

TEST_F(Watches, ResourceVersionZeroAlsoSendsTheState) {
  make_cm("a");
  auto w = watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0");
  EXPECT_EQ(types_and_names(drain(w)), (V{"ADDED a"}));
}

TEST_F(Watches, ResumesFromAResourceVersion) {
  auto a = make_cm("a");
  make_cm("b");
  patch("/api/v1/namespaces/default/configmaps/a", "application/merge-patch+json",
        json::parse(R"({"data":{"x":"1"}})"));
  auto w = watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv_of(a));
  EXPECT_EQ(types_and_names(drain(w)), (V{"ADDED b", "MODIFIED a"}));
}

TEST_F(Watches, TooOldResourceVersionIsGoneAsHttpStatus) {
  auto a = make_cm("a");
  for (int i = 0; i < 6; ++i) make_cm("n" + std::to_string(i));  // history holds 5
  auto r = call("GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv_of(a));
  ASSERT_EQ(r.status, 410);
  EXPECT_FALSE(r.watch);
  auto s = body(r);
  EXPECT_EQ(s.at("reason"), "Expired");
  EXPECT_EQ(s.at("code"), 410);
  EXPECT_TRUE(s.at("message").as_string().starts_with("too old resource version: " + rv_of(a)));
}

TEST_F(Watches, TooOldResourceVersionAsAnEventWhenConfigured) {
  FakeTime t;
  auto opts = fake_options(t, 2);
  opts.gone_as_event = true;
  ApiServer api(opts);
  Request r;
  r.method = "POST";
  r.target = "/api/v1/namespaces/default/configmaps";
  for (const char* n : {"a", "b", "c", "d"}) {
    r.body = json::serialize(configmap(n));
    api.handle(r);
  }
  Request w;
  w.method = "GET";
  w.target = "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1";
  auto resp = api.handle(w);
  ASSERT_EQ(resp.status, 200);
  ASSERT_TRUE(resp.watch);
  auto events = drain(resp.watch);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("type"), "ERROR");
  EXPECT_EQ(events[0].at("object").at("kind"), "Status");
  EXPECT_EQ(events[0].at("object").at("code"), 410);
  EXPECT_TRUE(resp.watch->closed());
}

TEST_F(Watches, HistoryIsPerResource) {
  auto a = make_cm("a");
  for (int i = 0; i < 10; ++i) {
    post("/api/v1/namespaces/default/secrets",
         json::parse(R"({"metadata":{"generateName":"s-"}})"));
  }
  // Secret churn does not push configmap events out of the configmap history.
  auto w = watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv_of(a));
  EXPECT_TRUE(drain(w).empty());
  make_cm("b");
  EXPECT_EQ(types_and_names(drain(w)), (V{"ADDED b"}));
}

TEST_F(Watches, LabelSelectorTransitionsBecomeAddedAndDeleted) {
  make_cm("a", {{"app", "web"}});
  auto w = watch("/api/v1/namespaces/default/configmaps?watch=1&labelSelector=app%3Dweb");
  EXPECT_EQ(types_and_names(drain(w)), (V{"ADDED a"}));
  make_cm("b", {{"app", "db"}});
  EXPECT_TRUE(drain(w).empty());
  patch("/api/v1/namespaces/default/configmaps/b", "application/merge-patch+json",
        json::parse(R"({"metadata":{"labels":{"app":"web"}}})"));
  patch("/api/v1/namespaces/default/configmaps/a", "application/merge-patch+json",
        json::parse(R"({"metadata":{"labels":{"app":"gone"}}})"));
  auto events = drain(w);
  EXPECT_EQ(types_and_names(events), (V{"ADDED b", "DELETED a"}));
  // The synthesized DELETED carries the last matching state at the new resourceVersion.
  EXPECT_EQ(events[1].at("object").at("metadata").at("labels").at("app"), "web");
  EXPECT_EQ(rv_of(events[1].at("object")), std::to_string(api_.store().rv()));
}

TEST_F(Watches, FieldSelectorOnName) {
  make_cm("a");
  make_cm("b");
  auto w = watch("/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Db");
  EXPECT_EQ(types_and_names(drain(w)), (V{"ADDED b"}));
  auto legacy = watch("/api/v1/watch/namespaces/default/configmaps/a");
  EXPECT_EQ(types_and_names(drain(legacy)), (V{"ADDED a"}));
}

TEST_F(Watches, NamespaceScope) {
  post("/api/v1/namespaces", json::parse(R"({"metadata":{"name":"other"}})"));
  auto ns = watch("/api/v1/namespaces/other/configmaps?watch=1");
  auto all = watch("/api/v1/configmaps?watch=1");
  drain(all);
  make_cm("a");
  make_cm("b", {}, "other");
  EXPECT_EQ(types_and_names(drain(ns)), (V{"ADDED b"}));
  EXPECT_EQ(types_and_names(drain(all)), (V{"ADDED a", "ADDED b"}));
}

TEST_F(Watches, PeriodicBookmarks) {
  auto a = make_cm("a");
  auto w = watch(
      "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=" +
      rv_of(a));
  auto plain = watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv_of(a));
  api_.tick();
  EXPECT_TRUE(drain(w).empty());
  time_.advance(std::chrono::seconds(61));
  api_.tick();
  auto events = drain(w);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("type"), "BOOKMARK");
  const auto& obj = events[0].at("object").as_object();
  EXPECT_EQ(obj.at("kind"), "ConfigMap");
  EXPECT_EQ(obj.at("apiVersion"), "v1");
  EXPECT_EQ(obj.at("metadata").at("resourceVersion"),
            json::value(std::to_string(api_.store().rv())));
  EXPECT_TRUE(drain(plain).empty());  // bookmarks only when allowed
}

TEST_F(Watches, SendInitialEventsEndsWithAnAnnotatedBookmark) {
  make_cm("a");
  make_cm("b");
  auto bad = call("GET", "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true");
  EXPECT_EQ(bad.status, 422);
  auto w = watch(
      "/api/v1/namespaces/default/"
      "configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
      "&resourceVersionMatch=NotOlderThan");
  auto events = drain(w);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(types_and_names(events), (V{"ADDED a", "ADDED b", "BOOKMARK"}));
  EXPECT_EQ(events[2].at("object").at("metadata").at("annotations").at("k8s.io/initial-events-end"),
            "true");
  EXPECT_EQ(events[2].at("object").at("metadata").at("resourceVersion"),
            json::value(std::to_string(api_.store().rv())));
  make_cm("c");
  EXPECT_EQ(types_and_names(drain(w)), (V{"ADDED c"}));
}

TEST_F(Watches, TimeoutSecondsEndsTheStream) {
  auto w = watch("/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=5");
  time_.advance(std::chrono::seconds(4));
  api_.tick();
  EXPECT_FALSE(w->closed());
  time_.advance(std::chrono::seconds(2));
  api_.tick();
  EXPECT_TRUE(w->closed());
}

TEST_F(Watches, MetadataOnlyEvents) {
  auto w = watch("/api/v1/namespaces/default/secrets?watch=1&allowWatchBookmarks=true",
                 "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json");
  post("/api/v1/namespaces/default/secrets",
       json::parse(R"({"metadata":{"name":"s","labels":{"a":"b"}},"data":{"k":"c2VjcmV0"}})"));
  auto events = drain(w);
  ASSERT_EQ(events.size(), 1u);
  const auto& obj = events[0].at("object").as_object();
  EXPECT_EQ(obj.at("kind"), "PartialObjectMetadata");
  EXPECT_EQ(obj.at("apiVersion"), "meta.k8s.io/v1");
  EXPECT_EQ(obj.at("metadata").at("name"), "s");
  EXPECT_FALSE(obj.contains("data"));
  time_.advance(std::chrono::seconds(61));
  api_.tick();
  auto bm = drain(w);
  ASSERT_EQ(bm.size(), 1u);
  EXPECT_EQ(bm[0].at("object").at("kind"), "PartialObjectMetadata");
}

TEST_F(Watches, OneSerializedEventIsSharedByEveryWatcher) {
  auto w1 = watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" +
                  std::to_string(api_.store().rv()));
  auto w2 = watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" +
                  std::to_string(api_.store().rv()));
  make_cm("a");
  auto p1 = w1->take();
  auto p2 = w2->take();
  ASSERT_EQ(p1.size(), 1u);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(p1[0].data.data(), p2[0].data.data());  // the same bytes, not a copy
}

TEST_F(Watches, WatchOfACustomResourceEndsWhenItsCrdIsDeleted) {
  post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json::parse(R"({
    "metadata":{"name":"things.t.example.com"},
    "spec":{"group":"t.example.com","scope":"Namespaced","names":{"plural":"things","kind":"Thing"},
            "versions":[{"name":"v1","served":true,"storage":true,
                         "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}})"));
  auto w = watch("/apis/t.example.com/v1/namespaces/default/things?watch=1");
  post("/apis/t.example.com/v1/namespaces/default/things",
       json::parse(R"({"apiVersion":"t.example.com/v1","kind":"Thing","metadata":{"name":"x"}})"));
  del("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.t.example.com");
  EXPECT_EQ(types_and_names(drain(w)), (V{"ADDED x", "DELETED x"}));
  EXPECT_TRUE(w->closed());
}

}  // namespace
}  // namespace aop::sim::testing
