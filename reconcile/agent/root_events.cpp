#include "reconcile/agent/root_events.hpp"

#include <utility>

#include "net/log.hpp"
#include "reconcile/runtime/status.hpp"

namespace aop::agent {

namespace {

// Problems quoted in the summary Event and log line (the rest: status.problems).
constexpr std::size_t kProblemsInSummary = 3;

std::string summary(const std::vector<Problem>& problems) {
  std::size_t errors = 0;
  for (const auto& p : problems) errors += p.severity == Severity::error ? 1 : 0;
  std::string out = std::to_string(errors) + " invalid, " +
                    std::to_string(problems.size() - errors) + " suspect: ";
  for (std::size_t i = 0; i < problems.size() && i < kProblemsInSummary; ++i) {
    if (i > 0) out += "; ";
    out += problems[i].str();
  }
  if (problems.size() > kProblemsInSummary) {
    out += "; and " + std::to_string(problems.size() - kProblemsInSummary) +
           " more (see status.problems)";
  }
  return out;
}

// A refusal whose message already lists the root's problems.
bool lists_problems(const runtime::Failure& f) {
  return f.code == runtime::Errc::validation_failed ||
         f.code == runtime::Errc::asset_resolution_failed;
}

}  // namespace

RootEvents::RootEvents(k8s::EventRecorder* recorder, std::string controller,
                       net::metrics::Registry* registry)
    : recorder_(recorder), controller_(std::move(controller)), invalid_(controller_, registry) {}

void RootEvents::report(const std::string& root, const k8s::Object& agent,
                        const std::vector<Problem>* problems,
                        const std::optional<runtime::Failure>& failure) {
  bool problems_changed = false;
  bool failure_changed = false;
  {
    const std::lock_guard lock(mutex_);
    auto& r = reported_[root];
    if (problems != nullptr) {
      std::set<std::string> now;
      for (const auto& p : *problems) now.insert(p.str());
      problems_changed = r.problems != now;
      r.problems = std::move(now);
    }
    failure_changed = r.failure != failure;
    r.failure = failure;
  }

  // The gauge: the objects with an error (a root that does not decode is one itself).
  const bool undecodable = failure && failure->code == runtime::Errc::invalid_spec;
  if (problems != nullptr || undecodable) {
    std::set<runtime::InvalidObject> invalid;
    if (problems != nullptr) {
      for (const auto& p : *problems) {
        if (p.severity == Severity::error)
          invalid.insert({p.kind.kind, p.object.ns, p.object.name});
      }
    }
    if (undecodable) {
      invalid.insert(
          {gvk(Kind::grafana_agent).kind, std::string(agent.ns()), std::string(agent.name())});
    }
    invalid_.set(root, std::move(invalid));
  }

  const bool new_failure = failure_changed && failure.has_value();
  const bool new_problems = problems_changed && !problems->empty();
  if (!new_failure && !new_problems) return;
  std::string reason;
  std::string message;
  if (new_failure) {
    // An invalid backend annotation is an invalid spec of the root to whoever reads
    // Events (the Reconciled condition names the backend).
    reason = runtime::reason(failure->code == runtime::Errc::invalid_backend
                                 ? runtime::Errc::invalid_spec
                                 : failure->code);
    message = failure->message;
  }
  if (new_problems && !(new_failure && lists_problems(*failure))) {
    // A problem the failure's message already states (an object the root does not own)
    // is not said twice.
    std::vector<Problem> unstated;
    for (const auto& p : *problems) {
      if (!new_failure || failure->message.find(p.message) == std::string::npos) {
        unstated.push_back(p);
      }
    }
    if (!new_failure) {
      reason = "InvalidMembers";
      message = summary(unstated);
    } else if (!unstated.empty()) {
      message += " (and " + summary(unstated) + ")";
    }
  }
  net::log::warn(
      "grafana agent reconcile problems",
      {{"controller", controller_}, {"root", root}, {"reason", reason}, {"message", message}});
  if (recorder_ == nullptr) return;
  recorder_->record(runtime::event_subject(gvk(Kind::grafana_agent), agent),
                    k8s::EventType::warning, std::move(reason), std::move(message));
}

void RootEvents::applied(const k8s::Object& agent, const runtime::ApplyReport& report) {
  if (recorder_ == nullptr) return;
  for (auto& change : runtime::change_events(report)) {
    recorder_->record(runtime::event_subject(gvk(Kind::grafana_agent), agent),
                      k8s::EventType::normal, std::move(change.reason), std::move(change.message));
  }
}

void RootEvents::normal(const k8s::Object& agent, std::string reason, std::string message) {
  if (recorder_ == nullptr) return;
  recorder_->record(runtime::event_subject(gvk(Kind::grafana_agent), agent), k8s::EventType::normal,
                    std::move(reason), std::move(message));
}

void RootEvents::forget(const std::string& root) {
  invalid_.forget(root);
  const std::lock_guard lock(mutex_);
  reported_.erase(root);
}

std::size_t RootEvents::invalid_objects(Kind kind) const {
  return invalid_.count(gvk(kind).kind);
}

}  // namespace aop::agent
