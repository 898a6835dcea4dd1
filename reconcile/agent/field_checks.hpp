// The checks of the validate stage, one function per kind: every value the operator
// copies from a custom resource, a referenced Secret or ConfigMap into the agent's
// configuration or into a generated object is checked with the rule of the component
// that reads it (reconcile/validation). A member that fails (ServiceMonitor, PodMonitor,
// Probe, PodLogs, Integration, an additional scrape config) is left out of the hierarchy
// and reported while the rest of the root deploys; a root-level failure (the
// GrafanaAgent, a MetricsInstance or LogsInstance) leaves the root's last good deployment
// untouched.
//
// Every Problem names the kind, namespace, name and JSON path of the field, says what is
// wrong and what would be right, and never quotes a Secret's value.
#pragma once

#include <vector>

#include "reconcile/agent/cluster_view.hpp"
#include "reconcile/agent/decode_cache.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/options.hpp"

namespace aop::agent {

// Upper bounds of the sizes a root may ask for (README, "What the operator validates").
inline constexpr std::int64_t kMaxShards = 1000;
inline constexpr std::int64_t kMaxReplicas = 1000;
// Pods of the metrics StatefulSets of one root: shards × replicas.
inline constexpr std::int64_t kMaxMetricsPods = 1000;
// Scrape and log jobs one root renders: ServiceMonitor and PodMonitor endpoints, Probes,
// PodLogs and Integrations, counted once per instance that selects them. Rendering costs
// ≈32 µs and ≈3 KB of configuration per scrape job (bench/RESULTS.md): 10,000 jobs stay
// well under a second of CPU and the size a config Secret can hold after gzip.
inline constexpr std::size_t kMaxJobsPerRoot = 10'000;
// remote_write queue settings.
inline constexpr std::int64_t kMaxQueueCapacity = 10'000'000;
inline constexpr std::int64_t kMaxQueueShards = 10'000;
inline constexpr std::int64_t kMaxSamplesPerSend = 10'000'000;
// Loki client batch size in bytes.
inline constexpr std::int64_t kMaxLogsBatchSize = 64 << 20;
// Sample and target limits: the configuration holds numbers as float64, exact to 2^53.
inline constexpr std::uint64_t kMaxScrapeLimit = std::uint64_t{1} << 53;

// Field checks of one object, without references to Secrets and ConfigMaps. Problems of
// severity error make the object invalid. `agent` supplies the defaults a member's values
// are compared with (the global scrape interval and timeout).
std::vector<Problem> check_grafana_agent(const GrafanaAgent& agent);
std::vector<Problem> check_metrics_instance(const MetricsInstance& instance);
std::vector<Problem> check_logs_instance(const LogsInstance& instance);
std::vector<Problem> check_service_monitor(const ServiceMonitor& monitor,
                                           const GrafanaAgent& agent);
std::vector<Problem> check_pod_monitor(const PodMonitor& monitor, const GrafanaAgent& agent);
std::vector<Problem> check_probe(const Probe& probe, const GrafanaAgent& agent);
std::vector<Problem> check_pod_logs(const PodLogs& pod_logs);
std::vector<Problem> check_integration(const Integration& integration);

// The contents of an additional scrape configs Secret key (a YAML list of scrape
// configs), parsed with the YAML limits: each an object with a unique job_name, valid
// durations (timeout ≤ interval), scheme, relabel rules. `generated_jobs` are the job
// names the operator generates for the same instance (a duplicate is refused by the
// agent). Problems are attributed to `owner` at `field`.
std::vector<Problem> check_additional_scrape_configs(
    std::string_view text, Kind owner_kind, const ObjectMeta& owner, const std::string& field,
    bool metrics, const std::vector<std::string>& generated_jobs);

// The outcome of validating a discovered hierarchy.
struct Validation {
  std::vector<Problem> problems;  // errors (left out / root refused) and warnings
  // A root-level object (GrafanaAgent, MetricsInstance, LogsInstance) is invalid: nothing
  // may be applied for this root. The problems say which and why.
  bool root_invalid = false;
  // Every root-level error is a reference that does not resolve (a missing Secret,
  // ConfigMap or key): reported as AssetResolutionFailed rather than ValidationFailed.
  bool root_references_only = true;
};

// The validate stage over a discovered hierarchy: runs the checks of every object, the
// reference checks (every Secret/ConfigMap key exists; a Secret field does not name a
// ConfigMap; not both `secret` and `configMap`) and the additional scrape configs, then
// removes invalid members from `h` (from every instance that selected them) and drops an
// invalid additional scrape config. Lookups that fail (contents not read yet) are not
// problems: the caller plans again once it has them.
// `memo`: where members' field checks are kept between reconciles (decode_cache.hpp).
Validation validate_hierarchy(Hierarchy& h, const AssetSource& assets, const Options& options,
                              DecodeCache* memo = nullptr);

}  // namespace aop::agent
