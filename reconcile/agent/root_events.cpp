#include "reconcile/agent/root_events.hpp"

#include <utility>

#include "net/log.hpp"
#include "reconcile/runtime/status.hpp"

namespace aop::agent {

namespace {

// Problems quoted in the GrafanaAgent's summary Event (the rest: status.problems).
constexpr std::size_t kProblemsInSummary = 3;

}  // namespace

RootEvents::RootEvents(k8s::EventRecorder* recorder, std::string controller, Lookup lookup)
    : recorder_(recorder), controller_(std::move(controller)), lookup_(std::move(lookup)) {}

void RootEvents::problems(const std::string& root, const k8s::Object& agent,
                          const std::vector<Problem>& problems) {
  std::set<std::string> now;
  for (const auto& p : problems) now.insert(p.str());
  std::set<std::string> before;
  {
    const std::lock_guard lock(mutex_);
    auto& r = reported_[root];
    if (r.problems == now) return;
    before = std::exchange(r.problems, now);
  }
  if (problems.empty() || recorder_ == nullptr) return;
  for (const auto& p : problems) {
    if (before.contains(p.str())) continue;  // reported already
    net::log::warn("hierarchy member problem",
                   {{"controller", controller_}, {"root", root}, {"problem", p.str()}});
    // On the member itself; the Problem names the field, never data.
    const auto kind = kind_of(p.kind);
    if (!kind || (*kind == Kind::grafana_agent && p.object == agent.key())) continue;
    std::optional<k8s::EventSubject> subject;
    if (const auto obj = lookup_(*kind, p.object)) {
      subject = runtime::event_subject(p.kind, *obj);
    } else if (!p.object.name.empty()) {
      subject = k8s::EventSubject{};
      subject->api_version = p.kind.api_version();
      subject->kind = p.kind.kind;
      subject->ns = p.object.ns;
      subject->name = p.object.name;
    }
    if (!subject) continue;
    std::string message = p.field.empty() ? p.message : p.field + ": " + p.message;
    message += " (in the hierarchy of GrafanaAgent " + root + ")";
    recorder_->record(*subject, k8s::EventType::warning,
                      p.severity == Severity::error ? "InvalidMember" : "MemberWarning",
                      std::move(message));
  }
  std::string summary = std::to_string(problems.size()) + " member problem(s): ";
  for (std::size_t i = 0; i < problems.size() && i < kProblemsInSummary; ++i) {
    if (i > 0) summary += "; ";
    summary += problems[i].str();
  }
  if (problems.size() > kProblemsInSummary) {
    summary += "; and " + std::to_string(problems.size() - kProblemsInSummary) +
               " more (see status.problems)";
  }
  recorder_->record(runtime::event_subject(gvk(Kind::grafana_agent), agent),
                    k8s::EventType::warning, "InvalidMembers", std::move(summary));
}

void RootEvents::error(const std::string& root, const k8s::Object& agent,
                       const std::optional<runtime::Failure>& failure) {
  {
    const std::lock_guard lock(mutex_);
    auto& r = reported_[root];
    if (r.failure == failure) return;
    r.failure = failure;
  }
  if (!failure || recorder_ == nullptr) return;
  recorder_->record(runtime::event_subject(gvk(Kind::grafana_agent), agent),
                    k8s::EventType::warning, std::string(runtime::reason(failure->code)),
                    failure->message);
}

void RootEvents::forget(const std::string& root) {
  const std::lock_guard lock(mutex_);
  reported_.erase(root);
}

}  // namespace aop::agent
