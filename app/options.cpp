#include "app/options.hpp"

#include <algorithm>

#include "k8s/label_selector.hpp"

namespace aop::app {

void register_flags(FlagSet& f, Options& o) {
  f.group("Cluster access");
  f.add_string("kubeconfig", &o.kubeconfig,
               "Path to a kubeconfig file; empty uses KUBECONFIG, ~/.kube/config, then the "
               "in-cluster service account");
  f.add_string("context", &o.context, "kubeconfig context to use; empty uses current-context");
  f.add_double("kube-api-qps", &o.kube_api_qps,
               "Client-side rate limit for API requests per second", 0.1);
  f.add_int("kube-api-burst", &o.kube_api_burst, "Burst of the client-side API rate limit", 1,
            100000);
  f.add_duration("watch-bookmark-interval", &o.watch_bookmark_interval,
                 "How often the API server sends a bookmark on an idle watch (kube-apiserver: "
                 "about every minute)");
  f.add_int("watch-stall-multiple", &o.watch_stall_multiple,
            "A watch that received nothing, not even a bookmark, for this many bookmark "
            "intervals is closed and resumed",
            1, 100);
  f.add_duration("readiness-disconnected-threshold", &o.readiness_disconnected_threshold,
                 "/readyz fails when a cache has had no working watch for longer than this; "
                 "0 disables");

  f.group("Controllers");
  f.add_list("controllers", &o.controllers,
             "Controllers to run, comma-separated: agent (Grafana Agent), telegraf");
  f.add_list("namespaces", &o.namespaces,
             "Namespaces to watch, comma-separated; empty watches all namespaces");
  f.add_int("workers", &o.workers, "Concurrent reconciles per controller", 1, 1024);
  f.add_duration("resync-period", &o.resync_period,
                 "Full resync of every root (with 10% jitter); 0 disables");
  f.add_duration("shutdown-timeout", &o.shutdown_timeout,
                 "How long graceful shutdown waits for in-flight reconciles");

  f.group("Leader election");
  f.add_bool("leader-elect", &o.leader_elect,
             "Elect a leader through a coordination.k8s.io Lease; only the leader writes");
  f.add_string("leader-election-id", &o.leader_election_id, "Name of the Lease");
  f.add_string("leader-election-namespace", &o.leader_election_namespace,
               "Namespace of the Lease; empty uses the pod's namespace, else \"default\"");
  f.add_duration("leader-election-lease-duration", &o.leader_election_lease_duration,
                 "How long a standby waits after the last observed renewal before taking over");
  f.add_duration("leader-election-renew-deadline", &o.leader_election_renew_deadline,
                 "How long the leader keeps trying to renew before stepping down");
  f.add_duration("leader-election-retry-period", &o.leader_election_retry_period,
                 "Interval between acquire and renew attempts");

  f.group("Serving and logging");
  f.add_string("health-probe-bind-address", &o.health_probe_bind_address,
               "Address of /healthz and /readyz; empty disables");
  f.add_string("metrics-bind-address", &o.metrics_bind_address,
               "Address of /metrics (Prometheus text format); empty disables");
  f.add_bool("metrics-secure", &o.metrics_secure,
             "Serve /metrics over HTTPS (with --metrics-cert-file/--metrics-key-file, else a "
             "self-signed certificate made at start-up)");
  f.add_string("metrics-cert-file", &o.metrics_cert_file,
               "PEM certificate (chain) for HTTPS on /metrics, e.g. from cert-manager");
  f.add_string("metrics-key-file", &o.metrics_key_file, "PEM private key of --metrics-cert-file");
  f.add_choice("metrics-auth", &o.metrics_auth, {"none", "token-file"},
               "Who may read /metrics: anyone, or bearer tokens listed in --metrics-token-file "
               "(needs --metrics-secure)");
  f.add_string("metrics-token-file", &o.metrics_token_file,
               "File of accepted bearer tokens for /metrics, one per line; re-read when it "
               "changes");
  f.add_choice("log-level", &o.log_level, {"debug", "info", "warn", "error"}, "Log level");
  f.add_choice("log-format", &o.log_format, {"text", "json"}, "Log format: logfmt text or JSON");
  f.add_duration("progress-log-period", &o.progress_log_period,
                 "While roots wait in a controller's queue, an info line this often (done, "
                 "queued, waiting, failing); 0 disables");

  f.group("Work queue");
  f.add_duration("queue-backoff-base", &o.queue_backoff_base,
                 "First retry delay of a failing key (doubles per failure)");
  f.add_duration("queue-backoff-max", &o.queue_backoff_max, "Cap of the per-key retry delay");
  f.add_duration("queue-api-backoff-max", &o.queue_api_backoff_max,
                 "Cap of the retry delay after the API server failed a request (no answer, "
                 "429, 5xx, 401/403): how late a root may report the truth after an outage");
  f.add_double("queue-qps", &o.queue_qps, "Overall rate of retries per second", 0.001);
  f.add_int("queue-burst", &o.queue_burst, "Burst of the overall retry rate", 1, 1000000);
  f.add_choice("queue-shutdown", &o.queue_shutdown, {"drain", "abandon"},
               "On shutdown, finish queued keys or drop them");

  f.group("Grafana Agent controller");
  f.add_string("agent-selector", &o.agent_selector,
               "Label selector (string form) of the GrafanaAgents to manage; empty manages all");
  f.add_list("agent-labels", &o.agent_labels,
             "k=v pairs merged into the labels of generated objects (these win)");
  f.add_string("kubelet-service", &o.kubelet_service,
               "namespace/name of a kubelet Service and Endpoints to maintain from Nodes; "
               "empty disables");
  f.add_choice("agent-compat", &o.agent_compat, {"upstream", "fixed"},
               "Generated output: upstream-compatible, or with upstream's output bugs fixed");
  f.add_choice("agent-backend", &o.agent_backend, {"static", "alloy"},
               "Backend for GrafanaAgents without a backend annotation");
  f.add_string("alloy-image", &o.alloy_image, "Alloy container image");
  f.add_bool("agent-incremental-render", &o.agent_incremental_render,
             "Keep each monitor's, Probe's and PodLogs' rendered configuration and render "
             "again only what changed (false: render every member on every reconcile)");

  f.group("telegraf controller");
  auto& t = o.telegraf;
  f.add_string("telegraf-annotation", &t.annotation_key,
               "Annotation holding the Prometheus endpoints on Namespaces and Applications");
  f.add_list("telegraf-application-namespaces", &t.application_namespaces,
             "Namespaces watched for ArgoCD Applications; \"*\" watches all");
  f.add_string("telegraf-cluster-name", &t.cluster_name, "Value of the cluster global tag");
  f.add_string("telegraf-influxdb-url", &t.influxdb_url,
               "InfluxDB v2 URL the telegraf agents write to; required with the telegraf "
               "controller");
  f.add_string("telegraf-influxdb-org", &t.influxdb_org,
               "InfluxDB v2 organization; required with the telegraf controller");
  f.add_string("telegraf-token-secret", &o.telegraf_token_secret,
               "namespace/name:key of the InfluxDB token Secret to copy; empty copies none");
  f.add_string("telegraf-image", &t.image, "telegraf container image");
  f.add_string("telegraf-interval", &t.interval, "telegraf agent interval (Go duration)");
  f.add_string("telegraf-flush-interval", &t.flush_interval,
               "telegraf agent flush_interval (Go duration)");
  f.add_string("telegraf-collection-jitter", &t.collection_jitter,
               "telegraf agent collection_jitter (Go duration)");
  f.add_int("telegraf-metric-batch-size", &t.metric_batch_size, "telegraf agent metric_batch_size",
            1, 100000000);
  f.add_int("telegraf-metric-buffer-limit", &t.metric_buffer_limit,
            "telegraf agent metric_buffer_limit", 1, 1000000000);
  f.add_string("telegraf-cpu-request", &t.resources.cpu_request, "telegraf container CPU request");
  f.add_string("telegraf-memory-request", &t.resources.memory_request,
               "telegraf container memory request");
  f.add_string("telegraf-cpu-limit", &t.resources.cpu_limit, "telegraf container CPU limit");
  f.add_string("telegraf-memory-limit", &t.resources.memory_limit,
               "telegraf container memory limit");
}

Result<void> validate(Options& o) {
  for (const auto& c : o.controllers) {
    if (c != "agent" && c != "telegraf") {
      return make_error("--controllers: unknown controller \"" + c +
                        "\" (expected agent, telegraf)");
    }
  }
  for (const auto& kv : o.agent_labels) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return make_error("--agent-labels: \"" + kv + "\" is not of the form key=value");
    }
    const std::string key = kv.substr(0, eq);
    // Labels the operator finds its objects and pods by: the same value on every agent's
    // (or every shard's) workloads would make their selectors overlap, and ownership and
    // backend switches read them. Upstream lets the flag win and produces such workloads.
    for (const std::string_view owned :
         {"app.kubernetes.io/managed-by", "operator.agent.grafana.com/name",
          "operator.agent.grafana.com/shard", "operator.agent.grafana.com/type",
          "operator.agent.grafana.com/backend"}) {
      if (key == owned) {
        return make_error("--agent-labels: " + key +
                          " is set by the operator and cannot be overridden");
      }
    }
    if (auto e = k8s::validate_label_key(key); !e.empty())
      return make_error("--agent-labels: " + e);
    if (auto e = k8s::validate_label_value(kv.substr(eq + 1)); !e.empty()) {
      return make_error("--agent-labels: " + e);
    }
  }
  if (!o.agent_selector.empty()) {
    if (auto s = k8s::parse_label_selector_string(o.agent_selector); !s) {
      return make_error("--agent-selector: " + s.error().message);
    }
  }
  if (!o.kubelet_service.empty()) {
    const auto slash = o.kubelet_service.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == o.kubelet_service.size() ||
        o.kubelet_service.find('/', slash + 1) != std::string::npos) {
      return make_error("--kubelet-service: expected namespace/name, got \"" + o.kubelet_service +
                        "\"");
    }
  }
  const bool telegraf_enabled =
      std::find(o.controllers.begin(), o.controllers.end(), "telegraf") != o.controllers.end();
  if (telegraf_enabled) {
    for (const auto& [flag, value] :
         {std::pair{"--telegraf-influxdb-url", &o.telegraf.influxdb_url},
          std::pair{"--telegraf-influxdb-org", &o.telegraf.influxdb_org}}) {
      if (value->empty()) {
        return make_error(std::string(flag) +
                          " is required when the telegraf controller runs (--controllers "
                          "includes telegraf): the InfluxDB v2 the telegraf agents write to");
      }
    }
  }
  if (!o.telegraf_token_secret.empty()) {
    auto ref = telegraf::parse_secret_key_ref(o.telegraf_token_secret);
    if (!ref) return make_error("--telegraf-token-secret: " + ref.error().message);
    o.telegraf.token_secret = *ref;
  }
  auto& apps = o.telegraf.application_namespaces;
  if (std::find(apps.begin(), apps.end(), "*") != apps.end()) {
    o.telegraf.all_application_namespaces = true;
    apps.clear();
  }
  if (telegraf_enabled) {
    if (const auto problems = telegraf::validate_options(o.telegraf); !problems.empty()) {
      std::string all;
      for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
      return make_error("telegraf options: " + all);
    }
  }
  if (o.metrics_cert_file.empty() != o.metrics_key_file.empty()) {
    return make_error("--metrics-cert-file and --metrics-key-file go together");
  }
  if (!o.metrics_cert_file.empty() && !o.metrics_secure) {
    return make_error("--metrics-cert-file needs --metrics-secure");
  }
  if (o.metrics_auth != "none" && !o.metrics_secure) {
    return make_error("--metrics-auth=" + o.metrics_auth +
                      " needs --metrics-secure: bearer tokens must not cross plain HTTP");
  }
  if ((o.metrics_auth == "token-file") != !o.metrics_token_file.empty()) {
    return make_error("--metrics-token-file goes with --metrics-auth=token-file (and it with it)");
  }
  if (o.watch_bookmark_interval <= std::chrono::nanoseconds::zero()) {
    return make_error("--watch-bookmark-interval must be positive");
  }
  if (o.leader_election_renew_deadline >= o.leader_election_lease_duration) {
    return make_error(
        "--leader-election-renew-deadline must be shorter than "
        "--leader-election-lease-duration");
  }
  if (o.leader_election_retry_period >= o.leader_election_renew_deadline) {
    return make_error(
        "--leader-election-retry-period must be shorter than "
        "--leader-election-renew-deadline");
  }
  return {};
}

agent::Options agent_options(const Options& o) {
  agent::Options a;
  a.operator_version = AOP_VERSION;
  a.compat = o.agent_compat == "fixed" ? agent::Compat::fixed : agent::Compat::upstream;
  a.backend = o.agent_backend == "alloy" ? agent::Backend::alloy : agent::Backend::static_mode;
  a.alloy_image = o.alloy_image;
  for (const auto& kv : o.agent_labels) {
    const auto eq = kv.find('=');
    a.operator_labels[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return a;
}

}  // namespace aop::app
