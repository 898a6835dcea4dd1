// The real Event recorder (k8s::make_event_recorder), counting what the controller asks
// it to record, so a test can tell "recorded once" from "recorded again and folded into
// the same Event's count" without waiting for an asynchronous write that should not come.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "k8s/event_recorder.hpp"

namespace aop::telegraf::testing {

struct RecordedEvent {
  k8s::EventSubject subject;
  k8s::EventType type;
  std::string reason;
  std::string message;
};

class CountingEventRecorder final : public k8s::EventRecorder {
 public:
  explicit CountingEventRecorder(std::unique_ptr<k8s::EventRecorder> inner)
      : inner_(std::move(inner)) {}

  void record(const k8s::EventSubject& subject, k8s::EventType type, std::string reason,
              std::string message) override {
    {
      const std::lock_guard lock(mutex_);
      recorded_.push_back({subject, type, reason, message});
    }
    inner_->record(subject, type, std::move(reason), std::move(message));
  }

  std::vector<RecordedEvent> recorded() const {
    const std::lock_guard lock(mutex_);
    return recorded_;
  }

 private:
  std::unique_ptr<k8s::EventRecorder> inner_;
  mutable std::mutex mutex_;  // owns recorded_
  std::vector<RecordedEvent> recorded_;
};

}  // namespace aop::telegraf::testing
