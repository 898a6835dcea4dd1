// Status conditions and Events for roots.
//
// Conditions follow the Kubernetes convention (metav1.Condition): type, status
// (True/False/Unknown), reason (CamelCase), message, observedGeneration and
// lastTransitionTime, which changes only when the status of that condition changes.
// StatusWriter writes through the status subresource and only when something differs
// from what the cache holds, so an unchanged resync writes nothing; a conflict re-reads
// the object and merges again. Messages must not contain secret values.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "k8s/api_client.hpp"
#include "k8s/event_recorder.hpp"
#include "k8s/object.hpp"
#include "net/clock.hpp"
#include "reconcile/runtime/apply.hpp"

namespace aop::runtime {

struct Condition {
  std::string type;    // e.g. Reconciled, Ready
  std::string status;  // "True", "False" or "Unknown"
  std::string reason;  // CamelCase, e.g. InvalidSpec
  std::string message;
  std::int64_t observed_generation = 0;
};

// Sets `desired` conditions in `existing` (a status.conditions array), keeping the
// others. A condition whose status did not change keeps its lastTransitionTime; a new
// or flipped one gets `now`. Returns the resulting array; `changed` tells whether it
// differs from `existing`.
boost::json::array merge_conditions(const boost::json::array& existing,
                                    const std::vector<Condition>& desired, std::string_view now,
                                    bool& changed);

struct StatusUpdate {
  std::vector<Condition> conditions;
  // Other status fields to set (each replaces the field), e.g. observedGeneration.
  boost::json::object fields;
  // Types of conditions to remove (a condition that no longer applies).
  std::vector<std::string> removed_conditions;
};

struct StatusWriterOptions {
  std::function<net::WallTime()> now = [] { return net::wall_clock().now(); };
  std::function<bool()> may_write;  // leader election; nullptr = always
  int conflict_retries = 3;
};

class StatusWriter {
 public:
  StatusWriter(k8s::ApiClient& client, StatusWriterOptions options = {});

  // Applies `update` to the status of `current` (the cached root). Returns whether a
  // write was made (false: nothing changed, or writes are disabled). NotFound (the root
  // is gone) is not an error: nothing to write.
  boost::asio::awaitable<k8s::ApiResult<bool>> update(const k8s::GroupVersionKind& gvk,
                                                      const k8s::ObjectPtr& current,
                                                      const StatusUpdate& update);

  // The status `update` would produce from `status`; `changed` tells whether it differs.
  boost::json::object merged_status(const boost::json::object& status, const StatusUpdate& update,
                                    bool& changed) const;

 private:
  k8s::ApiClient& client_;
  StatusWriterOptions options_;
};

// The Event subject for an object (kind and apiVersion from `gvk`: cached objects from a
// LIST may lack them).
k8s::EventSubject event_subject(const k8s::GroupVersionKind& gvk, const k8s::Object& object);

// What an apply changed, as the Normal Events to record on its root: one per kind of
// change (reason Created, Updated, Recreated or Pruned, in that order) naming the objects
// ("updated Secret ns/a-config, StatefulSet ns/a"; at most kObjectsInChangeEvent, then
// "and N more"). None when nothing changed. The same change makes the same message, so
// the recorder folds repeats into one Event whose count goes up.
inline constexpr std::size_t kObjectsInChangeEvent = 5;
struct ChangeEvent {
  std::string reason;
  std::string message;
  bool operator==(const ChangeEvent&) const = default;
};
std::vector<ChangeEvent> change_events(const ApplyReport& report);

}  // namespace aop::runtime
