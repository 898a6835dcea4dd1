// Internal: the client's deadlines. Beast's tcp_stream arms and cancels a timer on
// every read and write, which on a multi-threaded io_context means a cancelled-timer
// completion (and usually a wake-up of another thread) per 16 KB TLS record. A watchdog
// instead keeps one timer per connection: moving the deadline later (the common case: a
// new read of a stream, the next part of a response) only stores a time; when the timer
// fires before the deadline it is re-armed for the rest. When a deadline passes it runs
// `on_expire` (which closes the transport, so pending operations fail) and expired()
// tells the caller that the failure is a timeout.
//
// Everything here runs on the owner's strand: set() and clear() are called by the
// owner's operations, the timer's handler runs on the timer's executor (the strand).
// The handler holds a weak reference to the owner, so destroying the owner (from any
// thread, once no operation runs) is safe and never waits for the timer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>

#include "net/clock.hpp"

namespace aop::net::detail {

class Watchdog {
 public:
  // `owner` is the object this watchdog is part of (its handler keeps it alive while
  // it runs and does nothing once it is gone).
  Watchdog(const boost::asio::any_io_executor& strand, std::function<void()> on_expire)
      : timer_(strand), on_expire_(std::move(on_expire)) {}

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void set_owner(std::weak_ptr<void> owner) { owner_ = std::move(owner); }

  // From now, on_expire runs if `d` passes before the next set() or clear().
  void set(Duration d) {
    const auto now = std::chrono::steady_clock::now();
    deadline_ = d >= Duration::max() - now.time_since_epoch() ? TimePoint::max() : now + d;
    if (deadline_ == TimePoint::max()) return;
    // An armed timer that fires no later than the deadline will catch it (re-arming
    // itself if early); one armed for later must be brought forward.
    if (!armed_ || armed_for_ > deadline_) arm(deadline_);
  }

  // No deadline for now, keeping the timer armed (it stops when it fires): for a pause
  // between operations that will set() again soon, at no cost.
  void pause() { deadline_ = TimePoint::max(); }

  // No deadline; cancels the timer so that it does not keep the io_context busy.
  void clear() {
    deadline_ = TimePoint::max();
    if (armed_) {
      ++generation_;  // the cancelled wait's handler is stale
      armed_ = false;
      timer_.cancel();
    }
  }

  // A deadline passed (since the last reset_expired()): operations failed because
  // on_expire closed the transport.
  bool expired() const { return expired_; }
  void reset_expired() { expired_ = false; }

 private:
  void arm(TimePoint at) {
    ++generation_;
    armed_ = true;
    armed_for_ = at;
    timer_.expires_at(at);
    timer_.async_wait([owner = owner_, self = this,
                       generation = generation_](const boost::system::error_code& ec) {
      const auto keep = owner.lock();
      if (!keep) return;  // the owner is gone
      self->fired(ec, generation);
    });
  }

  void fired(const boost::system::error_code& ec, std::uint64_t generation) {
    if (generation != generation_) return;  // superseded by a later arm() or clear()
    armed_ = false;
    if (ec == boost::asio::error::operation_aborted || deadline_ == TimePoint::max()) return;
    if (std::chrono::steady_clock::now() < deadline_) {
      arm(deadline_);  // the deadline moved later since the timer was armed
      return;
    }
    deadline_ = TimePoint::max();
    expired_ = true;
    if (on_expire_) on_expire_();
  }

  boost::asio::steady_timer timer_;
  std::function<void()> on_expire_;
  std::weak_ptr<void> owner_;
  TimePoint deadline_ = TimePoint::max();
  TimePoint armed_for_{};
  bool armed_ = false;
  bool expired_ = false;
  std::uint64_t generation_ = 0;
};

}  // namespace aop::net::detail
