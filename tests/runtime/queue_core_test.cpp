// The work queue's state machine with a fake clock: deduplication, one key in flight at
// a time, delayed adds (earliest due time wins), per-key backoff and the overall token
// bucket, forget(), and shutdown with and without draining.
#include "reconcile/runtime/queue_core.hpp"

#include <gtest/gtest.h>

namespace aop::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

QueuePolicy unlimited_bucket() {
  QueuePolicy p;
  p.retry_qps = 0;  // only the per-key backoff
  return p;
}

std::string get_key(QueueCore& q, TimePoint now) {
  auto item = q.get(now);
  return item ? item->key : "<none>";
}

TEST(QueueCore, PendingKeysAreDeduplicatedAndHandedOutInOrder) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  EXPECT_EQ(q.add("a", clock.now()), QueueCore::AddResult::queued);
  EXPECT_EQ(q.add("b", clock.now()), QueueCore::AddResult::queued);
  EXPECT_EQ(q.add("a", clock.now()), QueueCore::AddResult::pending);
  EXPECT_EQ(q.len(), 2u);
  EXPECT_EQ(get_key(q, clock.now()), "a");
  EXPECT_EQ(get_key(q, clock.now()), "b");
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
}

TEST(QueueCore, AKeyInFlightIsNotHandedOutAgainUntilDoneThenRunsOnce) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  q.add("a", clock.now());
  ASSERT_EQ(get_key(q, clock.now()), "a");
  // Re-added (twice) while a worker holds it: remembered, but not handed out.
  EXPECT_EQ(q.add("a", clock.now()), QueueCore::AddResult::deferred);
  EXPECT_EQ(q.add("a", clock.now()), QueueCore::AddResult::pending);
  EXPECT_EQ(q.len(), 0u);
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
  EXPECT_TRUE(q.is_processing("a"));
  clock.advance(milliseconds(30));
  EXPECT_EQ(q.done("a", clock.now()), milliseconds(30));
  // Exactly one more run for both re-adds.
  EXPECT_EQ(get_key(q, clock.now()), "a");
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
  q.done("a", clock.now());
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
}

TEST(QueueCore, DoneForAKeyNotInFlightIsReported) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  EXPECT_FALSE(q.done("x", clock.now()).has_value());
}

TEST(QueueCore, DelayedAddsBecomeReadyWhenDue) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  q.add_after("a", seconds(10), clock.now());
  q.add_after("b", seconds(5), clock.now());
  EXPECT_EQ(q.waiting(), 2u);
  EXPECT_EQ(q.next_due(), clock.now() + seconds(5));
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
  clock.advance(seconds(5));
  EXPECT_EQ(get_key(q, clock.now()), "b");
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
  clock.advance(seconds(5));
  EXPECT_EQ(get_key(q, clock.now()), "a");
  EXPECT_FALSE(q.next_due().has_value());
}

TEST(QueueCore, TheEarliestDueTimeOfAKeyWins) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  const TimePoint t0 = clock.now();
  q.add_after("a", seconds(10), t0);
  q.add_after("a", seconds(3), t0);   // earlier: replaces
  q.add_after("a", seconds(20), t0);  // later: ignored
  EXPECT_EQ(q.waiting(), 1u);
  EXPECT_EQ(q.next_due(), t0 + seconds(3));
  clock.advance(seconds(3));
  EXPECT_EQ(get_key(q, clock.now()), "a");
  q.done("a", clock.now());
  // Nothing else left behind by the superseded entries.
  clock.advance(seconds(30));
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
}

TEST(QueueCore, AnImmediateAddSupersedesADelayedOne) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  q.add_after("a", seconds(10), clock.now());
  q.add("a", clock.now());
  EXPECT_EQ(q.waiting(), 0u);
  EXPECT_EQ(get_key(q, clock.now()), "a");
  q.done("a", clock.now());
  clock.advance(seconds(10));
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
  // And a delayed add of a key already ready changes nothing.
  q.add("b", clock.now());
  q.add_after("b", seconds(1), clock.now());
  EXPECT_EQ(q.waiting(), 0u);
}

TEST(QueueCore, ADelayedKeyDueWhileInFlightRunsAfterDone) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  q.add("a", clock.now());
  ASSERT_EQ(get_key(q, clock.now()), "a");
  q.add_after("a", seconds(1), clock.now());
  clock.advance(seconds(2));
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
  q.done("a", clock.now());
  EXPECT_EQ(get_key(q, clock.now()), "a");
}

TEST(QueueCore, PerKeyBackoffDoublesFromFiveMillisecondsUpToTheCapAndForgetResetsIt) {
  net::FakeClock clock;
  QueueCore q(unlimited_bucket(), clock.now());
  const std::vector<Duration> expected = {milliseconds(5), milliseconds(10), milliseconds(20),
                                          milliseconds(40), milliseconds(80)};
  for (const Duration want : expected) {
    EXPECT_EQ(q.add_rate_limited("a", clock.now()), want);
    clock.advance(want);
    ASSERT_EQ(get_key(q, clock.now()), "a");
    q.done("a", clock.now());
  }
  EXPECT_EQ(q.num_requeues("a"), 5);
  // Another key has its own backoff.
  EXPECT_EQ(q.add_rate_limited("b", clock.now()), milliseconds(5));
  // Far enough along, the delay stops at 1000 s.
  for (int i = 0; i < 40; ++i) q.add_rate_limited("c", clock.now());
  EXPECT_EQ(q.add_rate_limited("c", clock.now()), seconds(1000));
  // Success: forget() starts over.
  q.forget("a");
  EXPECT_EQ(q.num_requeues("a"), 0);
  EXPECT_EQ(q.add_rate_limited("a", clock.now()), milliseconds(5));
}

