// The Events recorder against the test cluster (kube-sim, and the real kube-apiserver in
// the integration-real run): a hot loop of one event becomes one Event with a
// count, and a flood of distinct events about one object is cut off by its budget.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/event_aggregator.hpp"
#include "k8s/event_recorder.hpp"
#include "tests/k8s/async_helpers.hpp"
#include "tests/k8s/cluster.hpp"

namespace json = boost::json;
namespace tst = aop::testing;
using namespace aop::k8s;

namespace {

const GroupVersionKind kEvent{"", "v1", "Event"};

std::vector<json::value> events(tst::IoThreads& io, ApiClient& client, const std::string& ns) {
  auto list = io.run(client.list(kEvent, ns, {}));
  EXPECT_TRUE(list) << list.error().describe();
  return list ? list->items : std::vector<json::value>{};
}

}  // namespace

TEST(EventRecorderSim, AHotLoopBecomesOneEventWithACount) {
  auto cluster = tst::start_cluster();
  tst::TestObjects objects(*cluster);
  const std::string ns = objects.test_namespace("events");
  tst::IoThreads io(2);
  ApiClientOptions o;
  o.user_agent = "event-recorder-test";
  o.qps = 0;
  auto client = make_api_client(io.executor(), cluster->client_config(), o);
  auto recorder = make_event_recorder(io.executor(), *client, {"agent-operator", "pod-1"});
  const EventSubject agent{
      "monitoring.grafana.com/v1alpha1", "GrafanaAgent", ns, "agent", "uid-1", "7"};
  for (int i = 0; i < 500; ++i) {
    recorder->record(agent, EventType::warning, "InvalidSpec", "spec.logs: expected object");
  }
  ASSERT_TRUE(tst::wait_until([&] {
    const auto items = events(io, *client, ns);
    return items.size() == 1 && items[0].at("count").to_number<int>() == 500;
  })) << "expected one Event with count 500";
  const auto e = events(io, *client, ns)[0];
  EXPECT_EQ(e.at("type"), "Warning");
  EXPECT_EQ(e.at("reason"), "InvalidSpec");
  EXPECT_EQ(e.at("message"), "spec.logs: expected object");
  EXPECT_EQ(e.at("involvedObject").at("kind"), "GrafanaAgent");
  EXPECT_EQ(e.at("involvedObject").at("uid"), "uid-1");
  EXPECT_EQ(e.at("source").at("component"), "agent-operator");
  EXPECT_EQ(e.at("reportingInstance"), "pod-1");
  EXPECT_LE(cluster->writes_by("event-recorder-test"), 25u)
      << "repeats must be folded, not written";
}

TEST(EventRecorderSim, AFloodOfDistinctEventsIsRateLimitedPerObject) {
  auto cluster = tst::start_cluster();
  tst::TestObjects objects(*cluster);
  const std::string ns = objects.test_namespace("events");
  tst::IoThreads io(2);
  ApiClientOptions o;
  o.user_agent = "event-recorder-test";
  o.qps = 0;
  auto client = make_api_client(io.executor(), cluster->client_config(), o);
  auto recorder = make_event_recorder(io.executor(), *client, {});
  const EventSubject noisy{"v1", "ConfigMap", ns, "noisy", "uid-n", ""};
  const EventSubject quiet{"v1", "ConfigMap", ns, "quiet", "uid-q", ""};
  for (int i = 0; i < 200; ++i) {
    recorder->record(noisy, EventType::normal, "Updated", "update " + std::to_string(i));
  }
  recorder->record(quiet, EventType::normal, "Updated", "once");
  ASSERT_TRUE(tst::wait_until([&] {
    int quiet_events = 0;
    for (const auto& e : events(io, *client, ns)) {
      if (e.at("involvedObject").at("name") == "quiet") ++quiet_events;
    }
    return quiet_events == 1;
  }));
  int noisy_events = 0;
  for (const auto& e : events(io, *client, ns)) {
    if (e.at("involvedObject").at("name") == "noisy") ++noisy_events;
  }
  EXPECT_EQ(noisy_events, static_cast<int>(kEventBurst));
}
