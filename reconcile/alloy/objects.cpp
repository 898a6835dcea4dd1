#include "reconcile/alloy/objects.hpp"

#include "k8s/base64.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/workload.hpp"

namespace aop::alloy {
namespace {

using agent::GrafanaAgent;
using agent::Labels;
using agent::PodOptions;
using boost::json::array;
using boost::json::object;

constexpr std::int64_t kPort = 12345;
constexpr std::string_view kConfigDir = "/etc/alloy";
constexpr std::string_view kDataDir = "/var/lib/alloy/data";

Labels managed_labels(const GrafanaAgent& a) {
  return {{std::string(agent::kManagedByKey), std::string(agent::kManagedByValue)},
          {std::string(agent::kAgentNameLabel), a.metadata.name},
          {std::string(kBackendLabel), "alloy"}};
}

// The selector labels of a pod of type `type` (metrics, logs, integrations-deploy,
// integrations-ds).
Labels selector_labels(const GrafanaAgent& a, std::string_view type) {
  Labels l = managed_labels(a);
  l["app.kubernetes.io/name"] = "alloy";
  l["app.kubernetes.io/instance"] = a.metadata.name;
  l[std::string(agent::kTypeLabel)] = type;
  return l;
}

object config_secret(const GrafanaAgent& a, const ConfigSecret& s, const agent::Options& options) {
  object data;
  for (const auto& e : s.entries) data[e.key] = k8s::base64_encode(e.text);
  return object{
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata", agent::object_metadata(
                       a, s.name, agent::merge_operator_labels(managed_labels(a), options), false)},
      {"data", std::move(data)}};
}

std::vector<object> config_secrets(const GrafanaAgent& a, const std::vector<ConfigSecret>& list,
                                   const agent::Options& options) {
  std::vector<object> out;
  out.reserve(list.size());
  for (const auto& s : list) out.push_back(config_secret(a, s, options));
  return out;
}

// The user's container patches: one named `grafana-agent` applies to the alloy
// container; in patches named `grafana-agent` or `config-reloader`, args, command and
// image are static-mode settings and are dropped with a warning.
struct ContainerPatches {
  array agent;   // `grafana-agent` patches renamed `alloy`
  array others;  // the rest, in order
};

ContainerPatches container_patches(const GrafanaAgent& a,
                                   std::vector<TranslationProblem>* problems) {
  ContainerPatches out;
  const auto& user = a.spec.containers;
  for (std::size_t i = 0; i < user.size(); ++i) {
    if (!user[i].is_object()) continue;
    object c = user[i].get_object();
    const auto* n = c.if_contains("name");
    const std::string name = (n != nullptr && n->is_string()) ? std::string(n->get_string()) : "";
    if (name != "grafana-agent" && name != "config-reloader") {
      out.others.emplace_back(std::move(c));
      continue;
    }
    for (const char* key : {"args", "command", "image"}) {
      if (c.erase(key) == 0 || problems == nullptr) continue;
      const std::string field = "spec.containers[" + std::to_string(i) + "]." + key;
      std::string message = field;
      message += ": holds a setting of the Grafana Agent's ";
      message += name;
      message += " container (not applied to the Alloy pods)";
      problems->push_back({ProblemClass::c, "GrafanaAgent", a.metadata.ns, a.metadata.name, field,
                           std::move(message)});
    }
    if (name == "grafana-agent") {
      c["name"] = "alloy";
      out.agent.emplace_back(std::move(c));
    } else {
      out.others.emplace_back(std::move(c));
    }
  }
  return out;
}

struct Role {
  std::string type;
  Labels extra_selector;
  const std::vector<ConfigSecret>* config = nullptr;
  PodOptions options;
  array args;
};

struct Template {
  object template_;
  Labels selector;
  Labels workload_labels;
};

