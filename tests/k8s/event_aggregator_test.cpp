#include "k8s/event_aggregator.hpp"

#include <gtest/gtest.h>

using namespace aop;
using namespace aop::k8s;
using namespace std::chrono_literals;

namespace {

EventSubject subject(std::string name = "agent", std::string uid = "uid-1") {
  return EventSubject{"monitoring.grafana.com/v1alpha1",
                      "GrafanaAgent",
                      "ops",
                      std::move(name),
                      std::move(uid),
                      "42"};
}

}  // namespace

TEST(EventAggregator, RepeatsFoldIntoOneWrite) {
  net::FakeClock clock;
  EventAggregator a;
  for (int i = 0; i < 1000; ++i) {
    a.add(subject(), EventType::warning, "InvalidSpec", "spec.x: expected string",
          "2024-03-01T10:00:0" + std::to_string(i % 10) + "Z");
  }
  EXPECT_EQ(a.pending(), 1u);
  auto w = a.next(clock.now(), "17a");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->kind, EventWrite::Kind::create);
  EXPECT_EQ(w->count, 1000);
  EXPECT_EQ(w->name, "agent.17a");
  EXPECT_EQ(w->ns, "ops");
  EXPECT_EQ(w->reason, "InvalidSpec");
  EXPECT_FALSE(a.next(clock.now(), "x"));
  a.written(*w, true, clock.now());

  // More repeats within the window patch the same Event's count.
  clock.advance(1min);
  a.add(subject(), EventType::warning, "InvalidSpec", "spec.x: expected string", "t2");
  a.add(subject(), EventType::warning, "InvalidSpec", "spec.x: expected string", "t3");
  w = a.next(clock.now(), "17b");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->kind, EventWrite::Kind::patch);
  EXPECT_EQ(w->name, "agent.17a");
  EXPECT_EQ(w->count, 1002);
  EXPECT_EQ(w->last_timestamp, "t3");
  EXPECT_EQ(w->first_timestamp, "2024-03-01T10:00:09Z");
  a.written(*w, true, clock.now());

  // After the window, a new Event.
  clock.advance(11min);
  a.add(subject(), EventType::warning, "InvalidSpec", "spec.x: expected string", "t4");
  w = a.next(clock.now(), "17c");
  EXPECT_EQ(w->kind, EventWrite::Kind::create);
  EXPECT_EQ(w->count, 1);
}

TEST(EventAggregator, DifferentMessagesAreDifferentEvents) {
  net::FakeClock clock;
  EventAggregator a;
  a.add(subject(), EventType::normal, "Reconciled", "a", "t");
  a.add(subject(), EventType::normal, "Reconciled", "b", "t");
  a.add(subject(), EventType::warning, "Reconciled", "a", "t");
  a.add(subject("other", "uid-2"), EventType::normal, "Reconciled", "a", "t");
  EXPECT_EQ(a.pending(), 4u);
}

TEST(EventAggregator, AHotObjectIsSilencedAfterItsBurst) {
  net::FakeClock clock;
  EventAggregator a;
  int writes = 0;
  for (int i = 0; i < 100; ++i) {
    a.add(subject(), EventType::warning, "Failed", "attempt " + std::to_string(i), "t");
    while (auto w = a.next(clock.now(), std::to_string(i))) {
      ++writes;
      a.written(*w, true, clock.now());
    }
  }
  EXPECT_EQ(writes, 25);
  EXPECT_EQ(a.dropped(), 75u);
  // Another object is unaffected.
  a.add(subject("b", "uid-b"), EventType::warning, "Failed", "x", "t");
  EXPECT_TRUE(a.next(clock.now(), "b"));
  // The budget refills at one per five minutes.
  clock.advance(5min);
  a.add(subject(), EventType::warning, "Failed", "later", "t");
  EXPECT_TRUE(a.next(clock.now(), "c"));
  a.add(subject(), EventType::warning, "Failed", "later still", "t");
  EXPECT_FALSE(a.next(clock.now(), "d"));
}

TEST(EventAggregator, FailedPatchStartsANewEvent) {
  net::FakeClock clock;
  EventAggregator a;
  a.add(subject(), EventType::normal, "R", "m", "t1");
  auto w = a.next(clock.now(), "1");
  a.written(*w, true, clock.now());
  a.add(subject(), EventType::normal, "R", "m", "t2");
  w = a.next(clock.now(), "2");
  ASSERT_EQ(w->kind, EventWrite::Kind::patch);
  a.written(*w, false, clock.now());
  a.add(subject(), EventType::normal, "R", "m", "t3");
  w = a.next(clock.now(), "3");
  EXPECT_EQ(w->kind, EventWrite::Kind::create);
}

TEST(EventAggregator, ClusterScopedObjectsGoToDefaultAndLongMessagesAreCut) {
  net::FakeClock clock;
  EventAggregator a;
  EventSubject ns{"v1", "Namespace", "", "team-a", "u", ""};
  a.add(ns, EventType::normal, "R", std::string(5000, 'm'), "t");
  auto w = a.next(clock.now(), "1");
  EXPECT_EQ(w->ns, "default");
  EXPECT_EQ(w->message.size(), kMaxEventMessage);
}

TEST(EventAggregator, QueueIsBounded) {
  net::FakeClock clock;
  EventAggregator a;
  for (std::size_t i = 0; i < kMaxPendingEvents + 10; ++i) {
    a.add(subject("o" + std::to_string(i), "u" + std::to_string(i)), EventType::normal, "R", "m",
          "t");
  }
  EXPECT_EQ(a.pending(), kMaxPendingEvents);
  EXPECT_EQ(a.dropped(), 10u);
}
