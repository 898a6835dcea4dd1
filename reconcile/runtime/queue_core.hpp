// The rate-limited work queue's state machine, as a plain value (client-go workqueue
// semantics, kube-rs scheduler's "earliest due time wins"):
//
//   * dirty set + ready FIFO: a key added while it is pending is not queued twice;
//   * processing set: a key handed to a worker is not handed to another until done();
//     a key added meanwhile is remembered (dirty) and queued again by done();
//   * delayed adds wait in a min-heap; a key waiting twice keeps the earliest due time,
//     and an immediate add supersedes a later delayed one;
//   * per-key failures grow an exponential delay (5 ms doubling, capped at 1000 s; at
//     5 s for failures of the API server, see QueuePolicy::api_max_delay), combined with
//     one token bucket for the whole queue by taking the larger of the two (client-go's
//     DefaultControllerRateLimiter); forget() resets the key's failures;
//   * shut_down(drain): adds are ignored from then on; delayed keys are dropped; with
//     drain the keys already queued (and re-adds of in-flight keys) are still handed out,
//     without drain the ready queue is dropped and only in-flight work finishes.
//
// No clock, no timer, no lock: every call takes `now`, and the owner (RateLimitedQueue)
// serializes access and arms one timer for next_due().
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "net/clock.hpp"
#include "net/rate_limiter.hpp"

namespace aop::runtime {

using net::Duration;
using net::TimePoint;

struct QueuePolicy {
  // Per-key backoff: base * 2^(failures - 1), at most max_delay (client-go's
  // ItemExponentialFailureRateLimiter defaults; --queue-backoff-base/-max).
  Duration base_delay = std::chrono::milliseconds(5);
  Duration max_delay = std::chrono::seconds(1000);
  // The cap for a failure of the API server (no answer, throttling, a server error,
  // refused credentials: FailureKind::api). Nothing announces the server's recovery, so
  // only the retry finds it: with this cap a root reports the truth at most this long
  // after the server is back (--queue-api-backoff-max). Input failures keep max_delay:
  // their fix is a change the root hears about.
  Duration api_max_delay = std::chrono::seconds(5);
  // Overall token bucket for retries (client-go's default 10 QPS, burst 100): a storm
  // of failing keys cannot retry faster than this together. qps <= 0 disables it.
  double retry_qps = 10;
  std::uint32_t retry_burst = 100;
};

// What a failure was about, for its backoff cap.
enum class FailureKind {
  input,  // what the root reads or asks for: the fix is a change, an event (max_delay)
  api,    // the API server failed the request; retrying can succeed unchanged (api_max_delay)
};

class QueueCore {
 public:
  explicit QueueCore(QueuePolicy policy, TimePoint now);

  enum class AddResult {
    queued,     // now in the ready queue
    pending,    // already pending (in the ready queue, or re-added in flight): deduplicated
    deferred,   // being processed: queued again by done()
    shut_down,  // ignored
  };
  AddResult add(const std::string& key, TimePoint now);

  // Adds after `delay` (<= 0: now). Keeps the earliest due time of a key.
  void add_after(const std::string& key, Duration delay, TimePoint now);

  // Records a failure and adds the key after its backoff (capped by the kind's cap);
  // returns that delay.
  Duration add_rate_limited(const std::string& key, TimePoint now,
                            FailureKind kind = FailureKind::input);

  // Forgets the key's failures (on success). Does not remove it from the queue.
  void forget(const std::string& key);
  int num_requeues(const std::string& key) const;
  // The delay a key's `failures`-th failure gets from its own backoff (no bucket).
  Duration item_backoff(int failures, FailureKind kind = FailureKind::input) const;

  struct Item {
    std::string key;
    Duration queued_for{};  // time spent in the ready queue
  };
  // Promotes due delayed keys, then hands out the oldest ready key (marking it as
  // processing), or nullopt when none is ready.
  std::optional<Item> get(TimePoint now);

  // The worker finished `key`. Returns how long it was processed (nullopt if the key was
  // not being processed: a programmer error the owner may log).
  std::optional<Duration> done(const std::string& key, TimePoint now);

  // Moves every delayed key due at or before `now` into the ready queue.
  void promote_due(TimePoint now);
  // When the earliest delayed key is due.
  std::optional<TimePoint> next_due();

  void shut_down(bool drain);
  bool is_shut_down() const { return shut_down_; }
  // Shut down and nothing more will ever be handed out: workers may exit.
  bool finished() const;

  std::size_t len() const { return queue_.size(); }  // ready keys (workqueue_depth)
  std::size_t waiting() const { return waiting_due_.size(); }
  std::size_t processing() const { return processing_.size(); }
  bool is_processing(const std::string& key) const { return processing_.contains(key); }

  // Sum of the processing times of in-flight keys, and the longest one.
  Duration unfinished_work(TimePoint now) const;
  Duration longest_running(TimePoint now) const;

 private:
  void push_ready(const std::string& key, TimePoint now);
  void drop_stale_heap_top();

  QueuePolicy policy_;
  net::TokenBucket bucket_;
  bool shut_down_ = false;
  bool drain_ = true;

  std::deque<std::string> queue_;                          // ready keys, FIFO
  std::unordered_set<std::string> dirty_;                  // queued or re-added in flight
  std::unordered_map<std::string, TimePoint> queued_at_;   // when each ready key was queued
  std::unordered_map<std::string, TimePoint> processing_;  // key -> when it was handed out
  std::unordered_map<std::string, int> failures_;

  struct Due {
    TimePoint at;
    std::uint64_t seq;  // FIFO among equal due times
    std::string key;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  // Min-heap with lazy deletion: an entry is live only if waiting_due_[key] == at.
  std::priority_queue<Due, std::vector<Due>, std::greater<>> heap_;
  std::unordered_map<std::string, TimePoint> waiting_due_;
  std::uint64_t seq_ = 0;
};

}  // namespace aop::runtime
