// Every fault mode: set over the admin endpoint, observed by a client, counted.
#include "tests/sim/sim_fixture.hpp"

namespace aop::sim::testing {
namespace {

class Faults : public SimTest {
 protected:
  void set(const std::string& body) {
    auto r = call("POST", "/admin/faults", body);
    ASSERT_EQ(r.status, 200) << r.body_string();
  }
  std::uint64_t counted(const std::string& mode) {
    return api_.stats_json().at("faults").at(mode).to_number<std::uint64_t>();
  }
  WatcherPtr watch(const std::string& query = "") {
    auto r = call("GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" +
                             std::to_string(api_.store().rv()) + query);
    EXPECT_TRUE(r.watch) << r.status << " " << r.body_string();
    return r.watch;
  }
};

TEST_F(Faults, CloseWatchAfterNEvents) {
  set(R"({"close_watch_after":2})");
  auto w = watch();
  make_cm("a");
  EXPECT_FALSE(w->closed());
  make_cm("b");
  EXPECT_TRUE(w->closed());
  make_cm("c");
  EXPECT_EQ(types_and_names(drain(w)), (std::vector<std::string>{"ADDED a", "ADDED b"}));
  EXPECT_EQ(counted("close_watch_after"), 1u);
}

TEST_F(Faults, CloseWatchAtRandom) {
  set(R"({"close_watch_probability":1.0})");
  auto w = watch();
  make_cm("a");
  EXPECT_TRUE(w->closed());
  EXPECT_EQ(drain(w).size(), 1u);
  EXPECT_EQ(counted("close_watch_probability"), 1u);
  set(R"({"close_watch_probability":0})");
  auto w2 = watch();
  make_cm("b");
  EXPECT_FALSE(w2->closed());
}

TEST_F(Faults, HttpErrorsWithRetryAfter) {
  set(R"({"http_503":1.0,"retry_after_seconds":7})");
  auto r = call("GET", "/api/v1/namespaces/default/configmaps");
  ASSERT_EQ(r.status, 503);
  EXPECT_EQ(body(r).at("reason"), "ServiceUnavailable");
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0], (std::pair<std::string, std::string>{"Retry-After", "7"}));
  EXPECT_EQ(call("GET", "/version").status, 200);  // discovery is not affected
  set(R"({"reset":true,"http_429":1.0})");
  r = call("POST", "/api/v1/namespaces/default/configmaps", json::serialize(configmap("a")));
  ASSERT_EQ(r.status, 429);
  EXPECT_EQ(body(r).at("reason"), "TooManyRequests");
  EXPECT_EQ(body(r).at("details").at("retryAfterSeconds"), 1);
  EXPECT_EQ(r.headers[0].first, "Retry-After");
  get("/api/v1/namespaces/default/configmaps/a", 429);
  set(R"({"reset":true,"http_500":1.0})");
  r = call("GET", "/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(body(r).at("reason"), "InternalError");
  set(R"({"reset":true})");
  get("/api/v1/namespaces/default/configmaps/a", 404);  // the failed create wrote nothing
  EXPECT_EQ(counted("http_503"), 1u);
  EXPECT_EQ(counted("http_429"), 2u);
  EXPECT_EQ(counted("http_500"), 1u);
}

TEST_F(Faults, FractionOfRequestsFail) {
  set(R"({"http_500":0.5,"seed":7})");
  int failed = 0;
  for (int i = 0; i < 400; ++i) {
    if (call("GET", "/api/v1/namespaces").status == 500) ++failed;
  }
  EXPECT_GT(failed, 120);
  EXPECT_LT(failed, 280);
  EXPECT_EQ(counted("http_500"), static_cast<std::uint64_t>(failed));
}

// The request faults can be aimed: at one client (by User-Agent) and at some resources,
// so a test's own client and the writes it does not study stay unharmed.
TEST_F(Faults, ScopedToAUserAgentAndResources) {
  make_cm("a");
  set(R"({"http_503":1.0,"only_user_agent":"operator/1","only_resources":["configmaps"]})");
  const std::string cms = "/api/v1/namespaces/default/configmaps";
  EXPECT_EQ(call("GET", cms, {}, "application/json", {}, "my-operator/1.0").status, 503);
  EXPECT_EQ(call("GET", cms, {}, "application/json", {}, "kubectl/1.32").status, 200);
  EXPECT_EQ(call("GET", "/api/v1/namespaces", {}, "application/json", {}, "my-operator/1.0").status,
            200)
      << "another resource";
  // A subresource is named as such: the status of a Namespace, not Namespaces.
  set(R"({"only_resources":["namespaces/status"]})");
  EXPECT_EQ(
      call("GET", "/api/v1/namespaces/default", {}, "application/json", {}, "operator/1").status,
      200);
  EXPECT_EQ(
      call("GET", "/api/v1/namespaces/default/status", {}, "application/json", {}, "operator/1")
          .status,
      503);
  EXPECT_EQ(counted("http_503"), 2u);
  set(R"({"reset":true,"http_503":1.0})");  // reset clears the scope too
  EXPECT_EQ(call("GET", cms).status, 503);
}

TEST_F(Faults, Latency) {
  set(R"({"latency_ms":250})");
  auto r = call("GET", "/api/v1/namespaces");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.delay, std::chrono::milliseconds(250));
  EXPECT_EQ(call("GET", "/apis").delay, std::chrono::milliseconds(0));
  EXPECT_EQ(counted("latency"), 1u);
}

