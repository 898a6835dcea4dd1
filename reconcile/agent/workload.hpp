// Parts of the generated workloads that every backend builds the same way: owner
// references and metadata, volumes and mounts, the pod options of the integrations
// workloads and their merge, the data volume of a metrics StatefulSet (emptyDir,
// storage.emptyDir or a volumeClaimTemplate), the labels of a pod template and the
// pod-spec fields copied from the GrafanaAgent. The static objects (objects.cpp) and the
// Alloy objects (reconcile/alloy/objects.cpp) differ only in what they put around them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "reconcile/agent/options.hpp"
#include "reconcile/agent/types.hpp"

namespace aop::agent {

boost::json::object labels_json(const Labels& l);

// The port name of the agent's container (`spec.portName`, default `http-metrics`).
std::string port_name(const GrafanaAgent& a);

// The GrafanaAgent as owner; `controller` on Services and workloads, not on Secrets.
boost::json::object owner_reference(const GrafanaAgent& a, bool controller);
// name, namespace, labels (when any), ownerReferences.
boost::json::object object_metadata(const GrafanaAgent& a, const std::string& name,
                                    const Labels& labels, bool controller);
// A workload's metadata: `labels`, the GrafanaAgent's annotations except
// `kubectl.kubernetes.io/*`, a controller reference.
boost::json::object workload_metadata(const GrafanaAgent& a, const std::string& name,
                                      const Labels& labels);

boost::json::object env_value(std::string_view name, std::string_view v);
boost::json::object env_field(std::string_view name, std::string_view path);
boost::json::object volume_mount(std::string_view name, std::string_view path, bool read_only);
boost::json::object secret_volume(std::string_view name, std::string_view secret);
boost::json::object empty_dir_volume(std::string_view name);
boost::json::object host_path_volume(std::string_view name, std::string_view path);

// Per-workload additions to a pod template.
struct PodOptions {
  Labels selector_labels;
  boost::json::array env;
  boost::json::array volumes;
  boost::json::array mounts;
  bool privileged = false;
};

// The Integrations' volumes and mounts, named `<ns>-<name>-<volume>`, then, when any of
// them lists Secret or ConfigMap keys, the `<A>-integrations-secrets` volume (those keys
// of the assets Secret) mounted read-only at /etc/grafana-agent/integrations.
PodOptions integration_pod_options(const GrafanaAgent& a,
                                   const std::vector<const Integration*>& list);

// Merges pod options, earlier inputs winning: selector labels by key; a mount whose name
// or path was taken is skipped together with its volume (for the rest of its input);
// volumes by name; env by name. `privileged` is not merged (false), as upstream.
PodOptions merge_pod_options(const std::vector<PodOptions>& inputs);

// The data volume of a metrics StatefulSet: named `storage.volumeClaimTemplate.metadata.name`
// when `storage` is set and that name is not empty, else `default_name`; mounted
// read-write at `path`. Without `storage` it is an emptyDir, with `storage.emptyDir` that
// emptyDir; otherwise there is no volume and claim_template() gives the StatefulSet's
// volumeClaimTemplates entry.
PodOptions data_volume_options(const std::optional<StorageSpec>& storage,
                               const std::string& default_name, std::string_view path);
// The volumeClaimTemplates entry for `storage` (none without storage or with
// storage.emptyDir): apiVersion, kind, name (default `default_name`), labels, annotations,
// spec with accessModes defaulted to [ReadWriteOnce], status.
std::optional<boost::json::object> claim_template(const std::optional<StorageSpec>& storage,
                                                  const std::string& default_name);

struct PodLabels {
  Labels pod;       // the pod template's labels
  Labels selector;  // the workload's selector.matchLabels
  Labels workload;  // the workload's labels
};
// From the selector labels of a pod: pod labels = the version label overlaid by
// podMetadata.labels overlaid by `selector`, then the operator's labels; the workload
// selector = `selector` with the operator's labels; the workload's labels = the pod's
// without the version label.
PodLabels pod_labels(const GrafanaAgent& a, const Labels& selector, const Options& options);

// spec.volumes and spec.volumeMounts, then a volume and read-only mount per spec.secrets
// (/var/lib/grafana-agent/extra-secrets/<s>) and per spec.configMaps
// (/var/lib/grafana-agent/extra-configmaps/<c>).
void append_user_volumes(const GrafanaAgent& a, boost::json::array& volumes,
                         boost::json::array& mounts);

// The config-reloader container: image from spec.configReloaderImage or
// spec.configReloaderVersion, no resources, a locked-down securityContext.
boost::json::object reloader_container(const GrafanaAgent& a, boost::json::array args,
                                       boost::json::array env, boost::json::array mounts);

// The agent container (Grafana Agent or Alloy) listening on `port`: the port named
// port_name(a), the readiness probe on /-/ready, spec.resources, privileged or not, the
// termination message from the logs on error.
boost::json::object agent_container(const GrafanaAgent& a, std::string_view name,
                                    std::string_view image, boost::json::array args,
                                    boost::json::array env, boost::json::array mounts,
                                    std::int64_t port, bool privileged);

// The pod spec around `containers` and `volumes`: imagePullSecrets, initContainers,
// securityContext, serviceAccountName, nodeSelector, priorityClassName,
// runtimeClassName, terminationGracePeriodSeconds 4800, tolerations, affinity,
// topologySpreadConstraints, as the GrafanaAgent sets them.
boost::json::object pod_spec(const GrafanaAgent& a, boost::json::array containers,
                             boost::json::array volumes);

}  // namespace aop::agent