Template pod_template(const GrafanaAgent& a, const Role& role, const ObjectsInput& in,
                      const agent::Options& options) {
  Labels selector = selector_labels(a, role.type);
  for (const auto& [k, v] : role.extra_selector) selector[k] = v;
  const agent::PodLabels labels = agent::pod_labels(a, selector, options);

  array sources;
  for (const auto& s : *role.config) {
    sources.emplace_back(object{{"secret", object{{"name", s.name}}}});
  }
  array volumes{object{{"name", "config"}, {"projected", object{{"sources", std::move(sources)}}}},
                agent::secret_volume("secrets", a.metadata.name + "-secrets")};
  array mounts{agent::volume_mount("config", kConfigDir, true),
               agent::volume_mount("secrets", "/var/lib/grafana-agent/secrets", true)};
  for (const auto& v : role.options.volumes) volumes.push_back(v);
  for (const auto& m : role.options.mounts) mounts.push_back(m);
  agent::append_user_volumes(a, volumes, mounts);

  array env{agent::env_field("POD_NAME", "metadata.name"),
            agent::env_value("ALLOY_DEPLOY_MODE", "operator")};
  for (const auto& e : role.options.env) env.push_back(e);

  object reloader = agent::reloader_container(
      a,
      array{"--watched-dir=" + std::string(kConfigDir),
            "--reload-url=http://127.0.0.1:" + std::to_string(kPort) + "/-/reload",
            "--watch-interval=1m"},
      env, mounts);

  array args{"run", kConfigDir, "--server.http.listen-addr=0.0.0.0:" + std::to_string(kPort),
             "--storage.path=" + std::string(kDataDir), "--stability.level=generally-available"};
  for (const auto& arg : role.args) args.push_back(arg);
  if (a.spec.disable_reporting) args.emplace_back("--disable-reporting");
  if (a.spec.disable_support_bundle) args.emplace_back("--server.http.disable-support-bundle");
  object alloy = agent::agent_container(a, "alloy", in.image, std::move(args), std::move(env),
                                        std::move(mounts), kPort, role.options.privileged);

  const ContainerPatches patches = container_patches(a, nullptr);
  array containers =
      agent::merge_containers(array{std::move(reloader), std::move(alloy)}, patches.agent);
  containers = agent::merge_containers(std::move(containers), patches.others);

  Labels annotations;
  if (a.spec.pod_metadata) annotations = a.spec.pod_metadata->annotations;
  annotations["kubectl.kubernetes.io/default-container"] = "alloy";

  Template t;
  t.template_ = object{{"metadata", object{{"labels", agent::labels_json(labels.pod)},
                                           {"annotations", agent::labels_json(annotations)}}},
                       {"spec", agent::pod_spec(a, std::move(containers), std::move(volumes))}};
  t.selector = labels.selector;
  t.workload_labels = labels.workload;
  return t;
}

object workload(const GrafanaAgent& a, std::string_view kind, const std::string& name,
                const Template& t, object spec_fields) {
  spec_fields["selector"] = object{{"matchLabels", agent::labels_json(t.selector)}};
  spec_fields["template"] = t.template_;
  return object{{"apiVersion", "apps/v1"},
                {"kind", kind},
                {"metadata", agent::workload_metadata(a, name, t.workload_labels)},
                {"spec", std::move(spec_fields)}};
}

