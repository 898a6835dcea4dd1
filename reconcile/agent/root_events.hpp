// What the Grafana Agent controller reports about a root beyond its status: one Warning
// Event on the GrafanaAgent and one log line each time the root's problems or the error
// its reconcile ended with change (never once per resync: an unchanged resync writes
// nothing), and the gauge agent_operator_invalid_objects{controller,kind}. Thread-safe.
//
// The Event: the error's reason and message when the reconcile failed (a refusal by the
// validate stage lists the problems in its message), else InvalidMembers summarising the
// problems (the first few; all of them are in status.problems).
//
// Normal Events on the GrafanaAgent for what an apply changed (Created, Updated,
// Recreated, Pruned: runtime::change_events), only when it changed something, so an
// unchanged resync writes nothing either.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "k8s/event_recorder.hpp"
#include "k8s/object.hpp"
#include "net/metrics.hpp"
#include "reconcile/agent/kinds.hpp"
#include "reconcile/runtime/apply.hpp"
#include "reconcile/runtime/errors.hpp"
#include "reconcile/runtime/invalid_objects.hpp"

namespace aop::agent {

class RootEvents {
 public:
  // `recorder` may be null (no Events; the log line and the gauge stay). `registry`
  // nullptr: the process-wide one.
  RootEvents(k8s::EventRecorder* recorder, std::string controller,
             net::metrics::Registry* registry = nullptr);

  // After a reconcile of `root`: its problems (nullptr when this reconcile did not get as
  // far as knowing them: the last known stay) and the error it ended with (nullopt: it
  // succeeded).
  void report(const std::string& root, const k8s::Object& agent,
              const std::vector<Problem>* problems, const std::optional<runtime::Failure>& failure);
  // What the root's apply changed (nothing recorded when it changed nothing).
  void applied(const k8s::Object& agent, const runtime::ApplyReport& report);
  // A Normal Event on the root (the steps of a switch between backends).
  void normal(const k8s::Object& agent, std::string reason, std::string message);
  // The root is gone.
  void forget(const std::string& root);

  // Distinct objects of this kind found invalid now, over every root.
  std::size_t invalid_objects(Kind kind) const;

 private:
  struct Reported {
    std::set<std::string> problems;           // Problem::str() of the problems reported
    std::optional<runtime::Failure> failure;  // the error reported
  };

  k8s::EventRecorder* recorder_;
  const std::string controller_;
  runtime::InvalidObjects invalid_;
  std::mutex mutex_;  // owns reported_
  std::map<std::string, Reported> reported_;
};

}  // namespace aop::agent
