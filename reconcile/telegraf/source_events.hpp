// Warning Events of the telegraf controller: each problem of a source (an annotated
// Namespace or Application) on that object, once per (source, message) until the problem
// goes away: repeating them on every resync would be a write per resync. Also the
// invalid-objects gauge (sources with a problem of their own) and the problems counter.
// Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "k8s/event_recorder.hpp"
#include "k8s/object.hpp"
#include "k8s/resource.hpp"
#include "net/metrics.hpp"
#include "reconcile/runtime/invalid_objects.hpp"
#include "reconcile/telegraf/sources.hpp"

namespace aop::telegraf {

// The object a source's problems are reported on.
struct Subject {
  k8s::GroupVersionKind gvk;
  k8s::ObjectPtr object;
};

class SourceEvents {
 public:
  // `recorder` may be null (no Events; problems are still logged and counted).
  SourceEvents(k8s::EventRecorder* recorder, std::string controller,
               runtime::InvalidObjects& invalid_objects,
               net::metrics::Family<net::metrics::Counter>& problems_total);

  // The problems of the `considered` sources (by SourceRef::str()) now. New ones become
  // Events only while `writing` (this replica leads); they are reported later otherwise.
  void report(const std::map<std::string, Subject>& considered,
              const std::vector<Problem>& problems, bool writing);
  // The source is gone.
  void forget(const SourceRef& ref);
  // Sources with a problem of their own (not an endpoint conflict) right now.
  std::size_t invalid_sources() const;

 private:
  struct Reported {
    std::string uid;
    std::set<std::string> messages;  // reported as Events (and logged) already
    bool invalid = false;            // a problem of the source itself, not a conflict
  };
  k8s::EventRecorder* recorder_;
  const std::string controller_;
  runtime::InvalidObjects& invalid_objects_;
  net::metrics::Family<net::metrics::Counter>& problems_total_;
  mutable std::mutex mutex_;                  // owns reported_
  std::map<std::string, Reported> reported_;  // by SourceRef::str()
};

}  // namespace aop::telegraf
