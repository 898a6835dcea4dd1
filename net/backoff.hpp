// Exponential backoff with jitter, as a plain value: the caller reports a failure and
// the time, and gets back how long to wait. No timers, no threads: a reflector or a
// reconnect loop owns one Backoff and sleeps on its own timer for the returned delay.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>

#include "net/clock.hpp"

namespace aop::net {

struct BackoffPolicy {
  // Defaults follow client-go's reflector (800 ms doubling to 30 s, reset after two
  // minutes of health): gentle on an API server that restarts under many clients.
  Duration initial = std::chrono::milliseconds(800);
  double factor = 2.0;
  Duration cap = std::chrono::seconds(30);
  // Each delay is drawn uniformly from [base * (1 - jitter), base], so clients that
  // failed together do not retry together, and the cap is never exceeded. 0 = none.
  double jitter = 0.5;
  // A failure this long after the previous retry started means the connection was
  // healthy in between: start over from `initial`.
  Duration reset_after = std::chrono::minutes(2);
};

// A seed for jitter: from a per-thread generator seeded once from std::random_device
// (constructing a random_device per API request showed in the operator's profile).
std::uint64_t random_seed();

class Backoff {
 public:
  // `seed` makes the jitter reproducible in tests; production passes a random seed.
  explicit Backoff(BackoffPolicy policy = {}, std::uint64_t seed = random_seed());

  // A failure happened at `now`: how long to wait before the next attempt.
  Duration next(TimePoint now);

  // Forget past failures (e.g. after an explicit success signal).
  void reset();

  // Failures counted since the last reset (0 after reset).
  int failures() const { return failures_; }
  const BackoffPolicy& policy() const { return policy_; }

 private:
  BackoffPolicy policy_;
  Duration base_;                      // the un-jittered delay for the next failure
  std::optional<TimePoint> retry_at_;  // when the last returned delay ends
  int failures_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace aop::net
