// Warning Events of the Grafana Agent controller: each problem on the member it names
// (InvalidMember for a member left out, MemberWarning for a suspect one) and a summary on
// the GrafanaAgent (InvalidMembers); the error a reconcile ended with on the GrafanaAgent,
// with its condition reason. Emitted when a root's problems or error change, not on
// every resync (an unchanged resync writes nothing). Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "k8s/event_recorder.hpp"
#include "k8s/object.hpp"
#include "reconcile/agent/kinds.hpp"
#include "reconcile/runtime/errors.hpp"

namespace aop::agent {

class RootEvents {
 public:
  // The cached object a problem names, for the Event's subject (nullptr when not cached:
  // the Event then names it without a UID).
  using Lookup = std::function<k8s::ObjectPtr(Kind, const k8s::ObjectKey&)>;

  // `recorder` may be null (no Events; problems are still logged once).
  RootEvents(k8s::EventRecorder* recorder, std::string controller, Lookup lookup);

  // The root's problems now (their first report is an Event each and a summary).
  void problems(const std::string& root, const k8s::Object& agent,
                const std::vector<Problem>& problems);
  // The error the root's reconcile ended with; nullopt: it succeeded.
  void error(const std::string& root, const k8s::Object& agent,
             const std::optional<runtime::Failure>& failure);
  // The root is gone.
  void forget(const std::string& root);

 private:
  struct Reported {
    std::set<std::string> problems;           // Problem::str() of the problems reported
    std::optional<runtime::Failure> failure;  // the error reported
  };

  k8s::EventRecorder* recorder_;
  const std::string controller_;
  const Lookup lookup_;
  std::mutex mutex_;  // owns reported_
  std::map<std::string, Reported> reported_;
};

}  // namespace aop::agent
