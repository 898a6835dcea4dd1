// The pure core of leader election: a coordination.k8s.io/v1 Lease's record, and the
// decision whether this process may take the lease, judged from when *this process*
// observed the record change (never from the timestamps other processes wrote, so
// clock skew between replicas cannot make two leaders).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/fwd.hpp>

#include "net/clock.hpp"

namespace aop::k8s {

// spec of a Lease. Times are metav1.MicroTime strings ("2024-03-01T10:00:00.123456Z").
struct LeaseRecord {
  std::string holder;  // holderIdentity; "" = free (released)
  int lease_duration_seconds = 0;
  std::string acquire_time;
  std::string renew_time;
  int lease_transitions = 0;

  bool operator==(const LeaseRecord&) const = default;
};

LeaseRecord lease_record_from(const boost::json::value& lease);
// Writes the record into a Lease object's spec (creating spec if needed).
void set_lease_record(boost::json::value& lease, const LeaseRecord& record);
// A new Lease object (for create).
boost::json::value make_lease(std::string_view ns, std::string_view name,
                              const LeaseRecord& record);
// metav1.MicroTime for a wall-clock time.
std::string micro_time(std::chrono::system_clock::time_point t);

class LeaseObserver {
 public:
  // Records the lease as read (or written) at `now`. The observation time moves only
  // when the record differs from the previous one: a holder that stops renewing leaves
  // the record unchanged, and its lease expires lease_duration after we last saw it
  // change. Returns true when the record changed.
  bool observe(const LeaseRecord& record, net::TimePoint now);

  // Whether `identity` may write itself as holder at `now`: the lease is free, already
  // ours, or its holder has not renewed for the lease's duration as observed here.
  // `fallback_duration` applies when the record carries no duration.
  bool can_acquire(std::string_view identity, net::TimePoint now,
                   net::Duration fallback_duration) const;

  // The record to write to take or keep the lease.
  LeaseRecord next_record(std::string_view identity, std::chrono::seconds lease_duration,
                          std::string_view now_micro_time) const;

  const std::optional<LeaseRecord>& record() const { return record_; }
  net::TimePoint observed_at() const { return observed_at_; }

 private:
  std::optional<LeaseRecord> record_;
  net::TimePoint observed_at_{};
};

}  // namespace aop::k8s
