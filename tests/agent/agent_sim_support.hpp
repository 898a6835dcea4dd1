// What the Grafana Agent controller's scenarios against the test cluster (kube-sim, and
// the real kube-apiserver in the integration-real runs) share: the module
// options, small readers of the status, the hierarchies two scenarios use, and the check
// that the live objects are exactly what plan_root() (the `render` path) makes of the
// same cluster state.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/pipeline.hpp"
#include "reconcile/runtime/apply.hpp"
#include "tests/agent/agent_sim_fixture.hpp"

namespace aop::agent::testing {

// The fixture of every scenario (one class, so the scenarios share a test suite name).
class AgentControllerSimTest : public ::testing::Test {
 protected:
  AgentSim env;
};

// Whether `agent`'s cache of `kind` holds `key` at resourceVersion `version` or a later
// one (the controller writes statuses too); "" (deleted) only when it holds none.
// resourceVersions are opaque to clients, but kube-sim's and etcd's are both increasing
// integers, which a test may rely on.
inline bool cache_holds(const AgentController& agent, Kind kind, const k8s::ObjectKey& key,
                        const std::string& version) {
  const std::string cached = agent.cached_version(kind, key);
  if (version.empty() || cached.empty()) return cached == version;
  return std::stoull(cached) >= std::stoull(version);
}

inline bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

inline AgentModuleOptions module_options() {
  AgentModuleOptions o;
  o.agent.operator_version = "v1.2.3-test";
  o.agent.operator_labels = {{"example.com/team", "observability"}};
  return o;
}

inline std::int64_t status_int(const json::object& status, std::string_view field) {
  const auto* v = status.if_contains(field);
  return v != nullptr && v->is_number() ? v->to_number<std::int64_t>() : -1;
}

// The Ready condition's message ("" when absent).
inline std::string ready_message(AgentSim& env, const std::string& ns, const std::string& name) {
  const auto ready = env.condition(ns, name, "Ready");
  const auto* m = ready.if_contains("message");
  return m != nullptr ? std::string(m->as_string()) : std::string();
}

// Reports a workload as rolled out with every replica ready, as its controller would
// (kube-sim runs no pods and writes no status of its own).
inline void mark_ready(AgentSim& env, Kind kind, const std::string& ns, const std::string& name,
                       std::int64_t replicas) {
  const auto live = env.get(kind, ns, name);
  ASSERT_TRUE(live.has_value()) << kind_name(kind) << " " << ns << "/" << name;
  const auto generation = live->at("metadata").at("generation").to_number<std::int64_t>();
  env.patch(kind, ns, name,
            json::value{{"status", json::object{{"observedGeneration", generation},
                                                {"replicas", replicas},
                                                {"readyReplicas", replicas}}}},
            true);
}

inline constexpr const char* kMetricsHierarchy = R"(
apiVersion: v1
kind: Namespace
metadata: {name: agents}
---
apiVersion: v1
kind: Namespace
metadata: {name: apps-a, labels: {monitoring: "enabled"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: apps-b, labels: {monitoring: "enabled"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: apps-c}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: primary, namespace: agents, labels: {agent: main}}
spec:
  remoteWrite:
  - url: http://mimir.example:9009/api/v1/push
    basicAuth:
      username: {name: rw-auth, key: username}
      password: {name: rw-auth, key: password}
  serviceMonitorSelector: {matchLabels: {team: web}}
  serviceMonitorNamespaceSelector: {matchLabels: {monitoring: enabled}}
  podMonitorSelector: {}
  podMonitorNamespaceSelector: {matchLabels: {monitoring: enabled}}
  probeSelector: {matchLabels: {probe: "yes"}}
  probeNamespaceSelector: {}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web, namespace: apps-a, labels: {team: web}}
spec:
  selector: {matchLabels: {app: web}}
  endpoints: [{port: http, interval: 30s}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: api, namespace: apps-b, labels: {team: web}}
spec:
  selector: {matchLabels: {app: api}}
  endpoints: [{port: metrics}, {port: admin, path: /admin/metrics}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: hidden, namespace: apps-c, labels: {team: web}}
spec:
  selector: {matchLabels: {app: hidden}}
  endpoints: [{port: http}]
---
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata: {name: pods, namespace: apps-b}
spec:
  selector: {matchLabels: {app: api}}
  podMetricsEndpoints: [{port: metrics}]
---
apiVersion: monitoring.coreos.com/v1
kind: Probe
metadata: {name: blackbox, namespace: apps-a, labels: {probe: "yes"}}
spec:
  prober: {url: "blackbox-exporter.apps-a:9115"}
  module: http_2xx
  targets:
    staticConfig:
      static: [https://example.com]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata:
  name: main
  namespace: agents
  annotations: {example.com/owner: platform}
spec:
  serviceAccountName: grafana-agent
  metrics:
    shards: 2
    replicas: 2
    externalLabels: {env: test}
    instanceSelector: {matchLabels: {agent: main}}
)";

inline constexpr const char* kLogsIntegrationsHierarchy = R"(
apiVersion: v1
kind: Namespace
metadata: {name: agents}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: primary, namespace: agents, labels: {agent: main}}
spec:
  remoteWrite: [{url: "http://mimir.example:9009/api/v1/push"}]
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: node-exporter, namespace: agents, labels: {agent: main}}
spec:
  name: node_exporter
  type: {allNodes: true, unique: true}
  config:
    autoscrape: {enable: true, metrics_instance: agents/primary}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: main, namespace: agents}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: main}}}
  logs: {instanceSelector: {matchLabels: {agent: main}}}
  integrations: {selector: {matchLabels: {agent: main}}}
)";

