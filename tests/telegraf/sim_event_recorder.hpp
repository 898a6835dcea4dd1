// A plain EventRecorder for the integration tests: every record() becomes one core/v1
// Event created through the given ApiClient (no aggregation, no rate limit), and is
// remembered for assertions. k8s::make_event_recorder is declared in
// k8s/event_recorder.hpp but not implemented yet; this stands in for it so the tests
// still prove that the Events reach the API server. Events of cluster-scoped objects
// (Namespaces) go to namespace "default", as kube-apiserver's recorders do.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/event_recorder.hpp"

namespace aop::telegraf::testing {

struct RecordedEvent {
  k8s::EventSubject subject;
  k8s::EventType type;
  std::string reason;
  std::string message;
};

class SimEventRecorder final : public k8s::EventRecorder {
 public:
  SimEventRecorder(boost::asio::any_io_executor executor, k8s::ApiClient& client)
      : executor_(std::move(executor)), client_(client) {}

  void record(const k8s::EventSubject& subject, k8s::EventType type, std::string reason,
              std::string message) override {
    namespace json = boost::json;
    const std::string ns = subject.ns.empty() ? "default" : subject.ns;
    json::object event{
        {"apiVersion", "v1"},
        {"kind", "Event"},
        {"metadata", json::object{{"generateName", subject.name + "."}, {"namespace", ns}}},
        {"involvedObject", json::object{{"apiVersion", subject.api_version},
                                        {"kind", subject.kind},
                                        {"namespace", subject.ns},
                                        {"name", subject.name},
                                        {"uid", subject.uid},
                                        {"resourceVersion", subject.resource_version}}},
        {"reason", reason},
        {"message", message},
        {"type", type == k8s::EventType::warning ? "Warning" : "Normal"},
        {"source", json::object{{"component", "telegraf-sim-test"}}},
        {"count", 1},
    };
    {
      const std::lock_guard lock(mutex_);
      recorded_.push_back({subject, type, std::move(reason), std::move(message)});
    }
    ++in_flight_;
    boost::asio::co_spawn(
        executor_,
        [this, body = json::value(std::move(event))]() -> boost::asio::awaitable<void> {
          auto r = co_await client_.create(body);
          if (!r) failures_.fetch_add(1);
          --in_flight_;
        },
        boost::asio::detached);
  }

  std::vector<RecordedEvent> recorded() const {
    const std::lock_guard lock(mutex_);
    return recorded_;
  }
  int in_flight() const { return in_flight_.load(); }
  int failures() const { return failures_.load(); }

 private:
  boost::asio::any_io_executor executor_;
  k8s::ApiClient& client_;
  mutable std::mutex mutex_;  // owns recorded_
  std::vector<RecordedEvent> recorded_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> failures_{0};
};

}  // namespace aop::telegraf::testing
