// Fault injection for reliability tests. Settings come from command-line flags and from
// `POST /admin/faults` (a JSON object; absent keys are left as they are, `null` turns a
// mode off, `"reset": true` first turns every mode off). Every injected fault is counted
// by mode and reported by `GET /admin/stats`.
//
// Modes (JSON key, flag):
//   close_watch_after N          --fault-close-watch-after N     end each watch after N events
//   close_watch_probability P    --fault-close-watch-probability P   end a watch at random,
//                                                                  with probability P per event
//   http_500 / http_503 / http_429 F  --fault-http-500 F ...       fail a fraction F of
//                                      resource requests (503 and 429 carry Retry-After)
//   retry_after_seconds S        --fault-retry-after S           Retry-After value (default 1)
//   latency_ms MS                --fault-latency DURATION        delay every resource request
//   gone_next_watch N            --fault-gone-next-watch N       answer the next N watch
//                                                                  requests with HTTP 410
//   gone_in_stream_next_watch N  --fault-gone-in-stream-next-watch N  open the next N watches
//                                      and send an ERROR 410 event (what kube-apiserver's
//                                      watch cache does for a too-old resourceVersion)
//   expire_watches true          (admin only) every open watch gets ERROR 410 and ends
//   conflict_next_update [T...]  --fault-conflict-next-update T  the next update (PUT/PATCH)
//                                      of target T gets 409 Conflict; T is
//                                      "<resource>/<namespace>/<name>", "<resource>/<name>"
//                                      for cluster-scoped objects, or "*" for any object
//   stall_watch_after N          --fault-stall-watch-after N     after N events a watch stream
//                                      goes silent (no events, bookmarks or timeout) but stays
//                                      open; N = 0 stalls new streams at once
//   only_user_agent S            --fault-only-user-agent S       the request faults (500, 503,
//                                      429, latency) hit only requests whose User-Agent
//                                      contains S (a test's own client stays unharmed)
//   only_resources [R...]        --fault-only-resource R         ... only requests of these
//                                      resources: plural names, "<resource>/<subresource>"
//                                      for a subresource ("grafanaagents/status")
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "net/result.hpp"

namespace aop::sim {

struct FaultSettings {
  std::uint64_t close_watch_after = 0;  // 0: off
  double close_watch_probability = 0;
  double http_500 = 0;
  double http_503 = 0;
  double http_429 = 0;
  int retry_after_seconds = 1;
  std::chrono::milliseconds latency{0};
  std::uint64_t gone_next_watch = 0;
  std::uint64_t gone_in_stream_next_watch = 0;
  std::vector<std::string> conflict_next_update;
  std::int64_t stall_watch_after = -1;      // -1: off
  std::string only_user_agent;              // "": every client
  std::vector<std::string> only_resources;  // empty: every resource
};

// Owned by the API server; used only from its thread.
class Faults {
 public:
  explicit Faults(std::uint64_t seed = 1) : rng_(seed) {}

  FaultSettings settings;

  // Applies an admin request body. Sets `expire_now` when the body asks to expire every
  // open watch.
  Result<void> apply(const boost::json::object& body, bool& expire_now);
  boost::json::object settings_json() const;

  void count(std::string_view mode) { ++counts_[std::string(mode)]; }
  std::uint64_t count_of(std::string_view mode) const;
  boost::json::object counts_json() const;
  void reset_counts() { counts_.clear(); }

  // Uniform in [0, 1).
  double draw() { return dist_(rng_); }
  void reseed(std::uint64_t seed) { rng_.seed(seed); }

  // Whether the request faults apply to a request (only_user_agent, only_resources).
  bool in_scope(std::string_view user_agent, std::string_view resource,
                std::string_view subresource) const;

  // Consumes a forced 409 for the object, if one is pending for it.
  bool take_conflict(std::string_view resource, std::string_view ns, std::string_view name);

 private:
  std::map<std::string, std::uint64_t, std::less<>> counts_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> dist_{0.0, 1.0};
};

}  // namespace aop::sim