TEST_F(Faults, GoneOnTheNextWatch) {
  set(R"({"gone_next_watch":1})");
  auto r = call("GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1");
  EXPECT_EQ(r.status, 410);
  EXPECT_EQ(body(r).at("reason"), "Expired");
  EXPECT_TRUE(watch());  // only the next one
  EXPECT_EQ(counted("gone_next_watch"), 1u);
}

TEST_F(Faults, GoneInStreamOnTheNextWatch) {
  set(R"({"gone_in_stream_next_watch":1})");
  auto r = call("GET", "/api/v1/namespaces/default/configmaps?watch=1");
  ASSERT_EQ(r.status, 200);
  auto events = drain(r.watch);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("type"), "ERROR");
  EXPECT_EQ(events[0].at("object").at("code"), 410);
  EXPECT_TRUE(r.watch->closed());
  EXPECT_EQ(counted("gone_in_stream_next_watch"), 1u);
}

TEST_F(Faults, ExpireOpenWatches) {
  auto w1 = watch();
  auto w2 = watch();
  set(R"({"expire_watches":true})");
  for (const auto& w : {w1, w2}) {
    auto events = drain(w);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].at("type"), "ERROR");
    EXPECT_EQ(events[0].at("object").at("reason"), "Expired");
    EXPECT_TRUE(w->closed());
  }
  EXPECT_EQ(counted("expire_watches"), 2u);
}

TEST_F(Faults, ConflictOnTheNextUpdateOfAnObject) {
  auto a = make_cm("a");
  make_cm("b");
  set(R"({"conflict_next_update":["configmaps/default/a"]})");
  auto b = get("/api/v1/namespaces/default/configmaps/b");
  put("/api/v1/namespaces/default/configmaps/b", b);  // other objects unaffected
  auto r = call("PUT", "/api/v1/namespaces/default/configmaps/a", json::serialize(a));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(body(r).at("reason"), "Conflict");
  put("/api/v1/namespaces/default/configmaps/a", a);  // only once
  set(R"({"conflict_next_update":"*"})");
  EXPECT_EQ(call("PATCH", "/api/v1/namespaces/default/configmaps/b", R"({"data":{"x":"y"}})",
                 "application/merge-patch+json")
                .status,
            409);
  EXPECT_EQ(counted("conflict_next_update"), 2u);
}

TEST_F(Faults, StallAWatchWithoutClosingIt) {
  set(R"({"stall_watch_after":1})");
  auto w = watch("&allowWatchBookmarks=true&timeoutSeconds=10");
  make_cm("a");
  make_cm("b");
  time_.advance(std::chrono::minutes(5));
  api_.tick();
  EXPECT_TRUE(w->stalled());
  EXPECT_FALSE(w->closed());  // no timeout either: the connection just hangs
  EXPECT_EQ(types_and_names(drain(w)), (std::vector<std::string>{"ADDED a"}));
  EXPECT_EQ(counted("stall_watch_after"), 1u);
  set(R"({"stall_watch_after":0})");
  auto w0 = watch();
  make_cm("c");
  EXPECT_TRUE(drain(w0).empty());
}

TEST_F(Faults, BadSettingsAreRejected) {
  EXPECT_EQ(call("POST", "/admin/faults", R"({"http_500":2})").status, 400);
  EXPECT_EQ(call("POST", "/admin/faults", R"({"no_such_mode":1})").status, 400);
  EXPECT_EQ(call("POST", "/admin/faults", R"(not json)").status, 400);
  auto cur = body(call("GET", "/admin/faults"));
  EXPECT_EQ(cur.at("settings").at("http_500"), 0.0);
}

}  // namespace
}  // namespace aop::sim::testing
