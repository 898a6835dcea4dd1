// The Kubernetes objects of a GrafanaAgent rendered with the Alloy backend, built from its
// translated and packed configurations: config Secrets, one headless cluster Service and
// StatefulSet per replica group, the logs DaemonSet and the integrations Deployment and
// DaemonSet. Pure: no I/O, the same input gives the same objects.
//
//   <A>-alloy-config[-i]                    metrics config Secrets
//   <A>-alloy-cluster, <A>-alloy            replica group 0 (Service, StatefulSet)
//   <A>-alloy-replica-<r>-cluster, ...-<r>  replica group r ≥ 1
//   <A>-alloy-logs-config[-i], <A>-alloy-logs
//   <A>-alloy-integrations-deploy-config[-i], <A>-alloy-integrations-deploy (Deployment)
//   <A>-alloy-integrations-ds-config[-i], <A>-alloy-integrations-ds (DaemonSet)
//
// Scrape distribution is Alloy clustering: `spec.metrics.shards` is the member count of one
// cluster (the StatefulSet's replicas), `spec.metrics.replicas` the number of independent
// clusters (replica groups), each scraping every target once with its own replica label
// value (env REPLICA_GROUP). Every pod loads `alloy run /etc/alloy` from its config
// Secrets projected into one volume; the config-reloader sidecar watches that directory
// and asks Alloy to reload when a file changes.
//
// Every object carries `operator.agent.grafana.com/backend: alloy`; pods are labelled
// `app.kubernetes.io/name: alloy`, which keeps them out of every static-mode selector.
// The assets Secret `<A>-secrets` and the static workloads of Integrations kept on static
// are the static backend's objects and not built here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/options.hpp"
#include "reconcile/agent/types.hpp"
#include "reconcile/alloy/pack.hpp"
#include "reconcile/alloy/problems.hpp"

namespace aop::alloy {

inline constexpr std::string_view kBackendAnnotation = "operator.agent.grafana.com/backend";
inline constexpr std::string_view kImageAnnotation = "operator.agent.grafana.com/alloy-image";
inline constexpr std::string_view kBackendLabel = agent::kBackendLabel;
inline constexpr std::string_view kReplicaGroupLabel = "operator.agent.grafana.com/replica-group";
inline constexpr std::string_view kDefaultImage = "grafana/alloy:v1.18.1";

// The name bases of a root's config Secrets (Secret i is `<base>` or `<base>-<i>`).
std::string metrics_config_base(std::string_view agent);      // <A>-alloy-config
std::string logs_config_base(std::string_view agent);         // <A>-alloy-logs-config
std::string integrations_config_base(std::string_view agent,  // <A>-alloy-integrations-
                                     bool all_nodes);         // {deploy,ds}-config
// The StatefulSet of replica group `group`: `<A>-alloy`, `<A>-alloy-replica-<r>`.
std::string replica_group_name(std::string_view agent, std::int64_t group);

// The image of the alloy container: the root's `operator.agent.grafana.com/alloy-image`
// annotation when not empty, else `flag_image` (--alloy-image).
std::string alloy_image(const agent::GrafanaAgent& a, std::string_view flag_image);

// What build_objects() builds from. A config with no Secret has no workload.
struct ObjectsInput {
  std::vector<ConfigSecret> metrics;
  std::vector<ConfigSecret> logs;
  std::vector<ConfigSecret> integrations_deploy;
  std::vector<ConfigSecret> integrations_ds;
  // The Integrations each integrations config translates (kept ones excluded), in
  // hierarchy order: their volumes and files are mounted into that workload.
  std::vector<const agent::Integration*> deploy_members;
  std::vector<const agent::Integration*> ds_members;
  std::string image;  // alloy_image()
};

struct ReplicaGroup {
  boost::json::object service;       // <N>-cluster
  boost::json::object stateful_set;  // N
};

struct AlloyObjects {
  std::vector<boost::json::object> metrics_secrets;
  std::vector<ReplicaGroup> groups;
  std::vector<boost::json::object> logs_secrets;
  std::optional<boost::json::object> logs;
  std::vector<boost::json::object> deploy_secrets;
  std::optional<boost::json::object> deployment;
  std::vector<boost::json::object> ds_secrets;
  std::optional<boost::json::object> daemon_set;
  // Fields of the GrafanaAgent the pods cannot honour (class C): spec.image, spec.version,
  // spec.enableConfigReadAPI, and args/command/image of container patches meant for the
  // Grafana Agent or its reloader.
  std::vector<TranslationProblem> problems;

  // Apply order: metrics Secrets; per group its Service then its StatefulSet; logs
  // Secrets, DaemonSet; integrations-deploy Secrets, Deployment; integrations-ds
  // Secrets, DaemonSet.
  std::vector<boost::json::object> in_apply_order() const;
};

AlloyObjects build_objects(const agent::GrafanaAgent& a, const ObjectsInput& in,
                           const agent::Options& options);

}  // namespace aop::alloy
