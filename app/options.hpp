// Every knob of agent-operator, with its flag, environment variable and default.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "app/flags.hpp"
#include "reconcile/agent/options.hpp"
#include "reconcile/telegraf/options.hpp"

namespace aop::app {

inline telegraf::TelegrafOptions without_site_defaults(telegraf::TelegrafOptions t) {
  t.influxdb_url.clear();
  t.influxdb_org.clear();
  return t;
}

struct Options {
  // Cluster access
  std::string kubeconfig;  // "" = KUBECONFIG, ~/.kube/config, then in-cluster
  std::string context;
  double kube_api_qps = 50;
  std::int64_t kube_api_burst = 100;
  // Watch liveness: a watch silent for interval x multiple is replaced; /readyz fails
  // when a cache has had no working watch for longer than the threshold (0: never).
  std::chrono::nanoseconds watch_bookmark_interval = std::chrono::minutes(1);
  std::int64_t watch_stall_multiple = 2;
  std::chrono::nanoseconds readiness_disconnected_threshold = std::chrono::minutes(3);

  // Scope and controllers
  std::vector<std::string> namespaces;  // empty = all namespaces
  // The telegraf controller needs site-specific settings (--telegraf-influxdb-url, -org):
  // it runs only when asked for.
  std::vector<std::string> controllers{"agent"};
  std::int64_t workers = 4;
  std::chrono::nanoseconds resync_period = std::chrono::minutes(10);
  std::chrono::nanoseconds shutdown_timeout = std::chrono::seconds(30);

  // Leader election
  bool leader_elect = false;
  std::string leader_election_id = "agent-operator";
  std::string leader_election_namespace;  // "" = in-cluster namespace, else "default"
  std::chrono::nanoseconds leader_election_lease_duration = std::chrono::seconds(15);
  std::chrono::nanoseconds leader_election_renew_deadline = std::chrono::seconds(10);
  std::chrono::nanoseconds leader_election_retry_period = std::chrono::seconds(2);

  // Serving and logs
  std::string health_probe_bind_address = ":8081";
  std::string metrics_bind_address = ":8080";
  bool metrics_secure = false;    // HTTPS on the metrics port
  std::string metrics_cert_file;  // PEM; "" with metrics_secure = self-signed
  std::string metrics_key_file;
  std::string metrics_auth = "none";  // none | token-file
  std::string metrics_token_file;
  std::string log_level = "info";
  std::string log_format = "text";
  std::chrono::nanoseconds progress_log_period = std::chrono::seconds(30);

  // Work queue
  std::chrono::nanoseconds queue_backoff_base = std::chrono::milliseconds(5);
  std::chrono::nanoseconds queue_backoff_max = std::chrono::seconds(1000);
  std::chrono::nanoseconds queue_api_backoff_max = std::chrono::seconds(5);
  double queue_qps = 10;
  std::int64_t queue_burst = 100;
  std::string queue_shutdown = "drain";

  // Grafana Agent controller
  std::string agent_selector;             // label selector string for GrafanaAgents
  std::vector<std::string> agent_labels;  // k=v pairs merged into generated labels
  std::string kubelet_service;            // namespace/name; "" = off
  std::string agent_compat = "upstream";  // upstream | fixed (output-changing fixes)
  std::string agent_backend = "static";   // static | alloy, for roots without the annotation
  std::string alloy_image = "grafana/alloy:v1.18.1";
  bool agent_incremental_render = true;  // keep rendered member fragments (fragment_cache.hpp)

  // telegraf controller: defaults live in the controller's own options, except the
  // InfluxDB URL and organisation, which belong to one site and have no default here
  // (validate() requires them when the telegraf controller runs).
  telegraf::TelegrafOptions telegraf = without_site_defaults(telegraf::TelegrafOptions{});
  std::string telegraf_token_secret;  // parsed into telegraf.token_secret by validate()
};

// Registers every field of `o` with `flags` (defaults are the current values).
void register_flags(FlagSet& flags, Options& o);

// Cross-field validation after parsing (e.g. --controllers names, --agent-labels syntax,
// --kubelet-service shape), completing derived fields. Errors name the flag and what is
// expected.
Result<void> validate(Options& o);

// The Grafana Agent controller's settings (the live controller's and render's).
agent::Options agent_options(const Options& o);

}  // namespace aop::app