TEST(QueueCore, BackoffBaseAndCapAreConfigurable) {
  net::FakeClock clock;
  QueuePolicy p = unlimited_bucket();
  p.base_delay = milliseconds(100);
  p.max_delay = milliseconds(350);
  QueueCore q(p, clock.now());
  EXPECT_EQ(q.add_rate_limited("a", clock.now()), milliseconds(100));
  EXPECT_EQ(q.add_rate_limited("a", clock.now()), milliseconds(200));
  EXPECT_EQ(q.add_rate_limited("a", clock.now()), milliseconds(350));
  EXPECT_EQ(q.add_rate_limited("a", clock.now()), milliseconds(350));
}

// A failure of the API server is retried at most api_max_delay apart, however often it
// failed: nothing but the retry will notice that the server is back. Other failures keep
// growing to max_delay.
TEST(QueueCore, FailuresOfTheApiServerHaveTheirOwnCap) {
  net::FakeClock clock;
  QueuePolicy p = unlimited_bucket();
  p.api_max_delay = seconds(2);
  QueueCore q(p, clock.now());
  Duration last{};
  for (int i = 0; i < 30; ++i) last = q.add_rate_limited("a", clock.now(), FailureKind::api);
  EXPECT_EQ(last, seconds(2));
  EXPECT_EQ(q.num_requeues("a"), 30);
  for (int i = 0; i < 30; ++i) last = q.add_rate_limited("b", clock.now());
  EXPECT_EQ(last, seconds(1000));
  // The kind of the latest failure decides: an API failure after input failures.
  EXPECT_EQ(q.add_rate_limited("b", clock.now(), FailureKind::api), seconds(2));
  // Below the cap, both kinds grow alike.
  EXPECT_EQ(q.item_backoff(3, FailureKind::api), milliseconds(20));
  // A cap above max_delay does not raise it.
  p.api_max_delay = seconds(5000);
  EXPECT_EQ(QueueCore(p, clock.now()).item_backoff(40, FailureKind::api), seconds(1000));
}

TEST(QueueCore, TheTokenBucketPacesRetriesOfManyKeys) {
  net::FakeClock clock;
  QueuePolicy p;
  p.retry_qps = 10;
  p.retry_burst = 3;
  QueueCore q(p, clock.now());
  // The first three failures fit the burst and get only their own 5 ms backoff; after
  // that each further retry waits 100 ms (1/qps) behind the previous one.
  std::vector<Duration> delays;
  delays.reserve(6);
  for (int i = 0; i < 6; ++i) {
    delays.push_back(q.add_rate_limited("k" + std::to_string(i), clock.now()));
  }
  EXPECT_EQ(delays,
            (std::vector<Duration>{milliseconds(5), milliseconds(5), milliseconds(5),
                                   milliseconds(100), milliseconds(200), milliseconds(300)}));
  // The keys become ready at those times, not before.
  clock.advance(milliseconds(5));
  std::vector<std::string> ready;
  while (auto item = q.get(clock.now())) ready.push_back(item->key);
  EXPECT_EQ(ready, (std::vector<std::string>{"k0", "k1", "k2"}));
  clock.advance(milliseconds(95));
  EXPECT_EQ(get_key(q, clock.now()), "k3");
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
  clock.advance(milliseconds(200));
  EXPECT_EQ(get_key(q, clock.now()), "k4");
  EXPECT_EQ(get_key(q, clock.now()), "k5");
}

TEST(QueueCore, QueueDurationIsMeasuredFromTheAdd) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  q.add("a", clock.now());
  clock.advance(milliseconds(250));
  auto item = q.get(clock.now());
  ASSERT_TRUE(item);
  EXPECT_EQ(item->queued_for, milliseconds(250));
}

TEST(QueueCore, ShutdownWithDrainStillHandsOutQueuedKeysAndReAddsInFlight) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  q.add("a", clock.now());
  q.add("b", clock.now());
  q.add_after("later", seconds(1), clock.now());
  ASSERT_EQ(get_key(q, clock.now()), "a");
  q.add("a", clock.now());  // re-added in flight
  q.shut_down(/*drain=*/true);
  EXPECT_EQ(q.add("c", clock.now()), QueueCore::AddResult::shut_down);
  EXPECT_EQ(q.waiting(), 0u);  // delayed keys are dropped
  EXPECT_FALSE(q.finished());
  EXPECT_EQ(get_key(q, clock.now()), "b");
  q.done("b", clock.now());
  EXPECT_FALSE(q.finished());  // "a" will come back
  q.done("a", clock.now());
  EXPECT_EQ(get_key(q, clock.now()), "a");
  EXPECT_TRUE(q.finished());
  q.done("a", clock.now());
  clock.advance(seconds(2));
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
}

TEST(QueueCore, ShutdownWithoutDrainDropsQueuedKeys) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  q.add("a", clock.now());
  q.add("b", clock.now());
  ASSERT_EQ(get_key(q, clock.now()), "a");
  q.add("a", clock.now());
  q.shut_down(/*drain=*/false);
  EXPECT_TRUE(q.finished());
  EXPECT_EQ(q.len(), 0u);
  EXPECT_EQ(q.processing(), 1u);  // in-flight work still finishes
  q.done("a", clock.now());
  EXPECT_EQ(get_key(q, clock.now()), "<none>");
}

TEST(QueueCore, UnfinishedWorkAndLongestRunningProcessor) {
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  q.add("a", clock.now());
  q.add("b", clock.now());
  q.get(clock.now());
  clock.advance(seconds(3));
  q.get(clock.now());
  clock.advance(seconds(1));
  EXPECT_EQ(q.unfinished_work(clock.now()), seconds(5));
  EXPECT_EQ(q.longest_running(clock.now()), seconds(4));
}

}  // namespace
}  // namespace aop::runtime
