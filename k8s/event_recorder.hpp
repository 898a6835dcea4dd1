// Kubernetes Events about an object, aggregated and rate-limited like client-go's
// recorder: repeats of the same (object, type, reason, message) within the aggregation
// window update one Event's count instead of creating new ones, and a per-object token
// bucket keeps a hot loop from flooding the API. Messages must never contain secret
// values: callers pass names and JSON paths, not data.
#pragma once

#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "k8s/api_client.hpp"

namespace aop::k8s {

struct EventSubject {
  std::string api_version;
  std::string kind;
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;
};

enum class EventType { normal, warning };

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // Fire-and-forget: queued and written asynchronously; never blocks the caller.
  virtual void record(const EventSubject& subject, EventType type, std::string reason,
                      std::string message) = 0;
};

struct EventRecorderOptions {
  std::string component = "agent-operator";  // source.component / reportingController
  std::string instance;                      // reportingInstance (pod name)
};

std::unique_ptr<EventRecorder> make_event_recorder(boost::asio::any_io_executor executor,
                                                   ApiClient& client, EventRecorderOptions options);

}  // namespace aop::k8s