inline constexpr const char* kLogsInstance = R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: logs, namespace: agents, labels: {agent: main}}
spec:
  clients: [{url: "http://loki.example:3100/loki/api/v1/push"}]
  podLogsSelector: {}
)";

// The live object holds every planned field: runtime::json_subset, except that a planned
// empty map or list may be absent, as the API server leaves them out (Go's omitempty on
// map and slice fields).
inline bool live_has_planned(const json::value& planned, const json::value& live) {
  if (planned.is_object() && live.is_object()) {
    for (const auto& [k, v] : planned.get_object()) {
      const auto* lv = live.get_object().if_contains(k);
      const bool empty =
          (v.is_object() && v.get_object().empty()) || (v.is_array() && v.get_array().empty());
      if (lv == nullptr ? !empty : !live_has_planned(v, *lv)) return false;
    }
    return true;
  }
  if (planned.is_array() && live.is_array()) {
    const auto& p = planned.get_array();
    const auto& l = live.get_array();
    if (p.size() != l.size()) return false;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (!live_has_planned(p[i], l[i])) return false;
    }
    return true;
  }
  return runtime::json_subset(planned, live);
}

// Compares every step of plan_root() over the server's current objects with what the
// server holds: applied objects present with every planned field (server defaults are
// extra) and the apply engine's hash of exactly that object; deleted ones absent; the
// StatefulSets this agent controls exactly the ones the plan applies.
inline void expect_live_equals_plan(AgentSim& env, const std::string& ns, const std::string& name,
                                    const Options& options) {
  MemoryCluster cluster;
  for (const Kind k : {Kind::grafana_agent, Kind::metrics_instance, Kind::logs_instance,
                       Kind::pod_logs, Kind::integration, Kind::service_monitor, Kind::pod_monitor,
                       Kind::probe, Kind::secret, Kind::config_map, Kind::namespace_}) {
    for (auto& o : env.list(k)) ASSERT_TRUE(cluster.add(json::value(std::move(o))).has_value());
  }
  k8s::ObjectPtr root;
  for (const auto& a : cluster.compact(Kind::grafana_agent)) {
    if (a->ns() == ns && a->name() == name) root = a;
  }
  ASSERT_NE(root, nullptr) << "GrafanaAgent " << ns << "/" << name;
  const RootPlan plan = plan_root(*root, cluster, options);
  ASSERT_FALSE(plan.failure.has_value()) << plan.failure->message;
  ASSERT_FALSE(plan.apply.steps.empty());

  runtime::InformerCache no_cache;
  const runtime::ApplyEngine hasher(*env.client, no_cache, runtime::ApplyOptions{});
  int applied = 0;
  for (const auto& step : plan.apply.steps) {
    const std::string what = step.kind.kind + " " + step.key.str();
    switch (step.action) {
      case runtime::ApplyStep::Action::apply: {
        ++applied;
        const auto live = env.get(step.kind, step.key.ns, step.key.name);
        ASSERT_TRUE(live.has_value()) << what;
        EXPECT_TRUE(live_has_planned(step.object, *live))
            << what << "\nplanned: " << json::serialize(step.object)
            << "\nlive:    " << json::serialize(*live);
        const auto& annotations = live->at("metadata").as_object().at("annotations").as_object();
        EXPECT_EQ(annotations.at(hasher.options().hash_annotation).as_string(),
                  hasher.content_hash(step.object))
            << what << ": the live object is not the planned one";
        break;
      }
      case runtime::ApplyStep::Action::delete_if_managed:
        EXPECT_FALSE(env.get(step.kind, step.key.ns, step.key.name).has_value())
            << what << " should not exist";
        break;
      case runtime::ApplyStep::Action::prune: {
        std::set<std::string> planned;
        for (const auto& s : plan.apply.steps) {
          if (s.action == runtime::ApplyStep::Action::apply && s.kind == gvk(Kind::stateful_set)) {
            planned.insert(s.key.name);
          }
        }
        std::set<std::string> live_names;
        for (const auto& s : env.list(Kind::stateful_set, ns)) {
          const auto& md = s.at("metadata").as_object();
          const auto* labels = md.if_contains("labels");
          if (labels == nullptr) continue;
          const auto* n = labels->as_object().if_contains(kAgentNameLabel);
          bool controlled = false;
          if (const auto* refs = md.if_contains("ownerReferences")) {
            for (const auto& r : refs->as_array()) {
              const auto* c = r.as_object().if_contains("controller");
              controlled =
                  controlled || (c != nullptr && c->as_bool() &&
                                 r.as_object().at("uid").as_string() == step.prune.owner_uid);
            }
          }
          if (n != nullptr && n->as_string() == name && controlled) {
            live_names.insert(std::string(md.at("name").as_string()));
          }
        }
        EXPECT_EQ(live_names, planned);
        break;
      }
    }
  }
  EXPECT_GT(applied, 0);
}

}  // namespace aop::agent::testing