ReplicaGroup replica_group(const GrafanaAgent& a, std::int64_t group, std::int64_t replicas,
                           const ObjectsInput& in, const agent::Options& options) {
  const std::string name = replica_group_name(a.metadata.name, group);
  const std::string service = name + "-cluster";
  const std::string group_text = std::to_string(group);
  Role role;
  role.type = "metrics";
  role.extra_selector[std::string(kReplicaGroupLabel)] = group_text;
  role.config = &in.metrics;
  role.options = agent::data_volume_options(a.spec.storage, name + "-data", kDataDir);
  role.options.env.emplace_back(agent::env_value("REPLICA_GROUP", group_text));
  role.args = array{"--cluster.enabled=true", "--cluster.join-addresses=" + service,
                    "--cluster.name=" + a.metadata.ns + "/" + a.metadata.name + "/" + group_text};
  const Template t = pod_template(a, role, in, options);

  object spec{{"replicas", replicas},
              {"serviceName", service},
              {"podManagementPolicy", "Parallel"},
              {"updateStrategy", object{{"type", "RollingUpdate"}}}};
  if (auto claim = agent::claim_template(a.spec.storage, name + "-data")) {
    spec["volumeClaimTemplates"] = array{std::move(*claim)};
  }
  ReplicaGroup out;
  out.stateful_set = workload(a, "StatefulSet", name, t, std::move(spec));

  Labels service_labels = managed_labels(a);
  service_labels["operated-agent"] = "true";
  const std::string pname = agent::port_name(a);
  out.service = object{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", agent::object_metadata(
                       a, service, agent::merge_operator_labels(service_labels, options), true)},
      {"spec",
       object{{"clusterIP", "None"},
              {"publishNotReadyAddresses", true},
              {"ports", array{object{{"name", pname}, {"port", kPort}, {"targetPort", pname}}}},
              {"selector", agent::labels_json(t.selector)}}}};
  return out;
}

object logs_daemon_set(const GrafanaAgent& a, const ObjectsInput& in,
                       const agent::Options& options) {
  Role role;
  role.type = "logs";
  role.config = &in.logs;
  role.options.privileged = true;
  role.options.env.emplace_back(agent::env_field("NODE_NAME", "spec.nodeName"));
  role.options.env.emplace_back(agent::env_field("HOSTNAME", "spec.nodeName"));
  // The data directory is per root and on the node, so that positions survive a pod
  // restart; the static agent's positions are mounted read-only to be imported once.
  const std::string data =
      "/var/lib/grafana-agent-operator/alloy/" + a.metadata.ns + "/" + a.metadata.name;
  role.options.volumes =
      array{agent::host_path_volume("varlog", "/var/log"),
            agent::host_path_volume("dockerlogs", "/var/lib/docker/containers"),
            agent::host_path_volume("legacy-positions", "/var/lib/grafana-agent/data"),
            object{{"name", "data"},
                   {"hostPath", object{{"path", data}, {"type", "DirectoryOrCreate"}}}}};
  role.options.mounts =
      array{agent::volume_mount("varlog", "/var/log", true),
            agent::volume_mount("dockerlogs", "/var/lib/docker/containers", true),
            agent::volume_mount("legacy-positions", "/var/lib/grafana-agent/data", true),
            agent::volume_mount("data", kDataDir, false)};
  return workload(a, "DaemonSet", a.metadata.name + "-alloy-logs",
                  pod_template(a, role, in, options),
                  object{{"updateStrategy", object{{"type", "RollingUpdate"}}}});
}

object integrations_workload(const GrafanaAgent& a, bool all_nodes, const ObjectsInput& in,
                             const agent::Options& options) {
  const std::string name =
      a.metadata.name + (all_nodes ? "-alloy-integrations-ds" : "-alloy-integrations-deploy");
  Role role;
  role.type = all_nodes ? "integrations-ds" : "integrations-deploy";
  role.config = all_nodes ? &in.integrations_ds : &in.integrations_deploy;
  PodOptions data;
  data.volumes.emplace_back(agent::empty_dir_volume(name + "-data"));
  data.mounts.emplace_back(agent::volume_mount(name + "-data", kDataDir, false));
  role.options = agent::merge_pod_options(
      {agent::integration_pod_options(a, all_nodes ? in.ds_members : in.deploy_members), data});
  role.options.env = array{agent::env_field("HOSTNAME", "spec.nodeName")};
  // What the static backend gives integration pods: unprivileged, except the DaemonSet's
  // under --agent-compat=fixed.
  role.options.privileged = all_nodes && options.compat == agent::Compat::fixed;
  const Template t = pod_template(a, role, in, options);
  if (all_nodes) {
    return workload(a, "DaemonSet", name, t,
                    object{{"updateStrategy", object{{"type", "RollingUpdate"}}}});
  }
  return workload(a, "Deployment", name, t,
                  object{{"strategy", object{{"type", "RollingUpdate"}}}});
}

