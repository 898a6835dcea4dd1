// Exponential backoff as a value, driven by a fake clock.
#include "net/backoff.hpp"

#include <gtest/gtest.h>

#include <set>

namespace aop::net {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

BackoffPolicy no_jitter() {
  BackoffPolicy p;
  p.jitter = 0;
  return p;
}

TEST(Backoff, GrowsByFactorUpToTheCap) {
  FakeClock clock;
  Backoff backoff(no_jitter(), 1);
  const std::vector<milliseconds> expected = {
      milliseconds(800),   milliseconds(1600),  milliseconds(3200),  milliseconds(6400),
      milliseconds(12800), milliseconds(25600), milliseconds(30000), milliseconds(30000)};
  for (const auto want : expected) {
    const Duration got = backoff.next(clock.now());
    EXPECT_EQ(got, want);
    clock.advance(got);  // retried immediately after waiting, and failed again
  }
  EXPECT_EQ(backoff.failures(), 8);
}

TEST(Backoff, JitterStaysWithinBoundsAndVaries) {
  BackoffPolicy policy;  // jitter 0.5: delay in [base/2, base]
  FakeClock clock;
  std::set<Duration::rep> distinct;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Backoff backoff(policy, seed);
    Duration base = policy.initial;
    for (int i = 0; i < 10; ++i) {
      const Duration got = backoff.next(clock.now());
      EXPECT_GE(got, base / 2) << "seed " << seed << " step " << i;
      EXPECT_LE(got, base) << "seed " << seed << " step " << i;
      EXPECT_LE(got, policy.cap);
      distinct.insert(got.count());
      base = std::min<Duration>(base * 2, policy.cap);
    }
  }
  EXPECT_GT(distinct.size(), 1000u) << "jitter should spread delays";
}

TEST(Backoff, SameSeedSameDelays) {
  FakeClock clock;
  Backoff a(BackoffPolicy{}, 7), b(BackoffPolicy{}, 7);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.next(clock.now()), b.next(clock.now()));
}

TEST(Backoff, ResetsAfterAHealthyPeriod) {
  FakeClock clock;
  Backoff backoff(no_jitter(), 1);
  for (int i = 0; i < 5; ++i) clock.advance(backoff.next(clock.now()));
  EXPECT_EQ(backoff.next(clock.now()), milliseconds(25600));
  // The retry succeeded and the watch ran for just under two minutes: still backing off.
  clock.advance(milliseconds(25600) + minutes(2) - milliseconds(1));
  EXPECT_EQ(backoff.next(clock.now()), seconds(30));
  // Healthy for two minutes after the retry started: start over.
  clock.advance(seconds(30) + minutes(2));
  EXPECT_EQ(backoff.next(clock.now()), milliseconds(800));
  EXPECT_EQ(backoff.failures(), 1);
}

TEST(Backoff, ExplicitReset) {
  FakeClock clock;
  Backoff backoff(no_jitter(), 1);
  backoff.next(clock.now());
  backoff.next(clock.now());
  backoff.reset();
  EXPECT_EQ(backoff.next(clock.now()), milliseconds(800));
}

TEST(Backoff, HugeFactorDoesNotOverflow) {
  BackoffPolicy p = no_jitter();
  p.factor = 1e12;
  p.cap = std::chrono::hours(1);
  FakeClock clock;
  Backoff backoff(p, 1);
  backoff.next(clock.now());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(backoff.next(clock.now()), std::chrono::hours(1));
}

TEST(Backoff, InitialAboveCapIsCapped) {
  BackoffPolicy p = no_jitter();
  p.initial = seconds(100);
  FakeClock clock;
  Backoff backoff(p, 1);
  EXPECT_EQ(backoff.next(clock.now()), seconds(30));
}

}  // namespace
}  // namespace aop::net
