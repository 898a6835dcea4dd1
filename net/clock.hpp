// Explicit time: components that measure time take a Clock so tests can substitute a
// FakeClock and step time by hand instead of sleeping. Time points are steady_clock
// time points either way, so a fake "now" and a real timer deadline share one type.
#pragma once

#include <atomic>
#include <chrono>

namespace aop::net {

using Duration = std::chrono::steady_clock::duration;
using TimePoint = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

// The real monotonic clock.
class SteadyClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
};

// The process-wide real clock, for production defaults.
inline const Clock& steady_clock() {
  static const SteadyClock clock;
  return clock;
}

// Wall-clock time, for timestamps written to the API (a condition's
// lastTransitionTime), behind the same kind of seam so that tests can fix it.
using WallTime = std::chrono::system_clock::time_point;

class WallClock {
 public:
  virtual ~WallClock() = default;
  virtual WallTime now() const = 0;
};

class SystemWallClock final : public WallClock {
 public:
  WallTime now() const override { return std::chrono::system_clock::now(); }
};

// The process-wide wall clock, for production defaults.
inline const WallClock& wall_clock() {
  static const SystemWallClock clock;
  return clock;
}

// A clock that moves only when told to. Thread-safe: the time is an atomic.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint{} + std::chrono::hours(1))
      : ticks_(start.time_since_epoch().count()) {}

  TimePoint now() const override {
    return TimePoint(Duration(ticks_.load(std::memory_order_acquire)));
  }
  void advance(Duration d) { ticks_.fetch_add(d.count(), std::memory_order_acq_rel); }
  void set(TimePoint t) { ticks_.store(t.time_since_epoch().count(), std::memory_order_release); }

 private:
  std::atomic<Duration::rep> ticks_;  // owned by the atomic: nanoseconds since epoch
};

}  // namespace aop::net
