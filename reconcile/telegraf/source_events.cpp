#include "reconcile/telegraf/source_events.hpp"

#include <utility>

#include "net/log.hpp"
#include "reconcile/runtime/status.hpp"

namespace aop::telegraf {

SourceEvents::SourceEvents(k8s::EventRecorder* recorder, std::string controller,
                           runtime::InvalidObjects& invalid_objects,
                           net::metrics::Family<net::metrics::Counter>& problems_total)
    : recorder_(recorder),
      controller_(std::move(controller)),
      invalid_objects_(invalid_objects),
      problems_total_(problems_total) {}

void SourceEvents::report(const std::map<std::string, Subject>& considered,
                          const std::vector<Problem>& problems, bool writing) {
  std::vector<std::pair<const Problem*, const Subject*>> emit;
  {
    const std::lock_guard lock(mutex_);
    for (const auto& [ref, subject] : considered) {
      std::set<std::string> now;
      bool invalid = false;
      for (const Problem& p : problems) {
        if (p.source.str() != ref) continue;
        now.insert(p.message);
        // A conflict, or an object in the way, is not the source's own fault.
        if (p.reason != ProblemReason::endpoint_conflict && p.reason != ProblemReason::not_owned) {
          invalid = true;
        }
      }
      const std::string uid(subject.object->uid());
      std::set<runtime::InvalidObject> invalid_now;
      if (invalid) {
        invalid_now.insert({subject.gvk.kind, std::string(subject.object->ns()),
                            std::string(subject.object->name())});
      }
      invalid_objects_.set(ref, std::move(invalid_now));
      auto it = reported_.find(ref);
      if (now.empty()) {
        if (it != reported_.end()) reported_.erase(it);
        continue;
      }
      if (it == reported_.end() || it->second.uid != uid) {
        it = reported_.insert_or_assign(ref, Reported{uid, {}, false}).first;
      }
      it->second.invalid = invalid;
      std::set<std::string> kept;
      for (const Problem& p : problems) {
        if (p.source.str() != ref) continue;
        if (it->second.messages.contains(p.message)) {
          kept.insert(p.message);
        } else if (writing) {
          kept.insert(p.message);
          emit.emplace_back(&p, &subject);
        }
      }
      it->second.messages = std::move(kept);
    }
  }
  for (const auto& [p, subject] : emit) {
    const std::string reason(reason_name(p->reason));
    problems_total_.with({controller_, reason}).inc();
    net::log::warn("telegraf source problem", {{"controller", controller_},
                                               {"source", p->source.str()},
                                               {"reason", reason},
                                               {"message", p->message}});
    if (recorder_ != nullptr) {
      recorder_->record(runtime::event_subject(subject->gvk, *subject->object),
                        k8s::EventType::warning, reason, p->message);
    }
  }
}

void SourceEvents::forget(const SourceRef& ref) {
  const std::lock_guard lock(mutex_);
  reported_.erase(ref.str());
  invalid_objects_.forget(ref.str());
}

std::size_t SourceEvents::invalid_sources() const {
  const std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [ref, r] : reported_) n += r.invalid ? 1 : 0;
  return n;
}

}  // namespace aop::telegraf
