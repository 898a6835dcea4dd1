// Realistic Kubernetes objects for the compact-encoding tests and the cache benchmark:
// what the API server sends, including managedFields and kubectl's last-applied
// annotation, with per-object variation so no two objects are identical.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <boost/json.hpp>

#include "k8s/base64.hpp"

namespace aop::k8s::fixtures {

namespace json = boost::json;

inline json::object managed_fields_entry(const std::string& manager) {
  json::object labels;
  labels["."] = json::object();
  labels["f:app"] = json::object();
  json::object spec;
  spec["f:replicas"] = json::object();
  spec["f:selector"] = json::object();
  json::object metadata;
  metadata["f:labels"] = std::move(labels);
  json::object fields;
  fields["f:metadata"] = std::move(metadata);
  fields["f:spec"] = std::move(spec);
  json::object entry;
  entry["manager"] = manager;
  entry["operation"] = "Update";
  entry["apiVersion"] = "v1";
  entry["time"] = "2024-03-01T10:00:00Z";
  entry["fieldsType"] = "FieldsV1";
  entry["fieldsV1"] = std::move(fields);
  return entry;
}

// A ServiceMonitor like those the Grafana Agent operator discovers (about 1.2 KB of JSON
// with managedFields, ~600 bytes without).
inline json::value service_monitor(int i, std::mt19937& rng) {
  const std::string ns = "team-" + std::to_string(i % 50);
  const std::string name = "svc-" + std::to_string(i) + "-monitor";
  return json::object{
      {"apiVersion", "monitoring.coreos.com/v1"},
      {"kind", "ServiceMonitor"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"uid", "5e1b7c4a-" + std::to_string(10000000 + i) + "-4c1e-9a55-0242ac120002"},
        {"resourceVersion", std::to_string(1000 + i)},
        {"generation", 1 + static_cast<int>(rng() % 5)},
        {"creationTimestamp", "2024-03-01T10:00:00Z"},
        {"labels",
         {{"app.kubernetes.io/name", "svc-" + std::to_string(i)},
          {"app.kubernetes.io/part-of", "shop"},
          {"instance", "primary"},
          {"team", ns}}},
        {"annotations",
         {{"kubectl.kubernetes.io/last-applied-configuration", std::string(300 + rng() % 200, 'x')},
          {"owner", "platform@example.com"}}},
        {"managedFields", json::array{managed_fields_entry("kubectl-client-side-apply")}}}},
      {"spec",
       {{"selector", {{"matchLabels", {{"app.kubernetes.io/name", "svc-" + std::to_string(i)}}}}},
        {"namespaceSelector", {{"matchNames", json::array{ns}}}},
        {"endpoints",
         json::array{json::object{{"port", "http-metrics"},
                                  {"interval", "30s"},
                                  {"path", "/metrics"},
                                  {"scheme", "http"},
                                  {"honorLabels", true},
                                  {"relabelings", json::array{json::object{
                                                      {"sourceLabels", json::array{"__meta_pod"}},
                                                      {"targetLabel", "pod"},
                                                      {"action", "replace"}}}}},
                     json::object{{"port", "admin"}, {"interval", "60s"}}}}}}};
}

// A Secret (base64 data), as kept by a metadata-only informer or in full.
inline json::value secret(int i, std::mt19937& rng) {
  const std::string ns = "team-" + std::to_string(i % 50);
  json::object data;
  const int n = 1 + static_cast<int>(rng() % 4);
  for (int k = 0; k < n; ++k) {
    // Base64 of random bytes, as the API server sends Secret data (64-320 characters).
    std::string bytes(48 + rng() % 193, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    data["key-" + std::to_string(k) + ".pem"] = aop::k8s::base64_encode(bytes);
  }
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata",
                       {{"name", "secret-" + std::to_string(i)},
                        {"namespace", ns},
                        {"uid", "0c0f3d8e-" + std::to_string(10000000 + i) + "-11ee-be56"},
                        {"resourceVersion", std::to_string(5000 + i)},
                        {"creationTimestamp", "2024-03-01T10:00:00Z"},
                        {"labels", {{"app", "svc-" + std::to_string(i % 300)}}},
                        {"managedFields", json::array{managed_fields_entry("helm")}}}},
                      {"type", "Opaque"},
                      {"data", std::move(data)}};
}

// A Pod with containers, status and conditions: the largest common kind.
inline json::value pod(int i, std::mt19937& rng) {
  const std::string ns = "team-" + std::to_string(i % 50);
  json::array containers;
  for (int c = 0; c < 1 + static_cast<int>(rng() % 2); ++c) {
    containers.push_back(json::object{
        {"name", "c" + std::to_string(c)},
        {"image", "registry.example.com/shop/app:v1." + std::to_string(rng() % 40)},
        {"args", json::array{"--port=8080", "--log-level=info"}},
        {"ports", json::array{json::object{
                      {"name", "http"}, {"containerPort", 8080 + c}, {"protocol", "TCP"}}}},
        {"resources",
         {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}, {"limits", {{"memory", "256Mi"}}}}},
        {"terminationMessagePath", "/dev/termination-log"},
        {"imagePullPolicy", "IfNotPresent"}});
  }
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "web-" + std::to_string(i) + "-7d9f8c6b5-" + std::to_string(rng() % 100000)},
        {"namespace", ns},
        {"uid", "9b2d1f3e-" + std::to_string(10000000 + i) + "-4a1b-8c7d"},
        {"resourceVersion", std::to_string(90000 + i)},
        {"creationTimestamp", "2024-03-01T10:00:00Z"},
        {"labels", {{"app", "web"}, {"pod-template-hash", "7d9f8c6b5"}}},
        {"ownerReferences", json::array{json::object{{"apiVersion", "apps/v1"},
                                                     {"kind", "ReplicaSet"},
                                                     {"name", "web-7d9f8c6b5"},
                                                     {"uid", "aa11bb22-cc33"},
                                                     {"controller", true},
                                                     {"blockOwnerDeletion", true}}}}}},
      {"spec",
       {{"containers", std::move(containers)},
        {"restartPolicy", "Always"},
        {"terminationGracePeriodSeconds", 30},
        {"dnsPolicy", "ClusterFirst"},
        {"serviceAccountName", "default"},
        {"nodeName", "node-" + std::to_string(rng() % 20)}}},
      {"status",
       {{"phase", "Running"},
        {"podIP", "10.0." + std::to_string(rng() % 256) + "." + std::to_string(rng() % 256)},
        {"conditions",
         json::array{
             json::object{{"type", "Ready"}, {"status", "True"}, {"lastTransitionTime", nullptr}},
             json::object{{"type", "PodScheduled"}, {"status", "True"}}}}}}};
}

}  // namespace aop::k8s::fixtures
