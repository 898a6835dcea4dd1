// Status conditions: transition times kept while a condition's status holds, written
// through the status subresource only when something changed, conflicts retried from
// fresh state, and the leader gate.
#include "reconcile/runtime/status.hpp"

#include <gtest/gtest.h>

#include "k8s/timestamp.hpp"
#include "tests/runtime/fake_api.hpp"

namespace aop::runtime {
namespace {

using testing::FakeApi;
using testing::run;
namespace json = boost::json;

k8s::GroupVersionKind agent_gvk() {
  return {"monitoring.grafana.com", "v1alpha1", "GrafanaAgent"};
}

TEST(Conditions, TransitionTimeChangesOnlyWhenTheStatusFlips) {
  bool changed = false;
  json::array c = merge_conditions({}, {{"Ready", "False", "Pending", "waiting", 1}},
                                   "2024-01-01T00:00:00Z", changed);
  EXPECT_TRUE(changed);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].at("lastTransitionTime"), "2024-01-01T00:00:00Z");
  // Same status, new message: message updated, time kept.
  c = merge_conditions(c, {{"Ready", "False", "Pending", "still waiting", 2}},
                       "2024-01-01T00:05:00Z", changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(c[0].at("lastTransitionTime"), "2024-01-01T00:00:00Z");
  EXPECT_EQ(c[0].at("message"), "still waiting");
  EXPECT_EQ(c[0].at("observedGeneration"), 2);
  // Identical: no change at all.
  c = merge_conditions(c, {{"Ready", "False", "Pending", "still waiting", 2}},
                       "2024-01-01T00:09:00Z", changed);
  EXPECT_FALSE(changed);
  // Flipped: new time. Other conditions are kept.
  c = merge_conditions(c, {{"Reconciled", "True", "Applied", "", 2}}, "2024-01-01T00:10:00Z",
                       changed);
  c = merge_conditions(c, {{"Ready", "True", "AllReady", "", 2}}, "2024-01-01T00:11:00Z", changed);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].at("lastTransitionTime"), "2024-01-01T00:11:00Z");
  EXPECT_EQ(c[1].at("type"), "Reconciled");
}

TEST(Conditions, Rfc3339) {
  EXPECT_EQ(
      k8s::format_rfc3339(std::chrono::system_clock::time_point(std::chrono::seconds(1700000000))),
      "2023-11-14T22:13:20Z");
}

class StatusWriterTest : public ::testing::Test {
 protected:
  StatusWriterTest() {
    api.put(json::object{{"apiVersion", "monitoring.grafana.com/v1alpha1"},
                         {"kind", "GrafanaAgent"},
                         {"metadata", json::object{{"namespace", "ns"}, {"name", "a"}}},
                         {"spec", json::object{}}});
    options.now = [this] { return now; };
  }
  k8s::ObjectPtr cached() {
    return k8s::Object::from_json(json::value(*api.find("GrafanaAgent", "ns", "a")));
  }
  StatusUpdate reconciled(const std::string& status, const std::string& message = "") {
    StatusUpdate u;
    u.conditions.push_back(
        {"Reconciled", status, status == "True" ? "Applied" : "Failed", message, 1});
    u.fields["observedGeneration"] = 1;
    return u;
  }

  FakeApi api;
  StatusWriterOptions options;
  std::chrono::system_clock::time_point now{std::chrono::seconds(1700000000)};
};

TEST_F(StatusWriterTest, WritesOnlyWhenTheStatusChanges) {
  StatusWriter w(api, options);
  auto r = run(w.update(agent_gvk(), cached(), reconciled("True")));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r.value());
  EXPECT_EQ(api.count("update_status"), 1);
  const auto& status = api.find("GrafanaAgent", "ns", "a")->at("status").as_object();
  EXPECT_EQ(status.at("observedGeneration"), 1);
  EXPECT_EQ(status.at("conditions").at(0).at("lastTransitionTime"), "2023-11-14T22:13:20Z");
  // The same again, later: no write.
  now += std::chrono::minutes(10);
  r = run(w.update(agent_gvk(), cached(), reconciled("True")));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r.value());
  EXPECT_EQ(api.count("update_status"), 1);
  // A failure: written with a new transition time.
  r = run(
      w.update(agent_gvk(), cached(), reconciled("False", "no key password in Secret ns/creds")));
  EXPECT_TRUE(r.value());
  EXPECT_EQ(api.find("GrafanaAgent", "ns", "a")
                ->at("status")
                .at("conditions")
                .at(0)
                .at("lastTransitionTime"),
            "2023-11-14T22:23:20Z");
}