void root_problems(const GrafanaAgent& a, std::vector<TranslationProblem>& out) {
  auto warn = [&](const std::string& field, const std::string& what) {
    out.push_back({ProblemClass::c, "GrafanaAgent", a.metadata.ns, a.metadata.name, field,
                   field + ": " + what});
  };
  constexpr std::string_view kImage =
      "names a Grafana Agent image (the Alloy pods run the image of --alloy-image or of the "
      "operator.agent.grafana.com/alloy-image annotation)";
  if (a.spec.image && !a.spec.image->empty()) warn("spec.image", std::string(kImage));
  if (!a.spec.version.empty()) warn("spec.version", std::string(kImage));
  if (a.spec.enable_config_read_api) {
    warn("spec.enableConfigReadAPI",
         "has no Alloy equivalent (Alloy's UI and API on port 12345 always show component "
         "arguments, secrets redacted)");
  }
  container_patches(a, &out);
}

}  // namespace

std::string metrics_config_base(std::string_view agent) {
  return std::string(agent) + "-alloy-config";
}
std::string logs_config_base(std::string_view agent) {
  return std::string(agent) + "-alloy-logs-config";
}
std::string integrations_config_base(std::string_view agent, bool all_nodes) {
  return std::string(agent) +
         (all_nodes ? "-alloy-integrations-ds-config" : "-alloy-integrations-deploy-config");
}
std::string replica_group_name(std::string_view agent, std::int64_t group) {
  std::string name = std::string(agent) + "-alloy";
  if (group > 0) name += "-replica-" + std::to_string(group);
  return name;
}

std::string alloy_image(const GrafanaAgent& a, std::string_view flag_image) {
  if (auto it = a.metadata.annotations.find(kImageAnnotation);
      it != a.metadata.annotations.end() && !it->second.empty()) {
    return it->second;
  }
  return std::string(flag_image);
}

AlloyObjects build_objects(const GrafanaAgent& a, const ObjectsInput& in,
                           const agent::Options& options) {
  AlloyObjects out;
  root_problems(a, out.problems);
  out.metrics_secrets = config_secrets(a, in.metrics, options);
  if (!in.metrics.empty()) {
    const std::int64_t shards = std::max<std::int64_t>(a.spec.metrics.shards.value_or(1), 1);
    const std::int64_t replicas = a.spec.metrics.replicas.value_or(1);
    // replicas < 1: one group scaled to zero, as static StatefulSets with 0 replicas.
    const std::int64_t groups = std::max<std::int64_t>(replicas, 1);
    for (std::int64_t r = 0; r < groups; ++r) {
      out.groups.push_back(replica_group(a, r, replicas >= 1 ? shards : 0, in, options));
    }
  }
  out.logs_secrets = config_secrets(a, in.logs, options);
  if (!in.logs.empty()) out.logs = logs_daemon_set(a, in, options);
  out.deploy_secrets = config_secrets(a, in.integrations_deploy, options);
  if (!in.integrations_deploy.empty())
    out.deployment = integrations_workload(a, false, in, options);
  out.ds_secrets = config_secrets(a, in.integrations_ds, options);
  if (!in.integrations_ds.empty()) out.daemon_set = integrations_workload(a, true, in, options);
  return out;
}

std::vector<object> AlloyObjects::in_apply_order() const {
  std::vector<object> out(metrics_secrets.begin(), metrics_secrets.end());
  for (const auto& g : groups) {
    out.push_back(g.service);
    out.push_back(g.stateful_set);
  }
  out.insert(out.end(), logs_secrets.begin(), logs_secrets.end());
  if (logs) out.push_back(*logs);
  out.insert(out.end(), deploy_secrets.begin(), deploy_secrets.end());
  if (deployment) out.push_back(*deployment);
  out.insert(out.end(), ds_secrets.begin(), ds_secrets.end());
  if (daemon_set) out.push_back(*daemon_set);
  return out;
}

}  // namespace aop::alloy
