// Realistic Kubernetes watch events for framer tests and benchmarks: Pods with labels,
// annotations (escaped quotes, non-ASCII text), containers, conditions; ADDED,
// MODIFIED, DELETED and BOOKMARK events, as the API server writes them (one JSON
// object per line).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <boost/json.hpp>

namespace aop::net::testing {

inline boost::json::value make_pod_event(std::mt19937& rng, int i) {
  namespace json = boost::json;
  static const char* const kTypes[] = {"ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"};
  const std::string name = "web-" + std::to_string(i % 97) + "-" + std::to_string(rng() % 100000);
  const std::string ns = "team-" + std::to_string(i % 7);
  const std::string rv = std::to_string(100000 + i);
  if (i % 50 == 49) {
    return json::object{
        {"type", "BOOKMARK"},
        {"object",
         {{"kind", "Pod"},
          {"apiVersion", "v1"},
          {"metadata",
           {{"resourceVersion", rv}, {"annotations", {{"k8s.io/initial-events-end", "true"}}}}}}}};
  }
  json::array containers;
  const int n_containers = 1 + static_cast<int>(rng() % 3);
  for (int c = 0; c < n_containers; ++c) {
    containers.push_back(json::object{
        {"name", "c" + std::to_string(c)},
        {"image", "registry.example.com/team/app:v1." + std::to_string(rng() % 40)},
        {"args", json::array{"--port=8080", "--log-level=info", "--tag=\"quoted\""}},
        {"ports", json::array{json::object{
                      {"name", "http"}, {"containerPort", 8080 + c}, {"protocol", "TCP"}}}},
        {"resources",
         {{"limits", {{"cpu", "500m"}, {"memory", "256Mi"}}},
          {"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}}}},
        {"readinessProbe",
         {{"httpGet", {{"path", "/ready"}, {"port", 8080}}}, {"periodSeconds", 10}}}});
  }
  return json::object{
      {"type", kTypes[rng() % 5]},
      {"object",
       {{"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", name},
          {"namespace", ns},
          {"uid", "5f0c" + std::to_string(rng()) + "-a1b2-4c3d-9e8f-" + std::to_string(i)},
          {"resourceVersion", rv},
          {"generation", i % 5 + 1},
          {"creationTimestamp", "2024-05-01T12:00:00Z"},
          {"labels",
           {{"app.kubernetes.io/name", "web"},
            {"app.kubernetes.io/instance", name},
            {"pod-template-hash", std::to_string(rng() % 1000000)}}},
          {"annotations",
           {{"prometheus.io/scrape", "true"},
            {"prometheus.io/port", "8080"},
            {"example.com/note", "caf\xc3\xa9 \"quoted\" \\ back\nslash \xe2\x9c\x93"}}},
          {"ownerReferences", json::array{json::object{{"apiVersion", "apps/v1"},
                                                       {"kind", "ReplicaSet"},
                                                       {"name", "web-7d9f"},
                                                       {"uid", "0a1b2c3d"},
                                                       {"controller", true},
                                                       {"blockOwnerDeletion", true}}}}}},
        {"spec",
         {{"containers", containers},
          {"nodeName", "node-" + std::to_string(rng() % 20)},
          {"restartPolicy", "Always"},
          {"terminationGracePeriodSeconds", 30},
          {"serviceAccountName", "default"}}},
        {"status",
         {{"phase", "Running"},
          {"podIP", "10.244." + std::to_string(rng() % 255) + "." + std::to_string(rng() % 255)},
          {"conditions",
           json::array{json::object{{"type", "Ready"},
                                    {"status", "True"},
                                    {"lastTransitionTime", "2024-05-01T12:00:05Z"}},
                       json::object{{"type", "ContainersReady"}, {"status", "True"}}}},
          {"startTime", "2024-05-01T12:00:01Z"},
          {"qosClass", "Burstable"},
          {"cpuUsage", 0.25 * static_cast<double>(rng() % 8)}}}}}};
}

struct RecordedStream {
  std::string bytes;                       // the stream as the API server sends it
  std::vector<boost::json::value> events;  // the values it contains, in order
};

// `count` events, newline-separated; with `messy`, some separators are blank lines,
// CRLF or spaces (still a valid stream of values).
inline RecordedStream record_watch_stream(int count, std::uint32_t seed, bool messy = true) {
  std::mt19937 rng(seed);
  RecordedStream out;
  for (int i = 0; i < count; ++i) {
    boost::json::value event = make_pod_event(rng, i);
    out.bytes += boost::json::serialize(event);
    out.events.push_back(std::move(event));
    if (messy && i % 11 == 3) {
      out.bytes += "\n\n";
    } else if (messy && i % 13 == 5) {
      out.bytes += "\r\n  \t";
    } else {
      out.bytes += '\n';
    }
  }
  return out;
}

}  // namespace aop::net::testing