TEST_F(StatusWriterTest, UrlCredentialsNeverReachTheStatus) {
  StatusWriter w(api, options);
  StatusUpdate u = reconciled("False", "remote write http://u:pw@h/push?token=t failed");
  u.fields["problems"] =
      json::array{json::object{{"path", "spec.url"}, {"message", "bad url https://u:pw@h/?sig=s"}}};
  bool changed = false;
  const json::object merged = w.merged_status({}, u, changed);
  const std::string text = json::serialize(merged);
  EXPECT_EQ(text.find("pw"), std::string::npos) << text;
  EXPECT_NE(text.find("http://REDACTED@h/push?token=REDACTED failed"), std::string::npos) << text;
  EXPECT_NE(text.find("https://REDACTED@h/?sig=REDACTED"), std::string::npos) << text;
}

TEST_F(StatusWriterTest, AConflictReReadsAndMergesAgain) {
  StatusWriter w(api, options);
  const auto stale = cached();
  api.touch(*api.find("GrafanaAgent", "ns", "a"), false);  // someone else wrote
  auto r = run(w.update(agent_gvk(), stale, reconciled("True")));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r.value());
  EXPECT_EQ(api.count("update_status"), 2);
  EXPECT_EQ(api.count("get"), 1);
}

TEST_F(StatusWriterTest, NotTheLeaderWritesNothing) {
  options.may_write = [] { return false; };
  StatusWriter w(api, options);
  auto r = run(w.update(agent_gvk(), cached(), reconciled("True")));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r.value());
  EXPECT_EQ(api.writes(), 0);
}

TEST(EventSubject, TakesKindFromTheInformerAndIdentityFromTheObject) {
  auto obj = k8s::Object::from_json(
      json::parse(R"({"metadata":{"namespace":"ns","name":"a","uid":"u","resourceVersion":"7"}})"));
  const auto s = event_subject(agent_gvk(), *obj);
  EXPECT_EQ(s.api_version, "monitoring.grafana.com/v1alpha1");
  EXPECT_EQ(s.kind, "GrafanaAgent");
  EXPECT_EQ(s.ns, "ns");
  EXPECT_EQ(s.uid, "u");
  EXPECT_EQ(s.resource_version, "7");
}

}  // namespace
}  // namespace aop::runtime

namespace aop::runtime {
namespace {

ObjectOutcome outcome(const char* kind, const char* name, ObjectResult result) {
  return ObjectOutcome{GroupKind{"", kind}, k8s::ObjectKey{"ns", name}, result, {}, {}};
}

// Normal Events name what an apply changed, one per kind of change; nothing changed,
// nothing to say; the same change says the same thing (so the recorder aggregates it).
TEST(ChangeEvents, OnePerKindOfChangeNamingTheObjects) {
  ApplyReport report;
  report.objects = {outcome("Secret", "a-config", ObjectResult::updated),
                    outcome("Service", "a-operated", ObjectResult::unchanged),
                    outcome("StatefulSet", "a", ObjectResult::updated),
                    outcome("StatefulSet", "a-shard-1", ObjectResult::created),
                    outcome("StatefulSet", "a-shard-2", ObjectResult::deleted),
                    outcome("Secret", "a-secrets", ObjectResult::failed)};
  EXPECT_EQ(change_events(report),
            (std::vector<ChangeEvent>{{"Created", "created StatefulSet ns/a-shard-1"},
                                      {"Updated", "updated Secret ns/a-config, StatefulSet ns/a"},
                                      {"Pruned", "deleted StatefulSet ns/a-shard-2"}}));

  ApplyReport unchanged;
  unchanged.objects = {outcome("Secret", "a-config", ObjectResult::unchanged),
                       outcome("Service", "a-operated", ObjectResult::absent)};
  EXPECT_TRUE(change_events(unchanged).empty());

  ApplyReport many;
  for (int i = 0; i < 7; ++i) {
    many.objects.push_back(ObjectOutcome{GroupKind{"", "Secret"},
                                         k8s::ObjectKey{"ns", "s" + std::to_string(i)},
                                         ObjectResult::recreated,
                                         {},
                                         {}});
  }
  const auto events = change_events(many);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "Recreated");
  EXPECT_EQ(events[0].message,
            "recreated Secret ns/s0, Secret ns/s1, Secret ns/s2, Secret ns/s3, Secret ns/s4 "
            "and 2 more");
}

}  // namespace
}  // namespace aop::runtime
