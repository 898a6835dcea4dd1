#include "k8s/lease.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

namespace json = boost::json;
using namespace aop;
using namespace aop::k8s;
using namespace std::chrono_literals;

namespace {

LeaseRecord held_by(std::string holder, std::string renew, int seconds = 15) {
  LeaseRecord r;
  r.holder = std::move(holder);
  r.lease_duration_seconds = seconds;
  r.acquire_time = "2024-01-01T00:00:00.000000Z";
  r.renew_time = std::move(renew);
  r.lease_transitions = 2;
  return r;
}

}  // namespace

TEST(Lease, RecordJsonRoundTrip) {
  const auto r = held_by("a", "2024-01-01T00:00:05.000000Z");
  auto lease = make_lease("ns", "op", r);
  EXPECT_EQ(lease.at("apiVersion"), "coordination.k8s.io/v1");
  EXPECT_EQ(lease.at("metadata").at("namespace"), "ns");
  EXPECT_EQ(lease.at("spec").at("holderIdentity"), "a");
  EXPECT_EQ(lease.at("spec").at("leaseDurationSeconds"), 15);
  EXPECT_EQ(lease_record_from(lease), r);
  EXPECT_EQ(lease_record_from(json::parse(R"({"metadata":{}})")), LeaseRecord{});
}

TEST(Lease, MicroTime) {
  const auto t = std::chrono::system_clock::from_time_t(1709287200) + 123456us;
  EXPECT_EQ(micro_time(t), "2024-03-01T10:00:00.123456Z");
}

TEST(Lease, ExpiryIsJudgedFromLocalObservationNotWrittenTimes) {
  net::FakeClock clock;
  LeaseObserver o;
  EXPECT_TRUE(o.can_acquire("me", clock.now(), 15s)) << "no lease seen: free";
  // The holder's renewTime is far in the past by our clock: irrelevant.
  EXPECT_TRUE(o.observe(held_by("other", "1999-01-01T00:00:00.000000Z"), clock.now()));
  EXPECT_FALSE(o.can_acquire("me", clock.now(), 15s));
  clock.advance(14s);
  // Seeing the same record again does not move the observation time.
  EXPECT_FALSE(o.observe(held_by("other", "1999-01-01T00:00:00.000000Z"), clock.now()));
  EXPECT_FALSE(o.can_acquire("me", clock.now(), 15s));
  clock.advance(1s);
  EXPECT_TRUE(o.can_acquire("me", clock.now(), 15s)) << "not renewed for 15 s as seen here";
  // A renewal (changed record) restarts the clock, whatever its written time says.
  EXPECT_TRUE(o.observe(held_by("other", "1999-01-01T00:00:02.000000Z"), clock.now()));
  EXPECT_FALSE(o.can_acquire("me", clock.now(), 15s));
  clock.advance(10s);
  EXPECT_FALSE(o.can_acquire("me", clock.now(), 15s));
}

TEST(Lease, LeaseDurationComesFromTheRecord) {
  net::FakeClock clock;
  LeaseObserver o;
  o.observe(held_by("other", "t1", 5), clock.now());
  clock.advance(5s);
  EXPECT_TRUE(o.can_acquire("me", clock.now(), 15s));
  // No duration in the record: our own.
  LeaseObserver p;
  p.observe(held_by("other", "t1", 0), clock.now());
  clock.advance(5s);
  EXPECT_FALSE(p.can_acquire("me", clock.now(), 15s));
}

TEST(Lease, FreeOrOwnLeaseCanBeTakenAtOnce) {
  net::FakeClock clock;
  LeaseObserver o;
  o.observe(held_by("", "t1", 1), clock.now());  // released
  EXPECT_TRUE(o.can_acquire("me", clock.now(), 15s));
  o.observe(held_by("me", "t2"), clock.now());
  EXPECT_TRUE(o.can_acquire("me", clock.now(), 15s));
  EXPECT_FALSE(o.can_acquire("you", clock.now(), 15s));
}

TEST(Lease, NextRecordCountsTransitionsAndKeepsAcquireTimeWhenRenewing) {
  net::FakeClock clock;
  LeaseObserver o;
  const auto first = o.next_record("me", 15s, "T0");
  EXPECT_EQ(first.holder, "me");
  EXPECT_EQ(first.lease_transitions, 0);
  EXPECT_EQ(first.acquire_time, "T0");
  o.observe(held_by("other", "T1"), clock.now());
  const auto taken = o.next_record("me", 15s, "T2");
  EXPECT_EQ(taken.lease_transitions, 3);
  EXPECT_EQ(taken.acquire_time, "T2");
  EXPECT_EQ(taken.renew_time, "T2");
  o.observe(taken, clock.now());
  const auto renewed = o.next_record("me", 15s, "T3");
  EXPECT_EQ(renewed.lease_transitions, 3);
  EXPECT_EQ(renewed.acquire_time, "T2");
  EXPECT_EQ(renewed.renew_time, "T3");
  EXPECT_EQ(renewed.lease_duration_seconds, 15);
}
