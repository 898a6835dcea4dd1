// Every default of the telegraf controller in one value. The app layer maps its flags
// onto this struct; nothing in reconcile/telegraf reads flags or the environment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/result.hpp"

namespace aop::telegraf {

// Names of the objects the controller creates in each target namespace.
inline constexpr std::string_view kConfigMapName = "rubin-telegraf";
inline constexpr std::string_view kSecretName = "rubin-telegraf-token";
inline constexpr std::string_view kDeploymentName = "rubin-telegraf";
inline constexpr std::string_view kConfigKey = "telegraf.conf";
inline constexpr std::string_view kTokenKey = "token";  // key in rubin-telegraf-token
inline constexpr std::string_view kConfigDir = "/etc/telegraf";
inline constexpr std::string_view kTokenEnv = "INFLUX_TOKEN";
// Annotations the controller writes on what it creates.
inline constexpr std::string_view kSourcesAnnotation =
    "telegraf.influxdata.com/rubin-telegraf-sources";
inline constexpr std::string_view kConfigHashAnnotation =
    "telegraf.influxdata.com/rubin-telegraf-config-hash";

// `namespace/name:key` of the Secret holding the InfluxDB token, in the operator's
// namespace.
struct SecretKeyRef {
  std::string ns;
  std::string name;
  std::string key;

  std::string str() const { return ns + "/" + name + ":" + key; }
  bool operator==(const SecretKeyRef&) const = default;
};
Result<SecretKeyRef> parse_secret_key_ref(std::string_view text);

// Kubernetes quantities, copied verbatim into the Deployment.
struct ResourceSettings {
  std::string cpu_request = "50m";
  std::string memory_request = "64Mi";
  std::string cpu_limit = "500m";
  std::string memory_limit = "256Mi";
};

struct TelegrafOptions {
  std::string annotation_key = "telegraf.influxdata.com/rubin-telegraf-operator";
  // Namespaces whose Applications are watched; ignored when all_application_namespaces.
  std::vector<std::string> application_namespaces{"argocd"};
  bool all_application_namespaces = false;

  // [global_tags] and [agent] of telegraf.conf.
  std::string cluster_name = "kubernetes";
  std::string interval = "120s";
  std::string flush_interval = "120s";
  std::string collection_jitter = "10s";
  std::int64_t metric_batch_size = 10000;
  std::int64_t metric_buffer_limit = 100000;

  // [[outputs.influxdb_v2]]: the InfluxDB the technote names, and its organisation.
  std::string influxdb_url = "https://monitoring.lsst.codes";
  std::string influxdb_org = "square";
  // The token Secret to copy into each target namespace; none: no Secret, no env var.
  std::optional<SecretKeyRef> token_secret;

  // The Deployment.
  std::string image = "docker.io/library/telegraf:1.30";
  ResourceSettings resources;
  // The official telegraf image's `telegraf` user: running as it (not root) is what
  // lets runAsNonRoot admit the pod.
  std::int64_t run_as_user = 999;
  std::int64_t run_as_group = 999;

  // Value of app.kubernetes.io/managed-by on everything the controller creates; the
  // controller's clean-up only ever deletes objects carrying it.
  std::string managed_by = "rubin-telegraf-operator";

  bool watches_application_namespace(std::string_view ns) const;
};

// Checks the options (durations, URL, sizes, names); every problem, each naming the
// option, so start-up can refuse bad flags with one message.
std::vector<std::string> validate_options(const TelegrafOptions& options);

}  // namespace aop::telegraf
